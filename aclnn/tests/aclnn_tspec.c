/* SPDX-License-Identifier: Apache-2.0 */
#include "aclnn_tspec.h"

size_t dt_size(aclDataType dt) {
  switch (dt) {
    case ACL_INT8:
    case ACL_UINT8:
      return 1;
    case ACL_FLOAT16:
    case ACL_BF16:
    case ACL_INT16:
      return 2;
    case ACL_INT64:
      return 8;
    default:
      return 4;
  }
}

llmk_dtype native_dt(aclDataType dt) {
  switch (dt) {
    case ACL_FLOAT16:
      return LLMK_F16;
    case ACL_BF16:
      return LLMK_BF16;
    case ACL_FLOAT:
      return LLMK_F32;
    case ACL_INT8:
      return LLMK_I8;
    case ACL_INT32:
      return LLMK_I32;
    case ACL_INT64:
      return LLMK_I64;
    default:
      return LLMK_DTYPE_INVALID;
  }
}

/* Contiguous, with `pad` extra elements per row of dim rank-2 (0: none). */
void spec(tspec *s, aclDataType dt, int rank, int64_t d0, int64_t d1, int64_t d2,
          int64_t pad) {
  int64_t d[4] = {d0, d1, d2, 0};
  s->present = true;
  s->dt = dt;
  s->fmt = ACL_FORMAT_ND;
  s->rank = rank;
  int64_t st = 1;
  for (int i = rank - 1; i >= 0; i--) {
    s->dims[i] = d[i];
    s->strides[i] = st;
    st *= d[i] + (i == rank - 1 && rank >= 2 ? pad : 0);
  }
}

void spec4(tspec *s, aclDataType dt, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
  spec(s, dt, 3, d1, d2, d3, 0);
  s->rank = 4;
  for (int i = 2; i >= 0; i--)
    s->dims[i + 1] = s->dims[i], s->strides[i + 1] = s->strides[i];
  s->dims[0] = d0;
  s->strides[0] = d1 * d2 * d3;
}

uint16_t rand_half(aclDataType dt) {
  float f = (float)(tu_rand_unit() * 4.0 - 2.0);
  return dt == ACL_BF16 ? llmk_f32_to_bf16(f) : llmk_f32_to_f16(f);
}

/* Allocates the block (the view's span), fills it, copies it to device memory. */
void build(tspec *s) {
  if (!s->present) return;
  size_t es = dt_size(s->dt);
  int64_t last = 0, n = 1;
  for (int i = 0; i < s->rank; i++)
    last += (s->dims[i] - 1) * s->strides[i], n *= s->dims[i];
  s->bytes = (size_t)(n ? last + 1 : 1) * es;
  s->host = malloc(s->bytes);
  for (size_t i = 0; i < s->bytes / es; i++) {
    if (es == 2) {
      uint16_t h = rand_half(s->dt == ACL_BF16 ? ACL_BF16 : ACL_FLOAT16);
      memcpy(s->host + i * 2, &h, 2);
    } else {
      for (size_t b = 0; b < es; b++) s->host[i * es + b] = (unsigned char)tu_rand_u64();
    }
  }
  if (s->ivals) {
    for (int64_t k = 0; k < n; k++) {
      int64_t off = 0, r = k;
      for (int i = s->rank - 1; i >= 0; i--)
        off += (r % s->dims[i]) * s->strides[i], r /= s->dims[i];
      int64_t v = s->ivals[k];
      if (es == 8)
        memcpy(s->host + off * 8, &v, 8);
      else if (es == 4) {
        int32_t w = (int32_t)v;
        memcpy(s->host + off * 4, &w, 4);
      } else if (es == 2) {
        int16_t w = (int16_t)v;
        memcpy(s->host + off * 2, &w, 2);
      } else {
        int8_t w = (int8_t)v;
        memcpy(s->host + off, &w, 1);
      }
    }
  }
  s->ref = malloc(s->bytes);
  memcpy(s->ref, s->host, s->bytes);
  aclrtMalloc(&s->dev, s->bytes, ACL_MEM_MALLOC_HUGE_FIRST);
  aclrtMemcpy(s->dev, s->bytes, s->host, s->bytes, ACL_MEMCPY_HOST_TO_DEVICE);
  s->t = aclCreateTensor(s->dims, (uint64_t)s->rank, s->dt, s->strides, 0, s->fmt,
                         s->dims, (uint64_t)s->rank, s->dev);
}

void unbuild(tspec *s) {
  aclDestroyTensor(s->t);
  if (s->dev) aclrtFree(s->dev);
  free(s->host);
  free(s->ref);
  s->t = NULL, s->dev = NULL, s->host = s->ref = NULL;
}

/* The device block equals `want` (host or ref). */
int dev_is(const tspec *s, const unsigned char *want) {
  if (!s->present) return 1;
  unsigned char *d = malloc(s->bytes);
  aclrtMemcpy(d, s->bytes, s->dev, s->bytes, ACL_MEMCPY_DEVICE_TO_HOST);
  int ok = memcmp(d, want, s->bytes) == 0;
  free(d);
  return ok;
}

/* The native descriptor of s over its `ref` copy (or over `data`). */
const llmk_tensor *ndesc(const tspec *s, llmk_tensor *out) {
  if (!s->present) return NULL;
  llmk_tensor_init(out, native_dt(s->dt), s->rank, s->dims, s->strides, s->ref);
  return out;
}

/* ------------------------------------------------------------- programs */

void *dev_copy(const void *host, size_t n) {
  void *d = NULL;
  aclrtMalloc(&d, n, ACL_MEM_MALLOC_HUGE_FIRST);
  aclrtMemcpy(d, n, host, n, ACL_MEMCPY_HOST_TO_DEVICE);
  return d;
}

void acl_test_begin(acl_test *t, uint64_t seed, int threads) {
  tu_seed(seed);
  t->stream = NULL;
  t->ctx = NULL;
  EQ(aclInit(NULL), ACL_SUCCESS);
  EQ(aclrtSetDevice(0), ACL_SUCCESS);
  EQ(aclrtCreateStream(&t->stream), ACL_SUCCESS);
  if (threads > 0) EQ(llmk_context_create(threads, &t->ctx), LLMK_SUCCESS);
}

int acl_test_end(acl_test *t, const char *name) {
  llmk_context_destroy(t->ctx);
  EQ(aclrtDestroyStream(t->stream), ACL_SUCCESS);
  EQ(aclrtResetDevice(0), ACL_SUCCESS);
  EQ(aclFinalize(), ACL_SUCCESS);
  return tu_finish(name);
}
