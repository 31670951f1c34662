/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal test harness shared by every test program: checks that count failures,
 * a seeded RNG whose seed is printed, and buffers with guard bytes. */
#ifndef LLMK_TEST_UTIL_H
#define LLMK_TEST_UTIL_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern long tu_checks, tu_failures;

#define TU_CHECK(cond, ...)                                             \
  do {                                                                  \
    tu_checks++;                                                        \
    if (!(cond)) {                                                      \
      tu_failures++;                                                    \
      if (tu_failures <= 50) {                                          \
        fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
        fprintf(stderr, __VA_ARGS__);                                   \
        fputc('\n', stderr);                                            \
      }                                                                 \
    }                                                                   \
  } while (0)

/* Prints "<name>: N passed, N failed" and returns the exit code for main(). */
/* The llmk_isa values (scalar, avx2, avx512, neon), and whether one is of the
 * architecture the tests run on (another architecture's ISA caps to scalar). */
#define TU_NUM_ISAS 4
#if defined(__aarch64__)
#define TU_ISA_HERE(isa) ((int)(isa) == 0 || (int)(isa) == 3)
#else
#define TU_ISA_HERE(isa) ((int)(isa) != 3)
#endif

int tu_finish(const char *name);

/* xoshiro256** seeded from the environment variable LLMK_TEST_SEED if set, else
 * from `default_seed`; the seed is printed so a failure can be replayed. */
void tu_seed(uint64_t default_seed);
uint64_t tu_rand_u64(void);
/* Uniform in [lo, hi] (inclusive). */
int64_t tu_rand_range(int64_t lo, int64_t hi);
double tu_rand_unit(void); /* [0, 1) */
/* Seconds of a monotonic-enough wall clock, for the tests' progress lines. */
double tu_now(void);
/* Special f32 values by index, for kernels' edge cases: 0 NaN (quiet, positive), 1 +inf,
 * 2 -inf, 3 -0, 4 a random subnormal, 5 +0, 6 a random finite value up to 3e38 in
 * magnitude; TU_SPECIALS of them. */
#define TU_SPECIALS 7
float tu_special_f32(int which);

/* A buffer of `size` bytes between two guard zones filled with a fixed non-zero
 * pattern. tu_buf_check() reports whether both guard zones are intact. */
typedef struct tu_buf {
  unsigned char *base; /* allocation */
  void *data;          /* the usable bytes */
  size_t size;
} tu_buf;
#define TU_GUARD 64
tu_buf tu_buf_alloc(size_t size);
int tu_buf_check(const tu_buf *b); /* 1 = intact */
void tu_buf_free(tu_buf *b);

#endif
