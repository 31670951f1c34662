/* SPDX-License-Identifier: Apache-2.0 */
/* Small helpers shared by the references (tests/ref) and the tests: the element size of
 * each llmk dtype, and element loads / stores by width, written from the formats (a
 * dtype is its bytes in host order), independent of the library's kernels. */
#ifndef LLMK_TEST_REF_UTIL_H
#define LLMK_TEST_REF_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "llmk/llmk.h"

/* Bytes of one element; 0 for an invalid dtype. */
size_t ref_dtype_size(llmk_dtype dt);

/* The bits of element `elem` of an array of `es`-byte elements (es 1, 2, 4 or 8),
 * zero-extended; and the store of the low es bytes of `bits`. */
uint64_t ref_load_bits(const void *base, int64_t elem, size_t es);
void ref_store_bits(void *base, int64_t elem, size_t es, uint64_t bits);

/* An index element: LLMK_I32 (sign-extended) or LLMK_I64. */
int64_t ref_load_index(const void *base, int64_t elem, llmk_dtype dt);
/* The spacing of f32, f16 or bf16 values at magnitude |v| (subnormal spacing below the
 * smallest normal), for tolerances stated in ulps. */
double ref_ulp(llmk_dtype dt, double v);

#endif
