/* SPDX-License-Identifier: Apache-2.0 */
/* Walking an op's kernel list in the kernel tests: every table of the list, scalar first
 * (so that it is checked too, against itself and wherever a test checks definitions),
 * each table the CPU cannot run skipped with a line that says so. */
#ifndef LLMK_TEST_KERNEL_LIST_H
#define LLMK_TEST_KERNEL_LIST_H

#include <stdio.h>

#include "dispatch/dispatch.h"
#include "llmk/llmk.h"
#include "test_util.h"

/* Calls check(table) for each table of `list` this CPU runs, lowest ISA first; the
 * scalar table is the list's last one (checked). Returns how many SIMD tables ran. */
static inline int kl_each(const llmk__kernel_list *list,
                          void (*check)(const void *table)) {
  const llmk_isa native = llmk_get_native_isa();
  const void *scalar = list->tables[list->count - 1];
  TU_CHECK(llmk__kernels_isa(scalar) == LLMK_ISA_SCALAR,
           "%s: last table is %s, not scalar", list->name,
           llmk_isa_name(llmk__kernels_isa(scalar)));
  int simd = 0;
  for (int i = list->count - 1; i >= 0; i--) {
    const void *t = list->tables[i];
    llmk_isa isa = llmk__kernels_isa(t);
    if (isa > native) {
      printf("%s: skipping the %s table: this CPU runs up to %s\n", list->name,
             llmk_isa_name(isa), llmk_isa_name(native));
      continue;
    }
    printf("%s: checking %s against scalar%s\n", list->name, llmk_isa_name(isa),
           t == scalar ? " (itself)" : "");
    check(t);
    simd += t != scalar;
  }
  if (list->count == 1)
    printf(
        "%s: only the scalar table is built (no SIMD variants): compared with itself\n",
        list->name);
  else if (!simd)
    printf("%s: no SIMD table runs on this CPU: scalar compared with itself only\n",
           list->name);
  return simd;
}

#endif
