/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reference decoders and encoders for the narrow float types, written from the
 * format definitions only (fields, bias, value formula evaluated in double), so that
 * they share no bit tricks with the library they check.
 */
#ifndef LLMK_CONVERT_REF_H
#define LLMK_CONVERT_REF_H

#include <stddef.h>
#include <stdint.h>

typedef enum ref_fmt {
  REF_F16 = 0,        /* 1-5-10, bias 15, IEEE */
  REF_BF16 = 1,       /* 1-8-7, bias 127, IEEE */
  REF_FP8_E4M3FN = 2, /* 1-4-3, bias 7, no inf, NaN = S.1111.111 */
  REF_FP8_E5M2 = 3,   /* 1-5-2, bias 15, IEEE-like */
  REF_FMT_COUNT = 4
} ref_fmt;

const char *ref_fmt_name(ref_fmt fmt);
int ref_fmt_bits(ref_fmt fmt); /* total width: 16 or 8 */
uint32_t ref_sign_mask(ref_fmt fmt);

/* The exact value of a code; NaN codes give a NaN with the code's sign. */
double ref_decode(ref_fmt fmt, uint32_t bits);
int ref_is_nan(ref_fmt fmt, uint32_t bits);
/* NaN whose "quiet" bit (top mantissa bit) is set; e4m3fn has a single NaN per sign,
 * which counts as quiet. */
int ref_is_quiet_nan(ref_fmt fmt, uint32_t bits);

/* f32 -> code: nearest representable value, ties to the code with even mantissa LSB.
 * Overflow: f16 / bf16 round to inf as IEEE does; fp8 saturates to +-max (inf
 * included). NaN -> a quiet NaN code of the same sign. */
uint32_t ref_encode(ref_fmt fmt, float f);

/* The non-negative finite values of a format in ascending order (0 first, max last)
 * with their codes, for tests that walk every representable value. */
size_t ref_value_count(ref_fmt fmt);
double ref_value_at(ref_fmt fmt, size_t i);
uint32_t ref_code_at(ref_fmt fmt, size_t i);
double ref_max(ref_fmt fmt);
double ref_min_subnormal(ref_fmt fmt);

#endif
