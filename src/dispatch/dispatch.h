/* SPDX-License-Identifier: Apache-2.0 */
/* CPU features and the kernel lists. Each op has one list of kernel tables, one table
 * per ISA variant, declared by its kernel header with LLMK__KERNEL_LIST and defined in
 * dispatch/kernels.c. An op picks the table of the ISA in force when its plan is created
 * and stores the pointer in the plan; llmk info, the kernel tests and the benchmarks walk
 * the same lists. */
#ifndef LLMK_DISPATCH_H
#define LLMK_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llmk/types.h"

typedef struct llmk__cpu_info {
  bool avx2, fma, f16c;
  bool avx512f, avx512bw, avx512vl, avx512dq, avx512bf16, avx512fp16;
  bool asimd, asimdhp, bf16, sve; /* aarch64, from the auxiliary vector */
} llmk__cpu_info;

const llmk__cpu_info *llmk__cpu(void);
/* Online CPUs; and the CPUs this process may run on (its affinity mask). */
int llmk__cpu_count(void);
int llmk__cpu_allowed(void);
/* The size of the last cache level (from sysfs, else sysconf, else 32 MiB), found once.
 */
size_t llmk__last_cache_bytes(void);

/* ------------------------------------------------------------- kernel lists */

/* Variant lists name only the ISAs this build compiles. */
#if defined(LLMK_HAVE_AVX512)
#define LLMK__IF_AVX512(x) x
#else
#define LLMK__IF_AVX512(x)
#endif
#if defined(LLMK_HAVE_AVX2)
#define LLMK__IF_AVX2(x) x
#else
#define LLMK__IF_AVX2(x)
#endif
#if defined(LLMK_HAVE_NEON)
#define LLMK__IF_NEON(x) x
#else
#define LLMK__IF_NEON(x)
#endif

/* An op's kernel tables, highest ISA first, scalar last. Every table type begins with
 * `llmk_isa isa;`: the ISA it needs. */
typedef struct llmk__kernel_list {
  const char *name;          /* the ops that use it, as llmk info prints them */
  const void *const *tables; /* each a table of the list's type */
  int count;
} llmk__kernel_list;

/* The first table of the list whose ISA is at most `isa` (the scalar table at least). */
const void *llmk__kernels_pick(const llmk__kernel_list *list, llmk_isa isa);
/* The ISA a table needs. */
static inline llmk_isa llmk__kernels_isa(const void *table) {
  return *(const llmk_isa *)table;
}

/* Every list, in the order llmk info prints them. */
extern const llmk__kernel_list *const llmk__kernel_lists[];
extern const int llmk__kernel_list_count;

/* In a kernel header, after VARIANTS(X) (X(prefix, isa) for each variant, highest ISA
 * first, e.g. LLMK__IF_AVX2(X(kv, avx2)) X(kv, scalar)): declares the tables
 * llmk__<prefix>_kernels_<isa> of type llmk__<prefix>_kernels, the list
 * llmk__<prefix>_kernel_list and llmk__<prefix>_kernels_for(isa). */
#define LLMK__DECLARE_KERNEL_TABLE(prefix, isa) \
  extern const llmk__##prefix##_kernels llmk__##prefix##_kernels_##isa;
#define LLMK__KERNEL_LIST(prefix, VARIANTS)                                   \
  VARIANTS(LLMK__DECLARE_KERNEL_TABLE)                                        \
  extern const llmk__kernel_list llmk__##prefix##_kernel_list;                \
  static inline const llmk__##prefix##_kernels *llmk__##prefix##_kernels_for( \
      llmk_isa isa) {                                                         \
    return (const llmk__##prefix##_kernels *)llmk__kernels_pick(              \
        &llmk__##prefix##_kernel_list, isa);                                  \
  }

#endif
