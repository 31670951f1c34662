/* SPDX-License-Identifier: Apache-2.0 */
/* A set of pointers (the live plans, and the aclnn layer's live handles), so that a
 * stale or foreign handle is recognised without touching the memory it points to.
 * Not thread-safe: callers lock. A zeroed llmk__ptrset is an empty set. */
#ifndef LLMK_CORE_PTRSET_H
#define LLMK_CORE_PTRSET_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" { /* the aclnn layer's C++ part uses it too */
#endif

typedef struct llmk__ptrset {
  const void **slots;
  size_t cap, used, live;
} llmk__ptrset;

/* false: out of memory (the set is unchanged) */
bool llmk__ptrset_insert(llmk__ptrset *s, const void *p);
bool llmk__ptrset_contains(const llmk__ptrset *s, const void *p);
/* false: p was not in the set */
bool llmk__ptrset_remove(llmk__ptrset *s, const void *p);
void llmk__ptrset_clear(llmk__ptrset *s);

#ifdef __cplusplus
}
#endif

#endif
