/* SPDX-License-Identifier: Apache-2.0 */
#include "test_util.h"

#include <math.h>
#include <time.h>

long tu_checks, tu_failures;
static uint64_t tu_state[4];

int tu_finish(const char *name) {
  printf("%s: %ld passed, %ld failed\n", name, tu_checks - tu_failures, tu_failures);
  return tu_failures ? 1 : 0;
}

static uint64_t splitmix(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void tu_seed(uint64_t default_seed) {
  uint64_t seed = default_seed;
  const char *env = getenv("LLMK_TEST_SEED");
  if (env && *env) seed = strtoull(env, NULL, 0);
  printf("seed %" PRIu64 " (set LLMK_TEST_SEED to replay)\n", seed);
  for (int i = 0; i < 4; i++) tu_state[i] = splitmix(&seed);
}

static uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

uint64_t tu_rand_u64(void) {
  uint64_t *s = tu_state;
  uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return r;
}

int64_t tu_rand_range(int64_t lo, int64_t hi) {
  uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
  if (span == 0) return (int64_t)tu_rand_u64();
  return (int64_t)((uint64_t)lo + tu_rand_u64() % span);
}

double tu_rand_unit(void) {
  return (double)(tu_rand_u64() >> 11) * 0x1.0p-53;
}

static unsigned char guard_byte(size_t i) {
  return (unsigned char)(0xA5 ^ (i * 37));
}

tu_buf tu_buf_alloc(size_t size) {
  tu_buf b;
  b.size = size;
  b.base = malloc(size + 2 * TU_GUARD);
  if (!b.base) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  for (size_t i = 0; i < TU_GUARD; i++) {
    b.base[i] = guard_byte(i);
    b.base[TU_GUARD + size + i] = guard_byte(i + TU_GUARD);
  }
  b.data = b.base + TU_GUARD;
  memset(b.data, 0, size);
  return b;
}

int tu_buf_check(const tu_buf *b) {
  for (size_t i = 0; i < TU_GUARD; i++) {
    if (b->base[i] != guard_byte(i)) return 0;
    if (b->base[TU_GUARD + b->size + i] != guard_byte(i + TU_GUARD)) return 0;
  }
  return 1;
}

void tu_buf_free(tu_buf *b) {
  free(b->base);
  b->base = NULL;
  b->data = NULL;
}

float tu_special_f32(int which) {
  static const float fixed[4] = {NAN, INFINITY, -INFINITY, -0.0f};
  if (which >= 0 && which < 4) return fixed[which];
  if (which == 4) {
    uint32_t u = (uint32_t)tu_rand_range(1, 0x7fffff);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
  }
  if (which == 5) return 0.0f;
  return (float)((tu_rand_unit() - 0.5) * 6e38);
}

double tu_now(void) {
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
