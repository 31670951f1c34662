/* SPDX-License-Identifier: Apache-2.0 */
/* Shared pieces of the libFuzzer targets (tests/fuzz/README.md): a byte reader, tensor
 * descriptors decoded from bytes and backed by allocations of exactly the bytes they
 * span, index contents biased to the edges, and the run helper that checks the
 * two-phase contract (refusal writes nothing; success gives the same bytes for every
 * ISA and for 1 and 2 threads). Every check failure prints what differed and aborts. */
#ifndef LLMK_FUZZ_COMMON_H
#define LLMK_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "llmk/llmk.h"

/* ------------------------------------------------------------------ reader */

typedef struct fz_reader {
  const uint8_t *p;
  size_t n, i;
} fz_reader;

/* Past the end every read gives 0 bytes. */
uint8_t fz_u8(fz_reader *r);
uint64_t fz_u64(fz_reader *r);
bool fz_bool(fz_reader *r);
/* lo + (one byte, or two when the range is wider than 256) mod (hi - lo + 1). */
int64_t fz_range(fz_reader *r, int64_t lo, int64_t hi);
/* An extent, stride or attribute biased to the edges. One tag byte t:
 *   t < 0xC0: t & 15;  0xC0..0xDF: 16 + next byte;  0xE0..0xEF: next two bytes (LE);
 *   0xF0..0xFE: fz_special[t - 0xF0];  0xFF: next eight bytes (LE). */
int64_t fz_int(fz_reader *r);
extern const int64_t fz_special[15];
/* An index value for a valid range [0, hi): one tag byte t:
 *   t < 0xB0: hi > 0 ? t % hi : t;  0xB0..0xBF: -1;  0xC0..0xCF: hi;  else fz_int. */
int64_t fz_index(fz_reader *r, int64_t hi);

/* ----------------------------------------------------------------- tensors */

#define FZ_MAX_TENSORS 24
#define FZ_MAX_BUFS 24
/* Descriptors spanning more bytes than this get a small stand-in buffer (the run
 * helper then stops after phase 1). */
#define FZ_MAX_BYTES ((size_t)1 << 20)

typedef struct fz_tensor {
  llmk_tensor t;
  int buf;       /* allocation index, -1 for none */
  bool overflow; /* the span overflows int64 / SIZE_MAX/2: phase 1 must refuse */
  bool big;      /* valid span too large to allocate: stand-in buffer */
} fz_tensor;

/* Optional allocator (the aclnn target: aclrtMalloc). alloc returns the block of `n`
 * bytes (possibly rounded up: *n_out), free releases it. */
typedef void *(*fz_alloc_fn)(size_t n, size_t *n_out);
typedef void (*fz_free_fn)(void *p);
void fz_set_allocator(fz_alloc_fn a, fz_free_fn f);

/* Starts one input: frees the previous input's buffers. */
void fz_begin(void);
/* Decodes one tensor: dtype (dtypes[byte % ndt], now and then an invalid one), a
 * perturbation of the given shape (one extent from fz_int, or another rank), strides
 * (contiguous, padded, column-major, one stride 0, or each from fz_int), the data
 * (its own exact allocation, a view into an earlier tensor's buffer, or NULL) and the
 * contents (fz_fill). Returns &ft->t. */
llmk_tensor *fz_tensor_new(fz_reader *r, fz_tensor *ft, const llmk_dtype *dtypes, int ndt,
                           int rank, const int64_t *shape);
/* NULL (optional tensor left out) when the next byte is odd-valued by `absent_mod`:
 * byte % absent_mod == 0 gives NULL. */
llmk_tensor *fz_tensor_opt(fz_reader *r, fz_tensor *ft, const llmk_dtype *dtypes, int ndt,
                           int rank, const int64_t *shape, int absent_mod);
int64_t fz_numel(const llmk_tensor *t);
/* Element `lin` in row-major order of the view, as a byte pointer; NULL if the tensor
 * has no allocation (big / overflow). */
void *fz_elem(const fz_tensor *ft, int64_t lin);
/* Index contents: each logical element (the first 4096) from fz_index(r, hi). */
void fz_fill_index(fz_reader *r, fz_tensor *ft, int64_t hi);
/* Stores an integer (i32/i64 tensors) or a float (f32/f16/bf16/fp8: as float). */
void fz_set_int(fz_tensor *ft, int64_t lin, int64_t v);
void fz_set_float(fz_tensor *ft, int64_t lin, float v);

/* ------------------------------------------------------------------ runner */

/* One call: phase 1 with the ISA cap in force, phase 2 on `which` (0: no context / the
 * default stream, 1: one thread, 2: two threads). Status 0 is success. */
typedef struct fz_op {
  int (*plan)(void *arg, size_t *ws, void **plan);
  int (*exec)(void *arg, void *ws, size_t n, void *plan, int which);
  void (*destroy)(void *arg, void *plan); /* an accepted plan that is not run */
  void *arg;
  const char *name;
} fz_op;

/* The full check: phase 1 (scalar); on refusal all buffers unchanged. Then (sometimes,
 * from one byte) a run with a workspace one byte short, which must be refused and write
 * nothing; then the exact workspace. A refused phase 2 must leave every buffer as it
 * was; after a success every other ISA of this CPU, with 1 and 2 threads, must give the
 * same bytes in every buffer. Returns phase 2's status (-1: phase 1 refused or not run).
 */
int fz_run(fz_reader *r, const fz_op *op);
/* The native ops' contexts. */
llmk_context *fz_ctx(int which);
/* True if some tensor of this input is a stand-in (big) or overflows. */
bool fz_any_overflow(void);

/* The block a tensor's data lies in (NULL if none). */
void *fz_block_of(const fz_tensor *ft);
/* Snapshot of every buffer, and the check that none changed since. */
void fz_snapshot(void);
void fz_check_unchanged(const char *op, const char *what);

/* Prints and aborts. */
void fz_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* What every native target's fz_op shares: its destroy (llmk_plan_destroy) and, from
 * the op's run, its exec on the context `which` (fz_ctx). */
void fz_plan_destroy(void *arg, void *plan);
#define FZ_NATIVE_EXEC(name, run)                                         \
  static int name(void *arg, void *ws, size_t n, void *plan, int which) { \
    (void)arg;                                                            \
    return run(ws, n, plan, fz_ctx(which));                               \
  }

#endif
