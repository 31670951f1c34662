/* SPDX-License-Identifier: Apache-2.0 */
/* Sets of live handles: open addressing with linear probing and tombstones. */
#include "core/ptrset.h"

#include <stdint.h>
#include <stdlib.h>

static const char tomb_marker;
#define TOMB ((const void *)&tomb_marker)

static size_t hash_ptr(const void *p, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x & (cap - 1);
}

static bool grow(llmk__ptrset *s) {
  size_t cap = s->cap ? s->cap : 32;
  while (s->live * 4 + 4 > cap) cap *= 2;
  const void **slots = calloc(cap, sizeof *slots);
  if (!slots) return false;
  for (size_t i = 0; i < s->cap; i++) {
    const void *p = s->slots[i];
    if (!p || p == TOMB) continue;
    size_t j = hash_ptr(p, cap);
    while (slots[j]) j = (j + 1) & (cap - 1);
    slots[j] = p;
  }
  free(s->slots);
  s->slots = slots;
  s->cap = cap;
  s->used = s->live;
  return true;
}

bool llmk__ptrset_contains(const llmk__ptrset *s, const void *p) {
  if (!s->cap || !p) return false;
  for (size_t i = hash_ptr(p, s->cap);; i = (i + 1) & (s->cap - 1)) {
    if (s->slots[i] == p) return true;
    if (!s->slots[i]) return false;
  }
}

bool llmk__ptrset_insert(llmk__ptrset *s, const void *p) {
  if ((s->used + 1) * 2 > s->cap && !grow(s)) return false;
  size_t i = hash_ptr(p, s->cap);
  while (s->slots[i] && s->slots[i] != TOMB) i = (i + 1) & (s->cap - 1);
  if (!s->slots[i]) s->used++;
  s->slots[i] = p;
  s->live++;
  return true;
}

bool llmk__ptrset_remove(llmk__ptrset *s, const void *p) {
  if (!s->cap || !p) return false;
  for (size_t i = hash_ptr(p, s->cap);; i = (i + 1) & (s->cap - 1)) {
    if (s->slots[i] == p) {
      s->slots[i] = TOMB;
      s->live--;
      return true;
    }
    if (!s->slots[i]) return false;
  }
}

void llmk__ptrset_clear(llmk__ptrset *s) {
  free(s->slots);
  s->slots = NULL;
  s->cap = s->used = s->live = 0;
}
