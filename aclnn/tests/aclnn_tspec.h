/* SPDX-License-Identifier: Apache-2.0 */
/* The aclnn tests' tensors: a tspec describes one aclTensor (dtype, dims, strides),
 * build() makes its host block (random floats or the given index values), a copy for
 * the native API (ref) and the device copy; dev_is() compares the device block with a
 * host one, byte for byte (the "nothing written" check of a refused call); ndesc()
 * gives the native llmk_tensor over the ref copy. acl_test_begin() / acl_test_end():
 * the start and the end of every aclnn test program (runtime, device, stream, an
 * optional native context, the final count). Shared by all the aclnn tests; counts
 * checks through the harness (harness.h, test_util.h). */
#ifndef LLMK_ACLNN_TEST_TSPEC_H
#define LLMK_ACLNN_TEST_TSPEC_H

#include <llmk/llmk.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "harness.h"

#define EQ(a, b)                                                                  \
  TU_CHECK((long long)(a) == (long long)(b), "%lld != %lld (%s)", (long long)(a), \
           (long long)(b), aclGetRecentErrMsg())

/* ------------------------------------------------------------ tensor specs */
#define MAXV 4096
typedef struct tspec {
  bool present;
  aclDataType dt;
  aclFormat fmt;
  int rank;
  int64_t dims[4], strides[4];
  int64_t
      *ivals;   /* index tensors: values in row-major view order (NULL: random floats) */
  size_t bytes; /* block size */
  unsigned char *host; /* the expected block contents */
  unsigned char *ref;  /* the native API's copy */
  void *dev;
  aclTensor *t;
} tspec;

size_t dt_size(aclDataType dt);
llmk_dtype native_dt(aclDataType dt);
void spec(tspec *s, aclDataType dt, int rank, int64_t d0, int64_t d1, int64_t d2,
          int64_t pad);
void spec4(tspec *s, aclDataType dt, int64_t d0, int64_t d1, int64_t d2, int64_t d3);
uint16_t rand_half(aclDataType dt);
void build(tspec *s);
void unbuild(tspec *s);
int dev_is(const tspec *s, const unsigned char *want);
const llmk_tensor *ndesc(const tspec *s, llmk_tensor *out);

/* ------------------------------------------------------------- programs */
/* A device block holding a copy of n host bytes. */
void *dev_copy(const void *host, size_t n);

typedef struct acl_test {
  aclrtStream stream;
  llmk_context *ctx; /* NULL unless asked for */
} acl_test;
/* tu_seed(seed), aclInit, device 0, a stream and (threads > 0) a native context. */
void acl_test_begin(acl_test *t, uint64_t seed, int threads);
/* The context and the stream destroyed, the device reset, aclFinalize; tu_finish(name).
 */
int acl_test_end(acl_test *t, const char *name);

#endif
