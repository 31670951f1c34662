/* SPDX-License-Identifier: Apache-2.0 */
/* scatter_pa_kv_cache: the spec's two samples, random cases for every layout against
 * tests/ref/scatter_pa_kv_cache_ref.c (bit copies of every element size, fp8 conversions
 * with per-tensor and per-head scales, strided and fused sources, padded / permuted /
 * shared caches, padding slots, i32 and i64 strided slot_mapping), duplicate slots, an
 * error table, workspace and plan checks, and byte-identical results for every ISA and
 * thread count. Whole buffers are compared, guard zones and gaps included. */
#include <float.h>
#include <math.h>
#include <time.h>

#include "convert_ref.h"
#include "harness.h"
#include "llmk/llmk.h"
#include "scatter_pa_kv_cache_ref.h"

/* Under AddressSanitizer every copy and compare is slower: 300 random cases instead of
 * 400 and fewer 2-thread repetitions of the duplicate-slot cases. */
#if defined(__SANITIZE_ADDRESS__)
#define SLOW 1
#else
#define SLOW 0
#endif

/* The spec gives each cache its own dtype rule (key_cache = key or fp8, value_cache =
 * value or fp8), so a key cache and a value cache of different dtypes are valid; 0
 * expects INVALID_DTYPE for them instead (if the header comes to require equal cache
 * dtypes). The error table's "mixed caches" rows depend on it. */
#ifndef KV_MIXED_CACHE_DTYPES
#define KV_MIXED_CACHE_DTYPES 1
#endif

static int64_t cdiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

/* ------------------------------------------------------------------ cases */

enum { X_KEY, X_VAL, X_KC, X_VC, X_SLOT, X_KS, X_VS, X_COUNT };
static const char *const xname[X_COUNT] = {
    "key", "value", "key_cache", "value_cache", "slot_mapping", "k_scale", "v_scale"};
#define M(k) (1u << (k))

enum { SCL_NONE, SCL_RANK0, SCL_ONE, SCL_HEAD };
static const char *const scl_name[] = {"none", "[]", "[1]", "[H]"};

enum { SRC_CONTIG, SRC_FUSED, SRC_HEADMAJOR, SRC_STRIDE2, SRC_BCAST };
static const char *const src_name[] = {"contiguous", "fused qkv view",
                                       "head-major padded", "element stride 2",
                                       "token stride 0"};

/* BLOCKS takes every kind; x-split and NZ the first three. */
enum {
  CK_CONTIG,
  CK_PADDED,
  CK_PERM,
  CK_HND,
  CK_SHARED_BLOCK,
  CK_SHARED_HEAD,
  CK_STRIDE2
};
static const char *const ck_name[] = {"contiguous",
                                      "padded",
                                      "blocks not outermost",
                                      "HND strides",
                                      "K/V in one buffer per block",
                                      "K/V interleaved per head",
                                      "element stride 2"};
static const char *const layout_name[] = {"blocks", "xsplit", "nz"};

enum { VAL_BITS, VAL_CONV, VAL_ZERO };

#define MAXH 16
typedef struct sc_case {
  int layout;
  llmk_dtype sdt, kcdt, vcdt, slotdt;
  llmk_dtype vsdt; /* value's dtype when it differs from key's (0: sdt) */
  int64_t T, H, Dk, Dv, nb, bs;
  int has_v;
  int kscl, vscl;
  int64_t scl_stride;
  float ks[MAXH], vs[MAXH];
  int src_kind, cache_kind, vals;
  int64_t slot_stride;
  int64_t *slots; /* T values */
  uint64_t seed;  /* buffer contents */
} sc_case;

/* The value source's dtype: sdt unless the case gives value one of its own. */
static llmk_dtype val_dt(const sc_case *c) {
  return c->vsdt ? c->vsdt : c->sdt;
}

static void case_free(sc_case *c) {
  free(c->slots);
  c->slots = NULL;
}

static void case_label(const sc_case *c, char *buf, size_t n, const char *prefix) {
  snprintf(buf, n,
           "%s (%s/%s, %s/%s->%s/%s, T=%" PRId64 " H=%" PRId64 " Dk=%" PRId64
           " Dv=%" PRId64 "%s nb=%" PRId64 " bs=%" PRId64
           ", src %s, slots %s stride %" PRId64 ", scales %s/%s)",
           prefix, layout_name[c->layout], ck_name[c->cache_kind],
           llmk_dtype_name(c->sdt), llmk_dtype_name(val_dt(c)), llmk_dtype_name(c->kcdt),
           llmk_dtype_name(c->vcdt), c->T, c->H, c->Dk, c->Dv, c->has_v ? "" : " K-only",
           c->nb, c->bs, src_name[c->src_kind], llmk_dtype_name(c->slotdt),
           c->slot_stride, scl_name[c->kscl], scl_name[c->vscl]);
}

/* ------------------------------------------------------------- tensor sets */

/* The tensors of one call over up to X_COUNT buffers (fused sources and shared caches
 * are several views of one buffer). map[j]: the reference's NaN map of buffer j. */
typedef struct tset {
  int nbuf;
  tu_buf buf[X_COUNT];
  unsigned char *map[X_COUNT];
  int bi[X_COUNT];     /* buffer of each tensor; -1: not built */
  size_t off[X_COUNT]; /* byte offset of its data in the buffer */
  llmk_tensor t[X_COUNT];
  int built[X_COUNT], pass[X_COUNT];
  int layout;
  int dirty; /* a run changed bytes outside the caches: restore everything */
} tset;

static void set_desc(llmk_tensor *t, llmk_dtype dt, int rank, const int64_t *shape,
                     const int64_t *strides) {
  memset(t, 0, sizeof *t);
  t->dtype = dt;
  t->rank = rank;
  for (int k = 0; k < rank; k++) {
    t->shape[k] = shape[k];
    t->strides[k] = strides[k];
  }
}

static size_t span_bytes(const llmk_tensor *t) {
  int64_t last = 0;
  for (int k = 0; k < t->rank; k++) {
    if (t->shape[k] == 0) return 0;
    last += (t->shape[k] - 1) * t->strides[k];
  }
  return (size_t)(last + 1) * kvref_esize(t->dtype);
}

static void add_tensor(tset *s, size_t *bufsz, int k, int buf, size_t off) {
  if (buf < 0) buf = s->nbuf++;
  s->bi[k] = buf;
  s->off[k] = off;
  s->built[k] = s->pass[k] = 1;
  size_t end = off + span_bytes(&s->t[k]);
  if (end > bufsz[buf]) bufsz[buf] = end;
}

static void src_desc(llmk_tensor *t, llmk_dtype dt, int kind, int64_t T, int64_t H,
                     int64_t D, int64_t R) {
  int64_t sh[3] = {T, H, D}, st[3] = {H * D, D, 1};
  switch (kind) {
    case SRC_FUSED:
      st[0] = R;
      break;
    case SRC_HEADMAJOR:
      st[0] = D + 3;
      st[1] = T * (D + 3);
      break;
    case SRC_STRIDE2:
      st[1] = 2 * D + 1;
      st[0] = H * st[1] + 5;
      st[2] = 2;
      break;
    case SRC_BCAST:
      st[0] = 0;
      break;
    default:
      break;
  }
  set_desc(t, dt, 3, sh, st);
}

/* A cache of one layout and kind (the shared kinds are handled by the caller). An
 * x or ld that does not divide gives the rounded-up shape (error rows only). */
static void cache_desc(llmk_tensor *t, llmk_dtype dt, int layout, int is_value, int kind,
                       int64_t nb, int64_t bs, int64_t H, int64_t D) {
  const int64_t ce = (int64_t)kvref_esize(dt);
  int64_t sh[5], st[5];
  int rank = 4;
  if (layout == KVREF_BLOCKS) {
    sh[0] = nb;
    sh[1] = bs;
    sh[2] = H;
    sh[3] = D;
    switch (kind) {
      case CK_PADDED:
        st[3] = 1;
        st[2] = D + 3;
        st[1] = H * st[2] + 1;
        st[0] = bs * st[1] + 5;
        break;
      case CK_PERM: /* [H, nb, bs, D] in memory */
        st[3] = 1;
        st[1] = D;
        st[0] = bs * D;
        st[2] = nb * bs * D;
        break;
      case CK_HND:
        st[3] = 1;
        st[1] = D;
        st[2] = bs * D;
        st[0] = H * bs * D;
        break;
      case CK_STRIDE2:
        st[3] = 2;
        st[2] = 2 * D + 1;
        st[1] = H * st[2] + 2;
        st[0] = bs * st[1] + 3;
        break;
      default:
        st[3] = 1;
        st[2] = D;
        st[1] = H * D;
        st[0] = bs * H * D;
        break;
    }
  } else if (layout == KVREF_XSPLIT && is_value) {
    sh[0] = nb;
    sh[1] = H;
    sh[2] = D;
    sh[3] = bs;
    switch (kind) {
      case CK_PADDED:
        st[3] = 1;
        st[2] = bs + 1;
        st[1] = D * st[2] + 2;
        st[0] = H * st[1] + 3;
        break;
      case CK_PERM:
        st[3] = 1;
        st[2] = bs;
        st[0] = D * bs;
        st[1] = nb * st[0];
        break;
      default:
        st[3] = 1;
        st[2] = bs;
        st[1] = D * bs;
        st[0] = H * D * bs;
        break;
    }
  } else if (layout == KVREF_XSPLIT) {
    const int64_t x = 16 / ce, G = cdiv(D, x);
    rank = 5;
    sh[0] = nb;
    sh[1] = H;
    sh[2] = G;
    sh[3] = bs;
    sh[4] = x;
    switch (kind) {
      case CK_PADDED:
        st[4] = 1;
        st[3] = x + 1;
        st[2] = bs * st[3] + 3;
        st[1] = G * st[2] + 5;
        st[0] = H * st[1] + 7;
        break;
      case CK_PERM:
        st[4] = 1;
        st[3] = x;
        st[2] = bs * x;
        st[0] = G * bs * x;
        st[1] = nb * st[0];
        break;
      default:
        st[4] = 1;
        st[3] = x;
        st[2] = bs * x;
        st[1] = G * bs * x;
        st[0] = H * G * bs * x;
        break;
    }
  } else {
    const int64_t ld = 32 / ce, G = cdiv(H * D, ld);
    sh[0] = nb;
    sh[1] = G;
    sh[2] = bs;
    sh[3] = ld;
    switch (kind) {
      case CK_PADDED:
        st[3] = 1;
        st[2] = ld + 2;
        st[1] = bs * st[2] + 3;
        st[0] = G * st[1] + 5;
        break;
      case CK_PERM:
        st[3] = 1;
        st[2] = ld;
        st[0] = bs * ld;
        st[1] = nb * st[0];
        break;
      default:
        st[3] = 1;
        st[2] = ld;
        st[1] = bs * ld;
        st[0] = G * bs * ld;
        break;
    }
  }
  set_desc(t, dt, rank, sh, st);
}

static void fill_random(unsigned char *p, size_t n, uint64_t seed) {
  uint64_t h = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
  for (size_t i = 0; i < n; i += 8) {
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t z = h ^ (h >> 29);
    memcpy(p + i, &z, n - i < 8 ? n - i : 8);
  }
}

static void put16(unsigned char *p, uint32_t v) {
  uint16_t w = (uint16_t)v;
  memcpy(p, &w, 2);
}
static void put32(unsigned char *p, uint32_t v) {
  memcpy(p, &v, 4);
}

/* Bit patterns a float path would change: NaNs with payloads (signalling too), inf,
 * subnormals, -0. */
static void put_special(unsigned char *p, llmk_dtype dt) {
  static const uint32_t f32[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u,
                                 0xFF812345u, 0x7FBFFFFFu, 0x7FE00000u,
                                 0x7F800000u, 0x00000001u, 0x80000000u};
  static const uint32_t f16[] = {0x7E00, 0xFE00, 0x7C01, 0xFD55,
                                 0x7C00, 0x0001, 0x8000, 0x7FFF};
  static const uint32_t bf16[] = {0x7FC0, 0xFFC0, 0x7F81, 0xFF81,
                                  0x7F80, 0x0001, 0x8000, 0x7FFF};
  static const uint32_t e4m3[] = {0x7F, 0xFF, 0x7E, 0x80, 0x01};
  static const uint32_t e5m2[] = {0x7D, 0xFE, 0x7F, 0x7C, 0xFC, 0x01};
  switch (dt) {
    case LLMK_F32:
      put32(p, f32[tu_rand_range(0, 8)]);
      break;
    case LLMK_F16:
      put16(p, f16[tu_rand_range(0, 7)]);
      break;
    case LLMK_BF16:
      put16(p, bf16[tu_rand_range(0, 7)]);
      break;
    case LLMK_FP8_E4M3FN:
      *p = (unsigned char)e4m3[tu_rand_range(0, 4)];
      break;
    case LLMK_FP8_E5M2:
      *p = (unsigned char)e5m2[tu_rand_range(0, 5)];
      break;
    default:
      break; /* integers: the random bytes are as good as any */
  }
}

static ref_fmt fp8_fmt(llmk_dtype d) {
  return d == LLMK_FP8_E4M3FN ? REF_FP8_E4M3FN : REF_FP8_E5M2;
}
static int is_fp8(llmk_dtype d) {
  return d == LLMK_FP8_E4M3FN || d == LLMK_FP8_E5M2;
}

/* An f32 value for a conversion to fp8 with scale s: in range, saturating, exact ties
 * (midpoints of neighbours; exact after a power-of-two scale), subnormals, inf, 0. */
static float gen_conv_value(ref_fmt f8, float s) {
  const double fmax = ref_max(f8), sign = tu_rand_range(0, 1) ? -1.0 : 1.0;
  const int r = (int)tu_rand_range(0, 99);
  if (r < 35) return (float)(sign * tu_rand_unit() * 1.3 * fmax * s);
  if (r < 50) {
    size_t n = ref_value_count(f8), i = (size_t)tu_rand_range(0, (int64_t)n - 2);
    double a = ref_value_at(f8, i), b = ref_value_at(f8, i + 1);
    return (float)(sign * (r < 44 ? (a + b) / 2 : a) * s);
  }
  if (r < 58) return (float)(sign * tu_rand_unit() * 4 * ref_min_subnormal(f8) * s);
  if (r < 68)
    return (float)(sign * ldexp(1.0 + tu_rand_unit(), (int)tu_rand_range(-40, 40)));
  if (r < 72) return (float)(sign * INFINITY);
  if (r < 76) return (float)(sign * ((r & 1) ? 1e30 : 3e38));
  if (r < 80) return (float)(sign * 0.0);
  if (r < 84) return (float)(sign * fmax * s);
  return (float)(sign * tu_rand_unit() * 8 * s);
}

static void put_conv(unsigned char *p, llmk_dtype sdt, ref_fmt f8, float s) {
  const int r = (int)tu_rand_range(0, 99);
  const uint32_t sign = tu_rand_range(0, 1) ? 1u : 0u, pay = (uint32_t)tu_rand_u64();
  if (r < 8) { /* NaN with a random payload */
    if (sdt == LLMK_F32)
      put32(p, (sign << 31) | 0x7F800000u | (pay & 0x7FFFFFu) | 1u);
    else if (sdt == LLMK_F16)
      put16(p, (sign << 15) | 0x7C00u | (pay & 0x3FFu) | 1u);
    else
      put16(p, (sign << 15) | 0x7F80u | (pay & 0x7Fu) | 1u);
    return;
  }
  if (r < 14) { /* any bits */
    if (sdt == LLMK_F32)
      put32(p, pay);
    else
      put16(p, pay);
    return;
  }
  float v = gen_conv_value(f8, s);
  if (sdt == LLMK_F32)
    memcpy(p, &v, 4);
  else
    put16(p, ref_encode(sdt == LLMK_F16 ? REF_F16 : REF_BF16, v));
}

static void write_src(tset *s, int k, const sc_case *c, llmk_dtype cdt, const float *scl,
                      int kind) {
  const llmk_tensor *t = &s->t[k];
  const int64_t es = (int64_t)kvref_esize(t->dtype);
  /* a bit copy where this side's source has its cache's dtype (a value of its own) */
  const int vals =
      c->vals == VAL_CONV && (!is_fp8(cdt) || t->dtype == cdt) ? VAL_BITS : c->vals;
  for (int64_t i = 0; i < t->shape[0]; i++)
    for (int64_t h = 0; h < t->shape[1]; h++)
      for (int64_t d = 0; d < t->shape[2]; d++) {
        unsigned char *p =
            (unsigned char *)t->data +
            (i * t->strides[0] + h * t->strides[1] + d * t->strides[2]) * es;
        if (vals == VAL_ZERO)
          memset(p, 0, (size_t)es);
        else if (vals == VAL_BITS) {
          if (tu_rand_range(0, 7) == 0) put_special(p, t->dtype);
        } else
          put_conv(p, t->dtype, fp8_fmt(cdt), scl[kind == SCL_HEAD ? h : 0]);
      }
}

static void scale_desc(llmk_tensor *t, int kind, int64_t H, int64_t stride) {
  int64_t sh[1] = {kind == SCL_HEAD ? H : 1}, st[1] = {kind == SCL_HEAD ? stride : 1};
  set_desc(t, LLMK_F32, kind == SCL_RANK0 ? 0 : 1, sh, st);
}

static void write_scale(tset *s, int k, int kind, const float *v, int64_t H) {
  const llmk_tensor *t = &s->t[k];
  int64_t n = kind == SCL_HEAD ? H : 1, st = t->rank ? t->strides[0] : 0;
  for (int64_t i = 0; i < n; i++) memcpy((unsigned char *)t->data + i * st * 4, &v[i], 4);
}

static void bind(tset *s) {
  for (int k = 0; k < X_COUNT; k++)
    if (s->built[k]) s->t[k].data = (unsigned char *)s->buf[s->bi[k]].data + s->off[k];
}

/* Descriptors, buffers filled with a pattern from c->seed (what the caches' unused
 * bytes must keep), then the sources, slots and scales. */
static void tset_build(tset *s, const sc_case *c) {
  memset(s, 0, sizeof *s);
  s->layout = c->layout;
  for (int k = 0; k < X_COUNT; k++) s->bi[k] = -1;
  size_t bufsz[X_COUNT] = {0};
  const size_t ses = kvref_esize(c->sdt), kce = kvref_esize(c->kcdt);
  const int fused = c->src_kind == SRC_FUSED;
  if (fused && val_dt(c) != c->sdt) th_die("fused key/value view with two dtypes");
  const int64_t R = c->H * (2 * c->Dk + (c->has_v ? c->Dv : 0));
  src_desc(&s->t[X_KEY], c->sdt, c->src_kind, c->T, c->H, c->Dk, R);
  add_tensor(s, bufsz, X_KEY, -1, fused ? (size_t)(c->H * c->Dk) * ses : 0);
  if (c->has_v) {
    src_desc(&s->t[X_VAL], val_dt(c), c->src_kind, c->T, c->H, c->Dv, R);
    add_tensor(s, bufsz, X_VAL, fused ? s->bi[X_KEY] : -1,
               fused ? (size_t)(2 * c->H * c->Dk) * ses : 0);
  }
  const int shared =
      c->layout == KVREF_BLOCKS && c->has_v &&
      (c->cache_kind == CK_SHARED_BLOCK || c->cache_kind == CK_SHARED_HEAD);
  if (shared) {
    if (c->kcdt != c->vcdt) th_die("shared cache buffer with two dtypes");
    const int64_t sh_k[4] = {c->nb, c->bs, c->H, c->Dk},
                  sh_v[4] = {c->nb, c->bs, c->H, c->Dv};
    if (c->cache_kind == CK_SHARED_BLOCK) {
      const int64_t P = c->bs * c->H * (c->Dk + c->Dv);
      const int64_t st_k[4] = {P, c->H * c->Dk, c->Dk, 1},
                    st_v[4] = {P, c->H * c->Dv, c->Dv, 1};
      set_desc(&s->t[X_KC], c->kcdt, 4, sh_k, st_k);
      set_desc(&s->t[X_VC], c->vcdt, 4, sh_v, st_v);
      add_tensor(s, bufsz, X_KC, -1, 0);
      add_tensor(s, bufsz, X_VC, s->bi[X_KC], (size_t)(c->bs * c->H * c->Dk) * kce);
    } else {
      const int64_t W = c->Dk + c->Dv;
      const int64_t st[4] = {c->bs * c->H * W, c->H * W, W, 1};
      set_desc(&s->t[X_KC], c->kcdt, 4, sh_k, st);
      set_desc(&s->t[X_VC], c->vcdt, 4, sh_v, st);
      add_tensor(s, bufsz, X_KC, -1, 0);
      add_tensor(s, bufsz, X_VC, s->bi[X_KC], (size_t)c->Dk * kce);
    }
  } else {
    cache_desc(&s->t[X_KC], c->kcdt, c->layout, 0, c->cache_kind, c->nb, c->bs, c->H,
               c->Dk);
    add_tensor(s, bufsz, X_KC, -1, 0);
    if (c->has_v) {
      cache_desc(&s->t[X_VC], c->vcdt, c->layout, 1, c->cache_kind, c->nb, c->bs, c->H,
                 c->Dv);
      add_tensor(s, bufsz, X_VC, -1, 0);
    }
  }
  {
    const int64_t sh[1] = {c->T}, st[1] = {c->slot_stride};
    set_desc(&s->t[X_SLOT], c->slotdt, 1, sh, st);
    add_tensor(s, bufsz, X_SLOT, -1, 0);
  }
  if (c->kscl) {
    scale_desc(&s->t[X_KS], c->kscl, c->H, c->scl_stride);
    add_tensor(s, bufsz, X_KS, -1, 0);
  }
  if (c->vscl) {
    scale_desc(&s->t[X_VS], c->vscl, c->H, c->scl_stride);
    add_tensor(s, bufsz, X_VS, -1, 0);
  }
  for (int j = 0; j < s->nbuf; j++) {
    s->buf[j] = tu_buf_alloc(bufsz[j]);
    fill_random(s->buf[j].data, bufsz[j], c->seed * 131 + (uint64_t)j);
  }
  bind(s);
  write_src(s, X_KEY, c, c->kcdt, c->ks, c->kscl);
  if (c->has_v) write_src(s, X_VAL, c, c->vcdt, c->vs, c->vscl);
  const size_t slot_es = kvref_esize(c->slotdt);
  for (int64_t t = 0; t < c->T; t++) {
    unsigned char *p =
        (unsigned char *)s->t[X_SLOT].data + (size_t)(t * c->slot_stride) * slot_es;
    if (c->slotdt == LLMK_I32) {
      if (c->slots[t] < INT32_MIN || c->slots[t] > INT32_MAX)
        th_die("slot does not fit an i32");
      int32_t v = (int32_t)c->slots[t];
      memcpy(p, &v, 4);
    } else {
      memcpy(p, &c->slots[t], 8);
    }
  }
  if (c->kscl) write_scale(s, X_KS, c->kscl, c->ks, c->H);
  if (c->vscl) write_scale(s, X_VS, c->vscl, c->vs, c->H);
}

/* A byte-identical copy (guards included) with its own buffers; maps if asked. */
static void tset_copy(tset *dst, const tset *src, int with_maps) {
  *dst = *src;
  for (int j = 0; j < src->nbuf; j++) {
    dst->buf[j] = tu_buf_alloc(src->buf[j].size);
    memcpy(dst->buf[j].base, src->buf[j].base, src->buf[j].size + 2 * TU_GUARD);
    dst->map[j] = NULL;
    if (with_maps) {
      dst->map[j] = calloc(src->buf[j].size + 1, 1);
      if (!dst->map[j]) th_die("out of memory");
    }
  }
  bind(dst);
}

static void tset_restore(tset *dst, const tset *src) {
  for (int j = 0; j < src->nbuf; j++)
    memcpy(dst->buf[j].base, src->buf[j].base, src->buf[j].size + 2 * TU_GUARD);
}

static void tset_free(tset *s) {
  for (int j = 0; j < s->nbuf; j++) {
    tu_buf_free(&s->buf[j]);
    free(s->map[j]);
    s->map[j] = NULL;
  }
  s->nbuf = 0;
}

/* The reference on e's own buffers. */
static int ref_run(tset *e) {
  const llmk_tensor *p[X_COUNT];
  for (int k = 0; k < X_COUNT; k++) p[k] = e->pass[k] ? &e->t[k] : NULL;
  unsigned char *mk = NULL, *mv = NULL;
  if (e->map[e->bi[X_KC]]) mk = e->map[e->bi[X_KC]] + e->off[X_KC];
  if (e->built[X_VC] && e->map[e->bi[X_VC]]) mv = e->map[e->bi[X_VC]] + e->off[X_VC];
  return kvref_scatter(p[X_KEY], p[X_VAL], p[X_KC], p[X_VC], p[X_SLOT], p[X_KS], p[X_VS],
                       e->layout, mk, mv);
}

static const char *buf_name(const tset *s, int j) {
  static char b[96];
  b[0] = 0;
  for (int k = 0; k < X_COUNT; k++)
    if (s->built[k] && s->bi[k] == j) {
      if (b[0]) strncat(b, "+", sizeof b - strlen(b) - 1);
      strncat(b, xname[k], sizeof b - strlen(b) - 1);
    }
  return b;
}

/* Which cache element byte i of buffer j belongs to (a search; failures only). */
static const char *where(const tset *s, int j, size_t i) {
  static char b[160];
  snprintf(b, sizeof b, "not a cache element");
  for (int k = X_KC; k <= X_VC; k++) {
    if (!s->built[k] || s->bi[k] != j) continue;
    kvref_view v;
    const llmk_tensor *src = &s->t[k == X_KC ? X_KEY : X_VAL];
    if (kvref_view_init(&v, &s->t[k], s->layout, k == X_VC, src->shape[1], src->shape[2]))
      continue;
    for (int64_t bb = 0; bb < v.num_blocks; bb++)
      for (int64_t o = 0; o < v.block_size; o++)
        for (int64_t h = 0; h < v.H; h++)
          for (int64_t d = 0; d < v.D; d++) {
            int64_t off = (int64_t)s->off[k] + kvref_byte_offset(&v, bb, o, h, d);
            if ((int64_t)i >= off && (int64_t)i < off + (int64_t)v.esize) {
              snprintf(b, sizeof b,
                       "%s element b=%" PRId64 " o=%" PRId64 " h=%" PRId64 " d=%" PRId64
                       ", slot %" PRId64,
                       xname[k], bb, o, h, d, bb * v.block_size + o);
              return b;
            }
          }
  }
  return b;
}

static llmk_dtype buf_cache_dtype(const tset *s, int j) {
  for (int k = X_KC; k <= X_VC; k++)
    if (s->built[k] && s->bi[k] == j) return s->t[k].dtype;
  return LLMK_DTYPE_INVALID;
}

/* 1 if `a` equals `e` byte for byte, guards included; where e's map marks a NaN stored
 * by a conversion, any quiet NaN of the same sign is accepted. */
static long g_nan_equiv; /* bytes accepted as an equivalent quiet NaN */

static unsigned cache_bufs(const tset *s) {
  unsigned m = 0;
  for (int k = X_KC; k <= X_VC; k++)
    if (s->built[k]) m |= M(s->bi[k]);
  return m;
}

/* Buffers in `mask` only. */
static int tset_same_mask(const tset *a, const tset *e, const char *label,
                          unsigned mask) {
  int same = 1;
  for (int j = 0; j < a->nbuf; j++) {
    if (!(mask & M(j))) continue;
    const tu_buf *ab = &a->buf[j], *eb = &e->buf[j];
    if (!tu_buf_check(ab)) {
      same = 0;
      TU_CHECK(0, "%s: guard bytes around %s overwritten", label, buf_name(a, j));
    }
    if (memcmp(ab->data, eb->data, ab->size) == 0) continue;
    const unsigned char *x = ab->data, *y = eb->data, *map = e->map[j];
    const llmk_dtype cdt = buf_cache_dtype(e, j);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < ab->size; i++) {
      if (x[i] == y[i]) continue;
      if (map && map[i] && is_fp8(cdt) && ref_is_quiet_nan(fp8_fmt(cdt), x[i]) &&
          (x[i] & 0x80) == (y[i] & 0x80)) {
        g_nan_equiv++;
        continue;
      }
      if (!bad) first = i;
      bad++;
    }
    if (bad) {
      same = 0;
      TU_CHECK(
          0, "%s: %s: %zu bytes differ, first at byte %zu (%s): 0x%02x, expected 0x%02x",
          label, buf_name(a, j), bad, first, where(e, j, first), x[first], y[first]);
    }
  }
  return same;
}

static int tset_same(const tset *a, const tset *e, const char *label) {
  return tset_same_mask(a, e, label, ~0u);
}

/* --------------------------------------------------------------- running */

static th_sweep g_sw; /* ctx NULL, 1 and 2 threads */
#define g_ctx (g_sw.ctx)
#define ctx_name (g_sw.name)
static llmk_isa g_native;

static llmk_status call_p1(const tset *s, int layout, size_t *ws, llmk_plan **plan) {
  const llmk_tensor *p[X_COUNT];
  for (int k = 0; k < X_COUNT; k++) p[k] = s->pass[k] ? &s->t[k] : NULL;
  return llmk_scatter_pa_kv_cache_get_workspace_size(p[X_KEY], p[X_VAL], p[X_KC], p[X_VC],
                                                     p[X_SLOT], p[X_KS], p[X_VS],
                                                     (llmk_kv_layout)layout, ws, plan);
}

/* Runs with exactly the workspace asked for (malloc'd, so ASan sees an overrun). */
static llmk_status run_plan(llmk_plan *plan, size_t ws, llmk_context *ctx) {
  return th_run_plan(llmk_scatter_pa_kv_cache, plan, ws, ctx);
}

/* "scatter_pa_kv_cache: ..." naming one of the '|'-separated `alts` and all of `must`. */
static int msg_ok(const char *alts, const char *must) {
  return th_msg_ok("scatter_pa_kv_cache", alts, must);
}

/* One run of W (restored from P) with the ISA in force: phase 1 touches nothing, the
 * status is `expect`, and the bytes are E's (P's when it fails). 1 if all is well. */
static int run_once(int layout, const tset *P, const tset *E, tset *W, llmk_status expect,
                    llmk_context *ctx, const char *label) {
  /* the sources are compared after every run, so only a run that changed them needs
   * them restored (the 4096-token cases are dominated by these copies) */
  const unsigned cm = cache_bufs(W);
  for (int j = 0; j < P->nbuf; j++)
    if (W->dirty || (cm & M(j)))
      memcpy(W->buf[j].base, P->buf[j].base, P->buf[j].size + 2 * TU_GUARD);
  W->dirty = 0;
  size_t ws = 0;
  llmk_plan *plan = NULL;
  th_reset_error();
  llmk_status st = call_p1(W, layout, &ws, &plan);
  TU_CHECK(st == LLMK_SUCCESS && plan, "%s: phase 1 status %d ('%s')", label, (int)st,
           llmk_last_error());
  if (st != LLMK_SUCCESS || !plan) return 0;
  int ok = tset_same_mask(W, P, label, cm); /* phase 1 wrote nothing */
  th_reset_error();
  st = run_plan(plan, ws, ctx);
  TU_CHECK(st == expect, "%s: status %d ('%s'), expected %d", label, (int)st,
           st ? llmk_last_error() : "", (int)expect);
  if (expect != LLMK_SUCCESS && st != LLMK_SUCCESS)
    TU_CHECK(msg_ok(NULL, NULL), "%s: message '%s'", label, llmk_last_error());
  ok &= st == expect;
  int same = tset_same(W, expect == LLMK_SUCCESS ? E : P, label);
  if (!same) W->dirty = 1;
  return ok & same;
}

/* Every ISA from scalar to native (all_isa) or the native one, with ctx NULL, 1 and 2
 * threads (the 2-thread run `reps` times); every run against E and, byte for byte,
 * against the first good run. */
typedef struct variants {
  int layout;
  const tset *P, *E;
  tset W;
  llmk_status expect;
} variants;

/* th_sweep_run's callback: run_once; W's buffers go to the sweep's comparison. */
static int run_variant(void *user, llmk_context *ctx, const char *lab, th_out *out) {
  variants *v = user;
  if (!run_once(v->layout, v->P, v->E, &v->W, v->expect, ctx, lab)) return 0;
  for (int j = 0; j < v->W.nbuf; j++) th_out_add_buf(out, &v->W.buf[j]);
  return 1;
}

static void run_variants(int layout, const tset *P, const tset *E, llmk_status expect,
                         const char *label, int all_isa, int reps) {
  variants v;
  memset(&v, 0, sizeof v);
  v.layout = layout;
  v.P = P;
  v.E = E;
  v.expect = expect;
  tset_copy(&v.W, P, 0);
  const int nreps[3] = {1, 1, reps};
  th_sweep_run(&g_sw, all_isa, nreps, label, run_variant, &v);
  tset_free(&v.W);
}

/* Builds P, E (the reference's result), runs every variant. */
static void check_case(const sc_case *c, const char *label, int all_isa, int reps) {
  tset P, E;
  tset_build(&P, c);
  tset_copy(&E, &P, 1);
  int r = ref_run(&E);
  if (r == -2) th_die("reference rejects a case's descriptors");
  run_variants(c->layout, &P, &E, r == 0 ? LLMK_SUCCESS : LLMK_ERROR_INVALID_VALUE, label,
               all_isa, reps);
  tset_free(&P);
  tset_free(&E);
}

/* ------------------------------------------------------------ base cases */

static void case_base(sc_case *c, int layout, llmk_dtype sdt, llmk_dtype cdt, int64_t T,
                      int64_t H, int64_t D, int64_t nb, int64_t bs) {
  memset(c, 0, sizeof *c);
  c->layout = layout;
  c->sdt = sdt;
  c->kcdt = c->vcdt = cdt;
  c->slotdt = LLMK_I64;
  c->T = T;
  c->H = H;
  c->Dk = c->Dv = D;
  c->nb = nb;
  c->bs = bs;
  c->has_v = 1;
  c->scl_stride = 1;
  c->slot_stride = 1;
  c->vals = sdt == cdt ? VAL_BITS : VAL_CONV;
  c->seed = 5;
  c->slots = calloc((size_t)T + 1, sizeof *c->slots);
  if (!c->slots) th_die("out of memory");
}

/* ---------------------------------------------------------------- samples */

static void test_samples(void) {
  char label[256];
  /* PyPTO: key [8, 1, 64] bf16, caches [16, 16, 1, 64]; each slot's row is its token's
   * K (V), every other byte keeps the caches' guard pattern. */
  static const int64_t pslots[8] = {22, 38, 41, 54, 86, 122, 207, 254};
  for (int variant = 0; variant < 3; variant++) {
    sc_case c;
    case_base(&c, KVREF_BLOCKS, LLMK_BF16, LLMK_BF16, 8, 1, 64, 16, 16);
    c.slotdt = variant == 1 ? LLMK_I32 : LLMK_I64;
    c.has_v = variant != 2;
    memcpy(c.slots, pslots, sizeof pslots);
    tset P, E, R;
    tset_build(&P, &c);
    tset_copy(&E, &P, 0);
    for (int t = 0; t < 8; t++) {
      memcpy((unsigned char *)E.t[X_KC].data + pslots[t] * 64 * 2,
             (const unsigned char *)P.t[X_KEY].data + t * 64 * 2, 128);
      if (c.has_v)
        memcpy((unsigned char *)E.t[X_VC].data + pslots[t] * 64 * 2,
               (const unsigned char *)P.t[X_VAL].data + t * 64 * 2, 128);
    }
    tset_copy(&R, &P, 0);
    TU_CHECK(ref_run(&R) == 0, "PyPTO sample: reference fails");
    snprintf(label, sizeof label, "PyPTO sample: reference vs the sample's rule (%s)",
             variant == 2 ? "K only" : llmk_dtype_name(c.slotdt));
    tset_same(&R, &E, label);
    snprintf(label, sizeof label, "PyPTO sample (slots %s%s)", llmk_dtype_name(c.slotdt),
             c.has_v ? "" : ", K only");
    run_variants(c.layout, &P, &E, LLMK_SUCCESS, label, 1, 1);
    tset_free(&P);
    tset_free(&E);
    tset_free(&R);
    case_free(&c);
  }

  /* CANN NZ: key and value [2, 2, 32] f16 zeros, caches [1, 4, 32, 16] of 0x0001, slots
   * 0 and 1: elements c*512 + 0..31 (c = 0..3) become 0, the other 1920 stay 1. */
  for (int variant = 0; variant < 2; variant++) {
    sc_case c;
    case_base(&c, KVREF_NZ, LLMK_F16, LLMK_F16, 2, 2, 32, 1, 32);
    c.vals = VAL_ZERO;
    c.slotdt = variant ? LLMK_I32 : LLMK_I64;
    c.slots[0] = 0;
    c.slots[1] = 1;
    tset P, E, R;
    tset_build(&P, &c);
    TU_CHECK(P.t[X_KC].shape[0] == 1 && P.t[X_KC].shape[1] == 4 &&
                 P.t[X_KC].shape[2] == 32 && P.t[X_KC].shape[3] == 16,
             "CANN sample: cache shape");
    for (int k = X_KC; k <= X_VC; k++)
      for (int i = 0; i < 2048; i++) put16((unsigned char *)P.t[k].data + 2 * i, 0x0001);
    tset_copy(&E, &P, 0);
    int zeros = 0, ones = 0;
    for (int k = X_KC; k <= X_VC; k++) {
      for (int cc = 0; cc < 4; cc++)
        for (int i = 0; i < 32; i++)
          put16((unsigned char *)E.t[k].data + 2 * (cc * 512 + i), 0);
      for (int i = 0; i < 2048; i++) {
        uint16_t v;
        memcpy(&v, (unsigned char *)E.t[k].data + 2 * i, 2);
        zeros += v == 0;
        ones += v == 1;
      }
    }
    TU_CHECK(zeros == 2 * 128 && ones == 2 * 1920, "CANN sample: %d zeros, %d ones",
             zeros, ones);
    tset_copy(&R, &P, 0);
    TU_CHECK(ref_run(&R) == 0, "CANN sample: reference fails");
    tset_same(&R, &E, "CANN NZ sample: reference vs the documented result");
    snprintf(label, sizeof label, "CANN NZ sample (slots %s)", llmk_dtype_name(c.slotdt));
    run_variants(c.layout, &P, &E, LLMK_SUCCESS, label, 1, 1);
    tset_free(&P);
    tset_free(&E);
    tset_free(&R);
    case_free(&c);
  }
}

/* Key and value of different dtypes (CANN's PA_NZ allows an i8 key beside an f16
 * value): NZ with ld 32 for the key cache and 16 for the value cache, and blocks. */
static void test_mixed_kv_dtypes(void) {
  static const struct {
    int layout;
    llmk_dtype k, v;
  } cases[] = {{KVREF_NZ, LLMK_I8, LLMK_F16},
               {KVREF_NZ, LLMK_I8, LLMK_BF16},
               {KVREF_NZ, LLMK_F16, LLMK_BF16},
               {KVREF_BLOCKS, LLMK_I8, LLMK_F16},
               {KVREF_XSPLIT, LLMK_F16, LLMK_I8}};
  char label[256];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    sc_case c;
    case_base(&c, cases[i].layout, cases[i].k, cases[i].k, 5, 2, 32, 3, 16);
    c.vsdt = c.vcdt = cases[i].v;
    c.Dv = 48;
    static const int64_t sl[5] = {17, 0, -1, 47, 31};
    memcpy(c.slots, sl, sizeof sl);
    snprintf(label, sizeof label, "mixed key/value dtypes: %s key %s, value %s",
             layout_name[c.layout], llmk_dtype_name(c.sdt), llmk_dtype_name(c.vsdt));
    check_case(&c, label, 1, 1);
    case_free(&c);
  }
}

/* ------------------------------------------------------------ random cases */

static float gen_scale(void) {
  static const float list[] = {1.0f,       0.5f, 2.0f, 0.25f, 8.0f,
                               0.0078125f, 0.1f, 3.0f, 1e-3f, 300.0f};
  if (tu_rand_range(0, 3) == 0)
    return (float)ldexp(1.0 + tu_rand_unit(), (int)tu_rand_range(-7, 6));
  return list[tu_rand_range(0, 9)];
}

/* kind 0: distinct random slots; 1: consecutive from a random start (prefill); 2: the
 * tokens fill a random permutation of blocks. Then pad_pct % of them become padding. */
static void gen_slots(sc_case *c, int kind, int pad_pct) {
  const int64_t cap = c->nb * c->bs, T = c->T;
  free(c->slots);
  c->slots = calloc((size_t)T + 1, sizeof *c->slots);
  int64_t *perm = calloc((size_t)(cap > c->nb ? cap : c->nb) + 1, sizeof *perm);
  if (!c->slots || !perm) th_die("out of memory");
  if (kind == 0) {
    for (int64_t i = 0; i < cap; i++) perm[i] = i;
    for (int64_t t = 0; t < T; t++) {
      int64_t j = tu_rand_range(t, cap - 1), tmp = perm[t];
      perm[t] = perm[j];
      perm[j] = tmp;
      c->slots[t] = perm[t];
    }
  } else if (kind == 1) {
    int64_t s0 = tu_rand_range(0, cap - T);
    for (int64_t t = 0; t < T; t++) c->slots[t] = s0 + t;
  } else {
    for (int64_t i = 0; i < c->nb; i++) perm[i] = i;
    for (int64_t i = c->nb - 1; i > 0; i--) {
      int64_t j = tu_rand_range(0, i), tmp = perm[i];
      perm[i] = perm[j];
      perm[j] = tmp;
    }
    for (int64_t t = 0; t < T; t++) c->slots[t] = perm[t / c->bs] * c->bs + t % c->bs;
  }
  free(perm);
  for (int64_t t = 0; t < T; t++) {
    if (tu_rand_range(0, 99) >= pad_pct) continue;
    switch (tu_rand_range(0, 3)) {
      case 0:
        c->slots[t] = -1;
        break;
      case 1:
        c->slots[t] = -tu_rand_range(2, 100000);
        break;
      case 2:
        c->slots[t] = INT32_MIN;
        break;
      default:
        c->slots[t] = c->slotdt == LLMK_I64 ? INT64_MIN : INT32_MIN;
        break;
    }
  }
}

static void gen_case(sc_case *c, int idx) {
  static const int64_t T_list[] = {0, 1, 7, 64, 300}, H_list[] = {1, 2, 8};
  static const int64_t D_std[] = {16, 64, 128}, D_odd[] = {24, 40, 576};
  static const int64_t bs_list[] = {1, 16, 32, 128};
  static const llmk_dtype copy_dt[] = {LLMK_F32,        LLMK_F16,     LLMK_BF16,
                                       LLMK_I8,         LLMK_U8,      LLMK_I32,
                                       LLMK_FP8_E4M3FN, LLMK_FP8_E5M2};
  static const llmk_dtype conv_src[] = {LLMK_F32, LLMK_F16, LLMK_BF16};
  memset(c, 0, sizeof *c);
  c->seed = tu_rand_u64();
  const int lr = idx % 4;
  c->layout = lr < 2 ? KVREF_BLOCKS : lr == 2 ? KVREF_XSPLIT : KVREF_NZ;
  c->T = T_list[tu_rand_range(0, 4)];
  c->H = H_list[tu_rand_range(0, 2)];
  const int conv = tu_rand_range(0, 9) < 4;
  if (conv) {
    c->sdt = conv_src[tu_rand_range(0, 2)];
    /* K and V caches of different dtypes are in the error table's valid rows */
    c->kcdt = c->vcdt = tu_rand_range(0, 1) ? LLMK_FP8_E4M3FN : LLMK_FP8_E5M2;
  } else {
    c->sdt = c->kcdt = c->vcdt = copy_dt[tu_rand_range(0, 7)];
  }
  /* one case in 6: value (and its cache) of a dtype of its own, e.g. CANN's PA_NZ with
   * an i8 key and an f16 value */
  const int own_v = tu_rand_range(0, 5) == 0;
  if (own_v) {
    c->vsdt = copy_dt[tu_rand_range(0, 7)];
    c->vcdt = c->vsdt;
  }
  c->has_v = tu_rand_range(0, 6) != 0;
  for (;;) {
    int odd = c->layout == KVREF_BLOCKS && tu_rand_range(0, 2) == 0;
    c->Dk = odd ? D_odd[tu_rand_range(0, 2)] : D_std[tu_rand_range(0, 2)];
    c->Dv = c->Dk;
    if (c->has_v && tu_rand_range(0, 3) == 0) {
      odd = c->layout == KVREF_BLOCKS && tu_rand_range(0, 2) == 0;
      c->Dv = odd ? D_odd[tu_rand_range(0, 2)] : D_std[tu_rand_range(0, 2)];
    }
    if (c->layout != KVREF_NZ) break;
    const int64_t ldk = 32 / (int64_t)kvref_esize(c->kcdt),
                  ldv = 32 / (int64_t)kvref_esize(c->vcdt);
    if ((c->H * c->Dk) % ldk == 0 && (c->H * c->Dv) % ldv == 0) break;
  }
  if (!c->has_v) c->Dv = c->Dk;
  c->bs = bs_list[tu_rand_range(0, 3)];
  /* at most ~4 MiB per case's caches */
  const int64_t slot_bytes =
      c->H * (c->Dk * (int64_t)kvref_esize(c->kcdt) +
              (c->has_v ? c->Dv * (int64_t)kvref_esize(c->vcdt) : 0));
  int64_t extra = tu_rand_range(0, 3);
  for (;;) {
    c->nb = (c->T ? cdiv(c->T, c->bs) : 1) + extra;
    if (c->nb * c->bs * slot_bytes <= (4 << 20) || (c->bs == 1 && extra == 0)) break;
    if (extra)
      extra--;
    else
      c->bs /= 2;
  }
  if (c->layout == KVREF_BLOCKS) {
    c->cache_kind = (int)tu_rand_range(0, 6);
    if ((c->cache_kind == CK_SHARED_BLOCK || c->cache_kind == CK_SHARED_HEAD) &&
        (!c->has_v || c->kcdt != c->vcdt))
      c->cache_kind = CK_HND;
  } else {
    c->cache_kind = (int)tu_rand_range(0, 2);
  }
  static const int src_kinds[10] = {
      SRC_CONTIG,    SRC_CONTIG,    SRC_CONTIG,  SRC_FUSED,   SRC_FUSED,
      SRC_HEADMAJOR, SRC_HEADMAJOR, SRC_STRIDE2, SRC_STRIDE2, SRC_BCAST};
  c->src_kind = src_kinds[tu_rand_range(0, 9)];
  if (c->src_kind == SRC_FUSED && val_dt(c) != c->sdt) c->src_kind = SRC_HEADMAJOR;
  c->slotdt = tu_rand_range(0, 1) ? LLMK_I32 : LLMK_I64;
  static const int64_t sstr[4] = {1, 1, 2, 3};
  c->slot_stride = sstr[tu_rand_range(0, 3)];
  c->scl_stride = tu_rand_range(1, 2);
  if (c->kcdt != c->sdt) c->kscl = (int)tu_rand_range(SCL_RANK0, SCL_HEAD);
  if (c->has_v && c->vcdt != val_dt(c)) c->vscl = (int)tu_rand_range(SCL_RANK0, SCL_HEAD);
  for (int h = 0; h < MAXH; h++) {
    c->ks[h] = gen_scale();
    c->vs[h] = gen_scale();
  }
  c->vals = conv ? VAL_CONV : VAL_BITS;
  static const int pads[3] = {0, 10, 50};
  gen_slots(c, (int)tu_rand_range(0, 2), pads[tu_rand_range(0, 2)]);
  /* a slot out of range in one case in 20: nothing may be written */
  if (c->T > 0 && tu_rand_range(0, 19) == 0) {
    int64_t t = tu_rand_range(0, c->T - 1), cap = c->nb * c->bs;
    c->slots[t] = tu_rand_range(0, 1)
                      ? cap + tu_rand_range(0, 2)
                      : (c->slotdt == LLMK_I32 ? INT32_MAX : INT64_C(1) << 40);
  }
}

static void test_random(void) {
  const int n = SLOW ? 300 : 400;
  double t0 = tu_now();
  int n_bad = 0;
  for (int i = 0; i < n; i++) {
    sc_case c;
    gen_case(&c, i);
    char label[400], prefix[48];
    snprintf(prefix, sizeof prefix, "random case %d", i);
    case_label(&c, label, sizeof label, prefix);
    int64_t cap = c.nb * c.bs;
    for (int64_t t = 0; t < c.T; t++) n_bad += c.slots[t] >= cap;
    check_case(&c, label, 1, 1);
    case_free(&c);
  }
  printf(
      "random cases: %d (%d with an out-of-range slot), every ISA up to %s x ctx NULL / "
      "1 / 2 threads: %.2f s\n",
      n, n_bad, llmk_isa_name(g_native), tu_now() - t0);
}

/* ------------------------------------------------------------ duplicates */

static void test_duplicates(void) {
  double t0 = tu_now();
  char label[400];
  /* small: slots 3, 3, -1, 5, 3, 5, 0: slot 3 <- token 4, slot 5 <- token 5, 0 <- 6 */
  {
    static const int64_t sl[7] = {3, 3, -1, 5, 3, 5, 0};
    sc_case c;
    case_base(&c, KVREF_BLOCKS, LLMK_F32, LLMK_F32, 7, 2, 16, 2, 4);
    memcpy(c.slots, sl, sizeof sl);
    tset P, E;
    tset_build(&P, &c);
    tset_copy(&E, &P, 1);
    TU_CHECK(ref_run(&E) == 0, "duplicates: reference fails");
    static const int win[3][2] = {{3, 4}, {5, 5}, {0, 6}};
    for (int i = 0; i < 3; i++)
      TU_CHECK(memcmp((unsigned char *)E.t[X_KC].data + win[i][0] * 32 * 4,
                      (unsigned char *)P.t[X_KEY].data + win[i][1] * 32 * 4, 128) == 0,
               "duplicates: reference: slot %d is not token %d's key", win[i][0],
               win[i][1]);
    run_variants(c.layout, &P, &E, LLMK_SUCCESS, "duplicate slots, T=7", 1, 3);
    tset_free(&P);
    tset_free(&E);
    case_free(&c);
  }
  /* large enough for a 2-thread context to split the tokens; patterns whose
   * duplicates cross any split: t % 97, mirrored pairs (t, T-1-t), random in [0, 32) */
  const int64_t T = 4096;
  for (int cfg = 0; cfg < 4; cfg++) {
    sc_case c;
    if (cfg < 3)
      case_base(&c, KVREF_BLOCKS, LLMK_BF16, LLMK_BF16, T, 8, 128, 16, 16);
    else
      case_base(&c, KVREF_NZ, LLMK_F16, LLMK_FP8_E4M3FN, T, 8, 32, 16,
                16); /* D=32: the
    reference's fp8 encoder is slow */
    if (cfg == 3) {
      c.kscl = c.vscl = SCL_HEAD;
      for (int h = 0; h < MAXH; h++) {
        c.ks[h] = 0.5f * (float)(h + 1);
        c.vs[h] = 0.25f;
      }
    }
    c.slotdt = cfg == 1 ? LLMK_I32 : LLMK_I64;
    c.cache_kind = cfg == 2 ? CK_HND : CK_CONTIG;
    c.seed = 90 + (uint64_t)cfg;
    for (int64_t t = 0; t < T; t++) {
      switch (cfg) {
        case 0:
          c.slots[t] = t % 97;
          break;
        case 1:
          c.slots[t] = t < T / 2 ? t % 256 : (T - 1 - t) % 256;
          break;
        default:
          c.slots[t] = tu_rand_range(0, 5) == 0 ? -1 : tu_rand_range(0, 31);
          break;
      }
    }
    snprintf(label, sizeof label, "duplicate slots, pattern %d", cfg);
    case_label(&c, label + strlen(label), sizeof label - strlen(label), "");
    check_case(&c, label, 1, SLOW ? 2 : 4);
    case_free(&c);
  }
  printf("duplicate slots: %.2f s\n", tu_now() - t0);
}

/* 16 MiB written or more: the kernels switch to non-temporal stores (and the dup test
 * covers that with duplicates). One such case per layout, a conversion among them. */
static void test_large(void) {
  double t0 = tu_now();
  for (int cfg = 0; cfg < 4; cfg++) {
    sc_case c;
    switch (cfg) {
      case 0: /* 2048 x 8 x 128 x f32 x (K + V) */
        case_base(&c, KVREF_BLOCKS, LLMK_F32, LLMK_F32, 2048, 8, 128, 130, 16);
        c.cache_kind = CK_HND;
        c.src_kind = SRC_FUSED;
        break;
      case 1:
        case_base(&c, KVREF_NZ, LLMK_F16, LLMK_F16, 4096, 8, 128, 257, 16);
        c.cache_kind = CK_PADDED;
        break;
      case 2:
        case_base(&c, KVREF_XSPLIT, LLMK_BF16, LLMK_BF16, 4096, 8, 128, 33, 128);
        c.src_kind = SRC_HEADMAJOR;
        break;
      default: /* f16 -> e5m2: 8192 x 8 x 128 x 1 byte x (K + V) */
        case_base(&c, KVREF_BLOCKS, LLMK_F16, LLMK_FP8_E5M2, 8192, 8, 128, 65, 128);
        c.kscl = SCL_RANK0;
        c.vscl = SCL_ONE;
        c.ks[0] = 0.75f;
        c.vs[0] = 2.0f;
        c.vals = VAL_BITS; /* every f16 pattern; few distinct quotients for the ref */
        break;
    }
    c.seed = 300 + (uint64_t)cfg;
    c.slotdt = cfg == 1 ? LLMK_I32 : LLMK_I64;
    gen_slots(&c, cfg % 2 ? 2 : 0, 5);
    char label[400];
    case_label(&c, label, sizeof label, "large case");
    check_case(&c, label, 1, 1);
    case_free(&c);
  }
  printf("large cases: %.2f s\n", tu_now() - t0);
}

/* ------------------------------------------------------------ error table */

enum base_kind { BASE_COPY, BASE_FP8, BASE_FP8_HEAD, BASE_XSPLIT, BASE_NZ, BASE_BIG };

/* The valid base calls: 7 tokens (one padding), 2 heads of 16, 4 blocks of 4 slots,
 * bf16, blocks layout, contiguous; FP8: e4m3 caches with [] scales 0.5 / 2; FP8_HEAD:
 * 4 heads, e5m2 caches, [H] scales; BIG: 300 tokens, 8 heads of 128, 32 blocks of 16. */
static void fx_init(sc_case *c, int base) {
  static const int64_t sl[7] = {3, -1, 9, 14, 0, 5, 11};
  if (base == BASE_BIG) {
    case_base(c, KVREF_BLOCKS, LLMK_BF16, LLMK_BF16, 300, 8, 128, 32, 16);
    for (int64_t t = 0; t < 300; t++) c->slots[t] = t % 10 == 9 ? -1 : (t * 7 + 3) % 512;
  } else {
    case_base(c, KVREF_BLOCKS, LLMK_BF16, LLMK_BF16, 7, 2, 16, 4, 4);
    memcpy(c->slots, sl, sizeof sl);
  }
  c->seed = 77 + (uint64_t)base;
  switch (base) {
    case BASE_FP8:
      c->kcdt = c->vcdt = LLMK_FP8_E4M3FN;
      c->kscl = c->vscl = SCL_RANK0;
      c->ks[0] = 0.5f;
      c->vs[0] = 2.0f;
      c->vals = VAL_CONV;
      break;
    case BASE_FP8_HEAD: {
      static const float ks[4] = {0.5f, 1.0f, 2.0f, 4.0f},
                         vs[4] = {0.25f, 3.0f, 1.0f, 8.0f};
      c->H = 4;
      c->kcdt = c->vcdt = LLMK_FP8_E5M2;
      c->kscl = c->vscl = SCL_HEAD;
      memcpy(c->ks, ks, sizeof ks);
      memcpy(c->vs, vs, sizeof vs);
      c->vals = VAL_CONV;
      break;
    }
    case BASE_XSPLIT:
      c->layout = KVREF_XSPLIT;
      break;
    case BASE_NZ:
      c->layout = KVREF_NZ;
      break;
    default:
      break;
  }
}

enum pre_defect {
  P_NONE,
  P_T0,
  P_KONLY,
  P_VCDT,
  P_KSCL,
  P_VSCL,
  P_VSCL_STRIDED,
  P_DK,
  P_DV,
  P_D,
  P_H_D,
  P_DT,
  P_DT_SCALED,
  P_LAYOUT_D,
  P_SLOT,
  P_SLOT32,
  P_SLOT_STRIDED,
  P_ALLPAD,
  P_KSCALE_VAL,
  P_VSCALE_VAL,
  P_KONLY_VSCL
};
/* The shared descriptor defects are the harness's (TH_D_*); these are the op's own. */
enum post_defect {
  D_NULL_WS = TH_D_OP,
  D_NULL_PLAN,
  D_T0_NULL,
  D_DTYPE, /* every tensor of the mask xs */
  D_LAYOUT,
  D_X_CHANGE,
  D_CACHE_NULL
};

typedef struct err_row {
  char name[128];
  int base, pre, post;
  int konly;   /* K only, on top of the pre defect */
  int nb0;     /* num_blocks = 0 and every slot padding, before the pre defect */
  int x;       /* tensor of the post defect */
  unsigned xs; /* D_DTYPE: mask of tensors */
  int64_t a1, a2, p1, p2;
  double f;
  llmk_status expect;
  int phase;        /* 0: valid; 1 or 2: the phase that must reject */
  const char *msg;  /* the message names one of these ('|'-separated) */
  const char *must; /* ... and all of these */
} err_row;

static th_table rows;

static err_row *last_row(void) {
  return (err_row *)(void *)rows.rows + rows.n - 1;
}

static void apply_pre(sc_case *c, const err_row *r) {
  switch (r->pre) {
    case P_T0:
      c->T = 0;
      break;
    case P_KONLY:
      c->has_v = 0;
      c->vscl = SCL_NONE;
      break;
    case P_KONLY_VSCL:
      c->has_v = 0;
      break; /* v_scale still built */
    case P_VCDT:
      c->vcdt = (llmk_dtype)r->p1;
      c->vscl = c->vcdt == val_dt(c) ? SCL_NONE : SCL_RANK0;
      if (r->p2) c->vscl = SCL_RANK0; /* a scale although the value is copied */
      break;
    case P_KSCL:
      c->kscl = (int)r->p1;
      break;
    case P_VSCL:
      c->vscl = (int)r->p1;
      break;
    case P_VSCL_STRIDED:
      c->vscl = SCL_HEAD;
      c->scl_stride = 2;
      c->vs[1] = 5.0f;
      break;
    case P_DK:
      c->Dk = r->p1;
      break;
    case P_DV:
      c->Dv = r->p1;
      break;
    case P_D:
      c->Dk = c->Dv = r->p1;
      break;
    case P_H_D:
      c->H = r->p1;
      c->Dk = c->Dv = r->p2;
      break;
    case P_DT: /* source and caches of one dtype p1, or source p1 and caches p2 */
      c->sdt = (llmk_dtype)r->p1;
      c->kcdt = c->vcdt = (llmk_dtype)(r->p2 ? r->p2 : r->p1);
      c->kscl = c->vscl = SCL_NONE;
      c->vals = VAL_BITS;
      break;
    case P_DT_SCALED: /* as P_DT, with [] scales */
      c->sdt = (llmk_dtype)r->p1;
      c->kcdt = c->vcdt = (llmk_dtype)r->p2;
      c->kscl = c->vscl = SCL_RANK0;
      c->ks[0] = c->vs[0] = 1.0f;
      c->vals = VAL_BITS;
      break;
    case P_LAYOUT_D:
      c->layout = (int)r->p1;
      c->Dk = c->Dv = r->p2;
      break;
    case P_SLOT:
      c->slots[r->p1] = r->p2;
      break;
    case P_SLOT32:
      c->slotdt = LLMK_I32;
      c->slots[r->p1] = r->p2;
      break;
    case P_SLOT_STRIDED:
      c->slot_stride = 3;
      c->slots[r->p1] = r->p2;
      break;
    case P_ALLPAD:
      for (int64_t t = 0; t < c->T; t++) c->slots[t] = -1 - t;
      break;
    case P_KSCALE_VAL:
      c->ks[r->p1] = (float)r->f;
      break;
    case P_VSCALE_VAL:
      c->vs[r->p1] = (float)r->f;
      break;
    default:
      break;
  }
}

static void apply_post(tset *s, const err_row *r) {
  llmk_tensor *t = &s->t[r->x];
  if (r->post < TH_D_OP) {
    if (!th_defect_apply(t, r->post, r->a1, r->a2)) s->pass[r->x] = 0;
    return;
  }
  switch (r->post) {
    case D_T0_NULL:
      s->t[X_KEY].data = s->t[X_VAL].data = s->t[X_SLOT].data = NULL;
      break;
    case D_CACHE_NULL:
      s->t[X_KC].data = s->t[X_VC].data = NULL;
      break;
    case D_DTYPE:
      for (int k = 0; k < X_COUNT; k++)
        if (r->xs & M(k)) s->t[k].dtype = (llmk_dtype)r->a1;
      break;
    case D_X_CHANGE: /* the x (ld) extent halved, the one above doubled, still dense */
      if (t->rank == 5) {
        t->shape[4] /= 2;
        t->shape[2] *= 2;
        t->strides[3] /= 2;
        t->strides[2] /= 2;
      } else {
        t->shape[3] /= 2;
        t->shape[1] *= 2;
        t->strides[2] /= 2;
        t->strides[1] /= 2;
      }
      break;
    default:
      break;
  }
}

static void build_rows(void) {
  const llmk_status NP = LLMK_ERROR_NULL_POINTER, DT = LLMK_ERROR_INVALID_DTYPE,
                    SH = LLMK_ERROR_INVALID_SHAPE, AT = LLMK_ERROR_INVALID_ATTRIBUTE,
                    VA = LLMK_ERROR_INVALID_VALUE;
  const llmk_dtype E4 = LLMK_FP8_E4M3FN, E5 = LLMK_FP8_E5M2;
#define ROW(...) TH_TABLE_ADD(&rows, err_row, __VA_ARGS__)

  /* positive controls */
  ROW(.name = "valid base: bf16 copy, blocks", .base = BASE_COPY);
  ROW(.name = "valid: bf16 -> e4m3fn, [] scales", .base = BASE_FP8);
  ROW(.name = "valid: bf16 -> e5m2, [H] scales, H=4", .base = BASE_FP8_HEAD);
  ROW(.name = "valid: x-split", .base = BASE_XSPLIT);
  ROW(.name = "valid: NZ", .base = BASE_NZ);
  ROW(.name = "valid: 300 tokens", .base = BASE_BIG);
  ROW(.name = "valid: T=0, key/value/slot_mapping data NULL", .pre = P_T0,
      .post = D_T0_NULL);
  ROW(.name = "valid: T=0, fp8", .base = BASE_FP8, .pre = P_T0);
  ROW(.name = "valid: K only", .pre = P_KONLY);
  ROW(.name = "valid: K only, fp8", .base = BASE_FP8, .pre = P_KONLY);
  ROW(.name = "valid: K only, x-split", .base = BASE_XSPLIT, .pre = P_KONLY);
  /* mixed cache dtypes: see KV_MIXED_CACHE_DTYPES */
  const llmk_status MIX_OK = KV_MIXED_CACHE_DTYPES ? LLMK_SUCCESS : DT;
  const int MIX_PHASE = KV_MIXED_CACHE_DTYPES ? 0 : 1;
  const char *const MIX_MSG = KV_MIXED_CACHE_DTYPES ? NULL : "value_cache|key_cache";
  ROW(.name = "mixed caches: key cache e4m3fn, value cache bf16 (copied)",
      .base = BASE_FP8, .pre = P_VCDT, .p1 = LLMK_BF16, .expect = MIX_OK,
      .phase = MIX_PHASE, .msg = MIX_MSG);
  ROW(.name = "mixed caches: key cache e4m3fn, value cache e5m2", .base = BASE_FP8,
      .pre = P_VCDT, .p1 = E5, .expect = MIX_OK, .phase = MIX_PHASE, .msg = MIX_MSG);
  ROW(.name = "valid: k_scale [1]", .base = BASE_FP8, .pre = P_KSCL, .p1 = SCL_ONE);
  ROW(.name = "valid: v_scale [H] with stride 2", .base = BASE_FP8,
      .pre = P_VSCL_STRIDED);
  ROW(.name = "valid: i32 copy", .pre = P_DT, .p1 = LLMK_I32);
  ROW(.name = "valid: e5m2 -> e5m2 copy", .pre = P_DT, .p1 = E5);
  ROW(.name = "valid: x-split bf16 D=24 (x=8)", .base = BASE_XSPLIT, .pre = P_D,
      .p1 = 24);
  ROW(.name = "valid: x-split value cache D=12 (x only constrains the key cache)",
      .base = BASE_XSPLIT, .pre = P_DV, .p1 = 12);
  ROW(.name = "valid: NZ H=2 D=24 (H*D=48, a multiple of ld=16)", .base = BASE_NZ,
      .pre = P_D, .p1 = 24);
  ROW(.name = "valid: slot INT64_MIN is padding", .pre = P_SLOT, .p1 = 2,
      .p2 = INT64_MIN);
  ROW(.name = "valid: slot num_blocks*block_size-1", .pre = P_SLOT, .p1 = 3, .p2 = 15);
  ROW(.name = "valid: i32 slot INT32_MIN is padding", .pre = P_SLOT32, .p1 = 2,
      .p2 = INT32_MIN);
  ROW(.name = "valid: every slot padding", .pre = P_ALLPAD);
  ROW(.name = "valid: num_blocks=0 (empty caches, data NULL), every slot padding",
      .nb0 = 1, .post = D_CACHE_NULL);
  ROW(.name = "valid: subnormal k_scale 1e-40", .base = BASE_FP8, .pre = P_KSCALE_VAL,
      .p1 = 0, .f = 1e-40);
  ROW(.name = "valid: v_scale FLT_MAX", .base = BASE_FP8, .pre = P_VSCALE_VAL, .p1 = 0,
      .f = FLT_MAX);

  /* phase 1: pointers */
  ROW(.name = "key NULL", .post = TH_D_NULL, .x = X_KEY, .expect = NP, .phase = 1,
      .msg = "key");
  ROW(.name = "key_cache NULL", .post = TH_D_NULL, .x = X_KC, .expect = NP, .phase = 1,
      .msg = "key_cache");
  ROW(.name = "slot_mapping NULL", .post = TH_D_NULL, .x = X_SLOT, .expect = NP,
      .phase = 1, .msg = "slot_mapping");
  ROW(.name = "value without value_cache", .post = TH_D_NULL, .x = X_VC, .expect = NP,
      .phase = 1, .msg = "value_cache");
  ROW(.name = "value_cache without value", .post = TH_D_NULL, .x = X_VAL, .expect = AT,
      .phase = 1, .msg = "value");
  ROW(.name = "workspace_size NULL", .post = D_NULL_WS, .expect = NP, .phase = 1,
      .msg = "workspace_size");
  ROW(.name = "plan NULL", .post = D_NULL_PLAN, .expect = NP, .phase = 1, .msg = "plan");
  ROW(.name = "fp8: k_scale missing", .base = BASE_FP8, .post = TH_D_NULL, .x = X_KS,
      .expect = NP, .phase = 1, .msg = "k_scale");
  ROW(.name = "fp8: v_scale missing", .base = BASE_FP8, .post = TH_D_NULL, .x = X_VS,
      .expect = NP, .phase = 1, .msg = "v_scale");
  ROW(.name = "fp8 per head: k_scale missing", .base = BASE_FP8_HEAD, .post = TH_D_NULL,
      .x = X_KS, .expect = NP, .phase = 1, .msg = "k_scale");
  ROW(.name = "mixed caches: v_scale missing for the e5m2 value cache", .base = BASE_FP8,
      .pre = P_VCDT, .p1 = E5, .post = TH_D_NULL, .x = X_VS,
      .expect = KV_MIXED_CACHE_DTYPES ? NP : DT, .phase = 1,
      .msg = KV_MIXED_CACHE_DTYPES ? "v_scale" : MIX_MSG);
  for (int k = 0; k < X_COUNT; k++) {
    ROW(.base = BASE_FP8, .post = TH_D_DATA_NULL, .x = k, .expect = NP, .phase = 1,
        .msg = xname[k]);
    snprintf(last_row()->name, sizeof last_row()->name, "%s data NULL", xname[k]);
  }

  /* dtypes */
  /* each side has its own dtype rule: value's dtype may differ from key's */
  ROW(.name = "valid: value and value_cache f16, key bf16", .post = D_DTYPE,
      .xs = M(X_VAL) | M(X_VC), .a1 = LLMK_F16);
  ROW(.name = "value f16 with value_cache bf16, key bf16", .post = D_DTYPE,
      .xs = M(X_VAL), .a1 = LLMK_F16, .expect = DT, .phase = 1, .msg = "value_cache");
  ROW(.name = "key_cache f16, key bf16", .post = D_DTYPE, .xs = M(X_KC), .a1 = LLMK_F16,
      .expect = DT, .phase = 1, .msg = "key_cache");
  ROW(.name = "value_cache f16, value bf16", .post = D_DTYPE, .xs = M(X_VC),
      .a1 = LLMK_F16, .expect = DT, .phase = 1, .msg = "value_cache");
  ROW(.name = "all i64 (8-byte elements)", .post = D_DTYPE,
      .xs = M(X_KEY) | M(X_VAL) | M(X_KC) | M(X_VC), .a1 = LLMK_I64, .expect = DT,
      .phase = 1, .msg = "key");
  ROW(.name = "all LLMK_DTYPE_INVALID", .post = D_DTYPE,
      .xs = M(X_KEY) | M(X_VAL) | M(X_KC) | M(X_VC), .a1 = LLMK_DTYPE_INVALID,
      .expect = DT, .phase = 1, .msg = "key");
  ROW(.name = "all dtype 99", .post = D_DTYPE,
      .xs = M(X_KEY) | M(X_VAL) | M(X_KC) | M(X_VC), .a1 = 99, .expect = DT, .phase = 1,
      .msg = "key");
  ROW(.name = "slot_mapping f32", .post = D_DTYPE, .xs = M(X_SLOT), .a1 = LLMK_F32,
      .expect = DT, .phase = 1, .msg = "slot_mapping");
  ROW(.name = "slot_mapping i8", .post = D_DTYPE, .xs = M(X_SLOT), .a1 = LLMK_I8,
      .expect = DT, .phase = 1, .msg = "slot_mapping");
  ROW(.name = "slot_mapping u8", .post = D_DTYPE, .xs = M(X_SLOT), .a1 = LLMK_U8,
      .expect = DT, .phase = 1, .msg = "slot_mapping");
  ROW(.name = "k_scale f16", .base = BASE_FP8, .post = D_DTYPE, .xs = M(X_KS),
      .a1 = LLMK_F16, .expect = DT, .phase = 1, .msg = "k_scale");
  ROW(.name = "v_scale bf16 (per head)", .base = BASE_FP8_HEAD, .post = D_DTYPE,
      .xs = M(X_VS), .a1 = LLMK_BF16, .expect = DT, .phase = 1, .msg = "v_scale");
  ROW(.name = "k_scale i32", .base = BASE_FP8, .post = D_DTYPE, .xs = M(X_KS),
      .a1 = LLMK_I32, .expect = DT, .phase = 1, .msg = "k_scale");
  ROW(.name = "i8 source, e4m3fn caches", .pre = P_DT_SCALED, .p1 = LLMK_I8, .p2 = E4,
      .expect = DT, .phase = 1, .msg = "key_cache|key");
  ROW(.name = "u8 source, e5m2 caches", .pre = P_DT_SCALED, .p1 = LLMK_U8, .p2 = E5,
      .expect = DT, .phase = 1, .msg = "key_cache|key");
  ROW(.name = "i32 source, e4m3fn caches", .pre = P_DT_SCALED, .p1 = LLMK_I32, .p2 = E4,
      .expect = DT, .phase = 1, .msg = "key_cache|key");
  ROW(.name = "e4m3fn source, e5m2 caches", .pre = P_DT_SCALED, .p1 = E4, .p2 = E5,
      .expect = DT, .phase = 1, .msg = "key_cache|key");
  ROW(.name = "f32 source, bf16 caches", .pre = P_DT, .p1 = LLMK_F32, .p2 = LLMK_BF16,
      .expect = DT, .phase = 1, .msg = "key_cache|key");
  ROW(.name = "bf16 source, f16 caches with scales", .pre = P_DT_SCALED, .p1 = LLMK_BF16,
      .p2 = LLMK_F16, .expect = DT, .phase = 1, .msg = "key_cache|key");
  ROW(.name = "e4m3fn source, f32 caches (the gather direction)", .pre = P_DT_SCALED,
      .p1 = E4, .p2 = LLMK_F32, .expect = DT, .phase = 1, .msg = "key_cache|key");

  /* attributes */
  ROW(.name = "layout 7", .post = D_LAYOUT, .a1 = 7, .expect = AT, .phase = 1,
      .msg = "layout");
  ROW(.name = "layout 3", .post = D_LAYOUT, .a1 = 3, .expect = AT, .phase = 1,
      .msg = "layout");
  ROW(.name = "layout -1", .post = D_LAYOUT, .a1 = -1, .expect = AT, .phase = 1,
      .msg = "layout");
  ROW(.name = "k_scale given for a bf16 copy", .pre = P_KSCL, .p1 = SCL_RANK0,
      .expect = AT, .phase = 1, .msg = "k_scale");
  ROW(.name = "v_scale given for a bf16 copy", .pre = P_VSCL, .p1 = SCL_ONE, .expect = AT,
      .phase = 1, .msg = "v_scale");
  ROW(.name = "mixed caches: v_scale given for the copied value (bf16 value cache)",
      .base = BASE_FP8, .pre = P_VCDT, .p1 = LLMK_BF16, .p2 = 1,
      .expect = KV_MIXED_CACHE_DTYPES ? AT : DT, .phase = 1,
      .msg = KV_MIXED_CACHE_DTYPES ? "v_scale" : MIX_MSG);
  ROW(.name = "K only, fp8, v_scale given", .base = BASE_FP8, .pre = P_KONLY_VSCL,
      .expect = AT, .phase = 1, .msg = "v_scale");

  /* ranks */
  {
    static const struct {
      int base, x, rank;
    } rk[] = {{BASE_COPY, X_KEY, 2},  {BASE_COPY, X_KEY, 4},  {BASE_COPY, X_VAL, 2},
              {BASE_COPY, X_VAL, 4},  {BASE_COPY, X_KC, 3},   {BASE_COPY, X_KC, 5},
              {BASE_COPY, X_VC, 3},   {BASE_COPY, X_VC, 5},   {BASE_COPY, X_SLOT, 0},
              {BASE_COPY, X_SLOT, 2}, {BASE_FP8, X_KS, 2},    {BASE_FP8_HEAD, X_VS, 2},
              {BASE_XSPLIT, X_KC, 4}, {BASE_XSPLIT, X_VC, 5}, {BASE_XSPLIT, X_VC, 3},
              {BASE_NZ, X_KC, 5},     {BASE_NZ, X_VC, 3}};
    static const char *const bname[] = {
        "", "fp8: ", "fp8 per head: ", "x-split: ", "NZ: ", ""};
    for (size_t i = 0; i < sizeof rk / sizeof rk[0]; i++) {
      ROW(.base = rk[i].base, .post = TH_D_RANK, .x = rk[i].x, .a1 = rk[i].rank,
          .expect = SH, .phase = 1, .msg = xname[rk[i].x]);
      snprintf(last_row()->name, sizeof last_row()->name, "%s%s rank %d",
               bname[rk[i].base], xname[rk[i].x], rk[i].rank);
    }
  }

  /* shapes */
  ROW(.name = "value H-1", .post = TH_D_EXTENT_ADD, .x = X_VAL, .a1 = 1, .a2 = -1,
      .expect = SH, .phase = 1, .msg = "value");
  ROW(.name = "key H-1", .post = TH_D_EXTENT_ADD, .x = X_KEY, .a1 = 1, .a2 = -1,
      .expect = SH, .phase = 1, .msg = "key|value");
  ROW(.name = "key_cache H-1", .post = TH_D_EXTENT_ADD, .x = X_KC, .a1 = 2, .a2 = -1,
      .expect = SH, .phase = 1, .msg = "key_cache");
  ROW(.name = "value_cache H-1", .post = TH_D_EXTENT_ADD, .x = X_VC, .a1 = 2, .a2 = -1,
      .expect = SH, .phase = 1, .msg = "value_cache");
  ROW(.name = "key_cache D-1", .post = TH_D_EXTENT_ADD, .x = X_KC, .a1 = 3, .a2 = -1,
      .expect = SH, .phase = 1, .msg = "key_cache|key");
  ROW(.name = "value_cache D-1", .post = TH_D_EXTENT_ADD, .x = X_VC, .a1 = 3, .a2 = -1,
      .expect = SH, .phase = 1, .msg = "value_cache|value");
  ROW(.name = "key D-1", .post = TH_D_EXTENT_ADD, .x = X_KEY, .a1 = 2, .a2 = -1,
      .expect = SH, .phase = 1, .msg = "key");
  ROW(.name = "value D-1", .post = TH_D_EXTENT_ADD, .x = X_VAL, .a1 = 2, .a2 = -1,
      .expect = SH, .phase = 1, .msg = "value");
  ROW(.name = "value_cache num_blocks-1", .post = TH_D_EXTENT_ADD, .x = X_VC, .a1 = 0,
      .a2 = -1, .expect = SH, .phase = 1, .msg = "value_cache|num_blocks");
  ROW(.name = "key_cache num_blocks-1", .post = TH_D_EXTENT_ADD, .x = X_KC, .a1 = 0,
      .a2 = -1, .expect = SH, .phase = 1, .msg = "key_cache|value_cache|num_blocks");
  ROW(.name = "value_cache block_size-1", .post = TH_D_EXTENT_ADD, .x = X_VC, .a1 = 1,
      .a2 = -1, .expect = SH, .phase = 1, .msg = "value_cache|block_size");
  ROW(.name = "value T-1", .post = TH_D_EXTENT_ADD, .x = X_VAL, .a1 = 0, .a2 = -1,
      .expect = SH, .phase = 1, .msg = "value");
  ROW(.name = "key T-1", .post = TH_D_EXTENT_ADD, .x = X_KEY, .a1 = 0, .a2 = -1,
      .expect = SH, .phase = 1, .msg = "key|value|slot_mapping");
  ROW(.name = "slot_mapping T-1", .post = TH_D_EXTENT_ADD, .x = X_SLOT, .a1 = 0, .a2 = -1,
      .expect = SH, .phase = 1, .msg = "slot_mapping");
  ROW(.name = "K only: slot_mapping T-1", .pre = P_KONLY, .post = TH_D_EXTENT_ADD,
      .x = X_SLOT, .a1 = 0, .a2 = -1, .expect = SH, .phase = 1, .msg = "slot_mapping");
  ROW(.name = "x-split: key D=12, not a multiple of x=8", .base = BASE_XSPLIT,
      .pre = P_DK, .p1 = 12, .expect = SH, .phase = 1, .msg = "key_cache|key|x");
  ROW(.name =
          "x-split fp8: D=24, not a multiple of x=16 (x from the cache's element size)",
      .base = BASE_FP8, .pre = P_LAYOUT_D, .p1 = KVREF_XSPLIT, .p2 = 24, .expect = SH,
      .phase = 1, .msg = "key_cache|key|x");
  ROW(.name = "x-split: key_cache x extent 4 instead of 8", .base = BASE_XSPLIT,
      .post = D_X_CHANGE, .x = X_KC, .expect = SH, .phase = 1, .msg = "key_cache");
  ROW(.name = "x-split: key_cache H-1", .base = BASE_XSPLIT, .post = TH_D_EXTENT_ADD,
      .x = X_KC, .a1 = 1, .a2 = -1, .expect = SH, .phase = 1, .msg = "key_cache");
  ROW(.name = "x-split: key_cache block_size-1", .base = BASE_XSPLIT,
      .post = TH_D_EXTENT_ADD, .x = X_KC, .a1 = 3, .a2 = -1, .expect = SH, .phase = 1,
      .msg = "key_cache|value_cache|block_size");
  ROW(.name = "x-split: value_cache D-1", .base = BASE_XSPLIT, .post = TH_D_EXTENT_ADD,
      .x = X_VC, .a1 = 2, .a2 = -1, .expect = SH, .phase = 1, .msg = "value_cache|value");
  ROW(.name = "x-split: value_cache block_size-1", .base = BASE_XSPLIT,
      .post = TH_D_EXTENT_ADD, .x = X_VC, .a1 = 3, .a2 = -1, .expect = SH, .phase = 1,
      .msg = "value_cache|block_size");
  ROW(.name = "NZ: H=1 D=24, H*D not a multiple of ld=16", .base = BASE_NZ, .pre = P_H_D,
      .p1 = 1, .p2 = 24, .expect = SH, .phase = 1, .msg = "key_cache|key|ld");
  ROW(.name = "NZ fp8: H=2 D=24, H*D=48 not a multiple of ld=32", .base = BASE_FP8,
      .pre = P_LAYOUT_D, .p1 = KVREF_NZ, .p2 = 24, .expect = SH, .phase = 1,
      .msg = "key_cache|key|ld");
  ROW(.name = "NZ: key_cache ld extent 8 instead of 16", .base = BASE_NZ,
      .post = D_X_CHANGE, .x = X_KC, .expect = SH, .phase = 1, .msg = "key_cache");
  ROW(.name = "NZ: key_cache shape[1]-1", .base = BASE_NZ, .post = TH_D_EXTENT_ADD,
      .x = X_KC, .a1 = 1, .a2 = -1, .expect = SH, .phase = 1, .msg = "key_cache");
  ROW(.name = "NZ: value_cache block_size-1", .base = BASE_NZ, .post = TH_D_EXTENT_ADD,
      .x = X_VC, .a1 = 2, .a2 = -1, .expect = SH, .phase = 1,
      .msg = "value_cache|block_size");
  ROW(.name = "k_scale [2] with H=4", .base = BASE_FP8_HEAD, .post = TH_D_EXTENT,
      .x = X_KS, .a1 = 0, .a2 = 2, .expect = SH, .phase = 1, .msg = "k_scale");
  ROW(.name = "v_scale [3] with H=4", .base = BASE_FP8_HEAD, .post = TH_D_EXTENT,
      .x = X_VS, .a1 = 0, .a2 = 3, .expect = SH, .phase = 1, .msg = "v_scale");
  ROW(.name = "k_scale [5] with H=4", .base = BASE_FP8_HEAD, .post = TH_D_EXTENT,
      .x = X_KS, .a1 = 0, .a2 = 5, .expect = SH, .phase = 1, .msg = "k_scale");
  ROW(.name = "k_scale [0]", .base = BASE_FP8_HEAD, .post = TH_D_EXTENT, .x = X_KS,
      .a1 = 0, .a2 = 0, .expect = SH, .phase = 1, .msg = "k_scale");

  /* strides and spans */
  {
    static const struct {
      int base, x, dim;
    } ns[] = {{BASE_COPY, X_KEY, 0},  {BASE_COPY, X_KEY, 1},    {BASE_COPY, X_KEY, 2},
              {BASE_COPY, X_VAL, 2},  {BASE_COPY, X_KC, 0},     {BASE_COPY, X_KC, 1},
              {BASE_COPY, X_KC, 2},   {BASE_COPY, X_KC, 3},     {BASE_COPY, X_VC, 1},
              {BASE_COPY, X_SLOT, 0}, {BASE_FP8_HEAD, X_KS, 0}, {BASE_XSPLIT, X_KC, 4},
              {BASE_NZ, X_VC, 2}};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
      ROW(.base = ns[i].base, .post = TH_D_STRIDE, .x = ns[i].x, .a1 = ns[i].dim,
          .a2 = -1, .expect = SH, .phase = 1, .msg = xname[ns[i].x]);
      snprintf(last_row()->name, sizeof last_row()->name, "%s%s strides[%d] = -1",
               ns[i].base == BASE_FP8_HEAD ? "fp8 per head: "
               : ns[i].base == BASE_XSPLIT ? "x-split: "
               : ns[i].base == BASE_NZ     ? "NZ: "
                                           : "",
               xname[ns[i].x], ns[i].dim);
    }
  }
  ROW(.name = "key_cache strides[0] = INT64_MAX/2 (span overflows)", .post = TH_D_STRIDE,
      .x = X_KC, .a1 = 0, .a2 = INT64_MAX / 2, .expect = SH, .phase = 1,
      .msg = "key_cache");
  ROW(.name = "key strides[0] = 2^62 (span overflows)", .post = TH_D_STRIDE, .x = X_KEY,
      .a1 = 0, .a2 = INT64_C(1) << 62, .expect = SH, .phase = 1, .msg = "key");
  ROW(.name = "K only: key_cache num_blocks 2^61 (span overflows)", .pre = P_KONLY,
      .post = TH_D_EXTENT, .x = X_KC, .a1 = 0, .a2 = INT64_C(1) << 61, .expect = SH,
      .phase = 1, .msg = "key_cache");

  /* phase 2: scale values */
  {
    static const double bad[] = {0.0, -0.0, -1.0, INFINITY, -INFINITY, NAN};
    static const char *const bad_name[] = {"0", "-0", "-1", "inf", "-inf", "NaN"};
    for (int i = 0; i < 6; i++) {
      ROW(.base = BASE_FP8, .pre = P_KSCALE_VAL, .p1 = 0, .f = bad[i], .expect = VA,
          .phase = 2, .msg = "k_scale|scale");
      snprintf(last_row()->name, sizeof last_row()->name, "k_scale = %s", bad_name[i]);
    }
  }
  ROW(.name = "v_scale = 0", .base = BASE_FP8, .pre = P_VSCALE_VAL, .p1 = 0, .f = 0.0,
      .expect = VA, .phase = 2, .msg = "v_scale|scale");
  ROW(.name = "per head: k_scale[3] = NaN", .base = BASE_FP8_HEAD, .pre = P_KSCALE_VAL,
      .p1 = 3, .f = NAN, .expect = VA, .phase = 2, .msg = "k_scale|scale");
  ROW(.name = "per head: v_scale[2] = -2", .base = BASE_FP8_HEAD, .pre = P_VSCALE_VAL,
      .p1 = 2, .f = -2.0, .expect = VA, .phase = 2, .msg = "v_scale|scale");
  ROW(.name = "per head: v_scale[0] = inf", .base = BASE_FP8_HEAD, .pre = P_VSCALE_VAL,
      .p1 = 0, .f = INFINITY, .expect = VA, .phase = 2, .msg = "v_scale|scale");

  /* phase 2: slots (the message names the token and the slot) */
  ROW(.name = "slot[5] = num_blocks*block_size", .pre = P_SLOT, .p1 = 5, .p2 = 16,
      .expect = VA, .phase = 2, .msg = "slot", .must = "5|16");
  ROW(.name = "slot[3] = 2^40", .pre = P_SLOT, .p1 = 3, .p2 = INT64_C(1) << 40,
      .expect = VA, .phase = 2, .msg = "slot", .must = "3|1099511627776");
  ROW(.name = "slot[6] = INT64_MAX (last token)", .pre = P_SLOT, .p1 = 6, .p2 = INT64_MAX,
      .expect = VA, .phase = 2, .msg = "slot", .must = "6|9223372036854775807");
  ROW(.name = "i32 slot[2] = INT32_MAX", .pre = P_SLOT32, .p1 = 2, .p2 = INT32_MAX,
      .expect = VA, .phase = 2, .msg = "slot", .must = "2147483647");
  ROW(.name = "strided slot_mapping: slot[4] = 17", .pre = P_SLOT_STRIDED, .p1 = 4,
      .p2 = 17, .expect = VA, .phase = 2, .msg = "slot", .must = "4|17");
  ROW(.name = "K only: slot[5] = 16", .konly = 1, .pre = P_SLOT, .p1 = 5, .p2 = 16,
      .expect = VA, .phase = 2, .msg = "slot", .must = "5|16");
  ROW(.name = "fp8: slot[6] = 16", .base = BASE_FP8, .pre = P_SLOT, .p1 = 6, .p2 = 16,
      .expect = VA, .phase = 2, .msg = "slot", .must = "6|16");
  ROW(.name = "x-split: slot[5] = 16", .base = BASE_XSPLIT, .pre = P_SLOT, .p1 = 5,
      .p2 = 16, .expect = VA, .phase = 2, .msg = "slot", .must = "5|16");
  ROW(.name = "NZ: slot[5] = 20", .base = BASE_NZ, .pre = P_SLOT, .p1 = 5, .p2 = 20,
      .expect = VA, .phase = 2, .msg = "slot", .must = "5|20");
  ROW(.name = "num_blocks=0: slot[4] = 0", .nb0 = 1, .pre = P_SLOT, .p1 = 4, .p2 = 0,
      .expect = VA, .phase = 2, .msg = "slot", .must = "4");
  ROW(.name = "300 tokens: only the last slot out of range (slot[299] = 512)",
      .base = BASE_BIG, .pre = P_SLOT, .p1 = 299, .p2 = 512, .expect = VA, .phase = 2,
      .msg = "slot", .must = "299|512");
  ROW(.name = "300 tokens: slot[150] = 2^33", .base = BASE_BIG, .pre = P_SLOT, .p1 = 150,
      .p2 = INT64_C(1) << 33, .expect = VA, .phase = 2, .msg = "slot",
      .must = "150|8589934592");
#undef ROW
}

static void run_row(const void *row) {
  const err_row *r = row;
  static int sentinel;
  sc_case c;
  fx_init(&c, r->base);
  if (r->nb0) {
    c.nb = 0;
    for (int64_t t = 0; t < c.T; t++) c.slots[t] = -1;
  }
  apply_pre(&c, r);
  if (r->konly) {
    c.has_v = 0;
    c.vscl = SCL_NONE;
  }
  tset P, E, W;
  tset_build(&P, &c);
  tset_copy(&E, &P, 1);
  tset_copy(&W, &P, 0);
  apply_post(&E, r);
  apply_post(&W, r);
  int layout = r->post == D_LAYOUT ? (int)r->a1 : c.layout;
  if (r->phase != 1) {
    int want = ref_run(&E);
    TU_CHECK(want == (r->phase == 2 ? -1 : 0), "%s: reference returns %d", r->name, want);
  }
  const int runs = r->phase == 1 ? 1 : 2;
  for (int run = 0; run < runs; run++) {
    llmk_context *ctx = run ? g_ctx[2] : NULL;
    char label[200];
    snprintf(label, sizeof label, "%s [%s]", r->name, ctx_name[run ? 2 : 0]);
    tset_restore(&W, &P);
    size_t ws = 12345;
    llmk_plan *plan = (llmk_plan *)(void *)&sentinel;
    th_reset_error();
    llmk_status st = call_p1(&W, layout, r->post == D_NULL_WS ? NULL : &ws,
                             r->post == D_NULL_PLAN ? NULL : &plan);
    if (r->phase == 1) {
      TU_CHECK(st == r->expect, "%s: phase 1 status %d, expected %d ('%s')", label,
               (int)st, (int)r->expect, llmk_last_error());
      if (st == LLMK_SUCCESS) {
        llmk_plan_destroy(plan); /* never run a plan made from a bad descriptor */
      } else {
        if (r->post != D_NULL_PLAN)
          TU_CHECK(plan == NULL, "%s: *plan not set to NULL", label);
        if (r->post != D_NULL_WS)
          TU_CHECK(ws == 0, "%s: *workspace_size = %zu, not 0", label, ws);
        TU_CHECK(msg_ok(r->msg, NULL),
                 "%s: message '%s' should start with 'scatter_pa_kv_cache:' and name %s",
                 label, llmk_last_error(), r->msg ? r->msg : "the op");
      }
      tset_same(&W, &P, label);
      continue;
    }
    TU_CHECK(st == LLMK_SUCCESS && plan, "%s: phase 1 status %d ('%s')", label, (int)st,
             llmk_last_error());
    if (st != LLMK_SUCCESS || !plan) continue;
    tset_same(&W, &P, label);
    th_reset_error();
    st = run_plan(plan, ws, ctx);
    TU_CHECK(st == r->expect, "%s: phase 2 status %d, expected %d ('%s')", label, (int)st,
             (int)r->expect, st ? llmk_last_error() : "");
    if (r->expect != LLMK_SUCCESS && st != LLMK_SUCCESS)
      TU_CHECK(msg_ok(r->msg, r->must),
               "%s: message '%s' should start with 'scatter_pa_kv_cache:', name %s and "
               "contain %s",
               label, llmk_last_error(), r->msg, r->must ? r->must : "-");
    tset_same(&W, r->expect == LLMK_SUCCESS ? &E : &P, label);
  }
  tset_free(&P);
  tset_free(&E);
  tset_free(&W);
  case_free(&c);
}

static void test_errors(void) {
  double t0 = tu_now();
  build_rows();
  th_table_run(&rows, "error table", run_row);
  printf("error table: %.2f s\n", tu_now() - t0);
}

/* ------------------------------------------------------- workspace, plans */

static void test_workspace_and_plans(void) {
  static const int bases[3] = {BASE_COPY, BASE_FP8_HEAD, BASE_BIG};
  for (int bi = 0; bi < 3; bi++) {
    sc_case c;
    fx_init(&c, bases[bi]);
    tset P, E, W;
    tset_build(&P, &c);
    tset_copy(&E, &P, 1);
    tset_copy(&W, &P, 0);
    TU_CHECK(ref_run(&E) == 0, "workspace base %d: reference fails", bi);
    llmk_context *ctx = g_ctx[2];
    char label[96];
    size_t ws = 0;
    llmk_plan *plan = NULL;
    llmk_status st = call_p1(&W, c.layout, &ws, &plan);
    TU_CHECK(st == LLMK_SUCCESS, "workspace base %d: phase 1 %d", bi, (int)st);
    llmk_plan_destroy(plan);
    printf("workspace size, base %d (T=%" PRId64 "): %zu\n", bi, c.T, ws);
    if (ws > 0) {
      snprintf(label, sizeof label, "base %d: workspace %zu of %zu", bi, ws - 1, ws);
      tset_restore(&W, &P);
      call_p1(&W, c.layout, &ws, &plan);
      void *w = malloc(ws);
      st = llmk_scatter_pa_kv_cache(w, ws - 1, plan, ctx);
      TU_CHECK(st == LLMK_ERROR_WORKSPACE_TOO_SMALL, "%s: status %d", label, (int)st);
      tset_same(&W, &P, label);
      snprintf(label, sizeof label, "base %d: NULL workspace of size %zu", bi, ws);
      call_p1(&W, c.layout, &ws, &plan);
      st = llmk_scatter_pa_kv_cache(NULL, ws, plan, ctx);
      TU_CHECK(st == LLMK_ERROR_NULL_POINTER, "%s: status %d", label, (int)st);
      tset_same(&W, &P, label);
      free(w);
    } else {
      snprintf(label, sizeof label, "base %d: NULL workspace of size 0", bi);
      call_p1(&W, c.layout, &ws, &plan);
      st = llmk_scatter_pa_kv_cache(NULL, 0, plan, ctx);
      TU_CHECK(st == LLMK_SUCCESS, "%s: status %d ('%s')", label, (int)st,
               llmk_last_error());
      tset_same(&W, &E, label);
    }
    /* more workspace than asked for is fine */
    {
      snprintf(label, sizeof label, "base %d: workspace larger than asked for", bi);
      tset_restore(&W, &P);
      call_p1(&W, c.layout, &ws, &plan);
      void *w = malloc(ws + 100);
      st = llmk_scatter_pa_kv_cache(w, ws + 100, plan, ctx);
      TU_CHECK(st == LLMK_SUCCESS, "%s: status %d ('%s')", label, (int)st,
               llmk_last_error());
      tset_same(&W, &E, label);
      free(w);
    }
    /* a repeatable plan run twice (idempotent), then destroyed */
    {
      snprintf(label, sizeof label, "base %d: repeatable plan run twice", bi);
      tset_restore(&W, &P);
      st = call_p1(&W, c.layout, &ws, &plan);
      TU_CHECK(st == LLMK_SUCCESS && llmk_plan_set_repeatable(plan) == LLMK_SUCCESS,
               "%s: set_repeatable", label);
      for (int i = 0; i < 2; i++) {
        st = run_plan(plan, ws, i ? ctx : NULL);
        TU_CHECK(st == LLMK_SUCCESS, "%s: run %d status %d ('%s')", label, i, (int)st,
                 llmk_last_error());
      }
      tset_same(&W, &E, label);
      TU_CHECK(llmk_plan_destroy(plan) == LLMK_SUCCESS, "%s: destroy", label);
    }
    /* a consumed plan run again */
    {
      snprintf(label, sizeof label, "base %d: consumed plan run again", bi);
      tset_restore(&W, &P);
      call_p1(&W, c.layout, &ws, &plan);
      TU_CHECK(run_plan(plan, ws, NULL) == LLMK_SUCCESS, "%s: first run", label);
      tset_restore(&W, &P);
      st = run_plan(plan, ws, NULL);
      TU_CHECK(st == LLMK_ERROR_INVALID_PLAN, "%s: status %d", label, (int)st);
      tset_same(&W, &P, label);
    }
    tset_free(&P);
    tset_free(&E);
    tset_free(&W);
    case_free(&c);
  }
  th_check_null_plan(llmk_scatter_pa_kv_cache, "scatter_pa_kv_cache");
  TU_CHECK(strcmp(llmk_kv_layout_name(LLMK_KV_BLOCKS), "blocks") == 0 &&
               strcmp(llmk_kv_layout_name(LLMK_KV_XSPLIT), "xsplit") == 0 &&
               strcmp(llmk_kv_layout_name(LLMK_KV_NZ), "nz") == 0 &&
               strcmp(llmk_kv_layout_name((llmk_kv_layout)7), "invalid") == 0,
           "llmk_kv_layout_name");
  TU_CHECK((int)LLMK_KV_BLOCKS == KVREF_BLOCKS && (int)LLMK_KV_XSPLIT == KVREF_XSPLIT &&
               (int)LLMK_KV_NZ == KVREF_NZ,
           "layout values");
}

/* ------------------------------------------------------------ regressions */

/* Hand-built calls at the edges of the shapes: empty tensors with huge extents, empty
 * rows, strides that only an extent of 1 allows. Each must answer at once. */

static void reg_desc(llmk_tensor *t, llmk_dtype dt, int rank, const int64_t *shape,
                     const int64_t *strides, void *data) {
  if (llmk_tensor_init(t, dt, rank, shape, strides, data) != LLMK_SUCCESS)
    th_die("llmk_tensor_init rejected a regression layout");
}

/* Phase 1 of a K(+V) call, timed; the plan (on success) is the caller's. */
static llmk_status reg_p1(const char *label, const llmk_tensor *k, const llmk_tensor *v,
                          const llmk_tensor *kc, const llmk_tensor *vc,
                          const llmk_tensor *slots, llmk_kv_layout layout, size_t *ws,
                          llmk_plan **plan) {
  double t0 = tu_now();
  th_reset_error();
  llmk_status st = llmk_scatter_pa_kv_cache_get_workspace_size(k, v, kc, vc, slots, NULL,
                                                               NULL, layout, ws, plan);
  double dt = tu_now() - t0;
  TU_CHECK(dt < 1.0, "%s: phase 1 took %.2f s", label, dt);
  return st;
}

/* Finding 5: an empty key (T = 0) with H = 2^63-2 made phase 1 enumerate H heads. */
static void test_reg_empty_huge_heads(void) {
  const int64_t H = INT64_MAX - 1, one[5] = {1, 1, 1, 1, 1};
  llmk_tensor k, kc, v, vc, slots;
  reg_desc(&slots, LLMK_I64, 1, (int64_t[]){0}, one, NULL);
  /* blocks, K only: key [0, H, 1], key_cache [0, 1, H, 1] */
  reg_desc(&k, LLMK_F16, 3, (int64_t[]){0, H, 1}, one, NULL);
  reg_desc(&kc, LLMK_F16, 4, (int64_t[]){0, 1, H, 1}, one, NULL);
  size_t ws = 1;
  llmk_plan *plan = NULL;
  llmk_status st = reg_p1("empty, H = 2^63-2, blocks", &k, NULL, &kc, NULL, &slots,
                          LLMK_KV_BLOCKS, &ws, &plan);
  TU_CHECK(st == LLMK_SUCCESS && ws == 0, "empty, H = 2^63-2, blocks: %d ws %zu ('%s')",
           (int)st, ws, llmk_last_error());
  if (st == LLMK_SUCCESS) {
    st = llmk_scatter_pa_kv_cache(NULL, 0, plan, NULL);
    TU_CHECK(st == LLMK_SUCCESS, "empty, H = 2^63-2, blocks: phase 2 %d ('%s')", (int)st,
             llmk_last_error());
  }
  /* x-split, K and V: key [0, H, 8], key_cache [0, H, 1, 1, 8], value_cache [0, H, 8, 1];
   * and the cache empty (num_blocks 0) under a non-empty block size */
  reg_desc(&k, LLMK_F16, 3, (int64_t[]){0, H, 8}, one, NULL);
  reg_desc(&kc, LLMK_F16, 5, (int64_t[]){0, H, 1, 1, 8}, one, NULL);
  reg_desc(&v, LLMK_F16, 3, (int64_t[]){0, H, 8}, one, NULL);
  reg_desc(&vc, LLMK_F16, 4, (int64_t[]){0, H, 8, 1}, one, NULL);
  st = reg_p1("empty, H = 2^63-2, xsplit", &k, &v, &kc, &vc, &slots, LLMK_KV_XSPLIT, &ws,
              &plan);
  TU_CHECK(st == LLMK_SUCCESS && ws == 0, "empty, H = 2^63-2, xsplit: %d ws %zu ('%s')",
           (int)st, ws, llmk_last_error());
  if (st == LLMK_SUCCESS) {
    st = llmk_scatter_pa_kv_cache(NULL, 0, plan, NULL);
    TU_CHECK(st == LLMK_SUCCESS, "empty, H = 2^63-2, xsplit: phase 2 %d ('%s')", (int)st,
             llmk_last_error());
  }
}

/* Finding 6: a value row of D = 0 into an x-split value cache: prefetching its runs
 * computed (len - 1) * stride + 1 bytes with len 0. */
static void test_reg_value_d0_xsplit(void) {
  const int64_t T = 6;
  th_tensor k, v, kc, vc, slots;
  th_tensor_make(&k, LLMK_F16, 3, (int64_t[]){T, 1, 8}, NULL);
  th_tensor_make(&v, LLMK_F16, 3, (int64_t[]){T, 1, 0}, (int64_t[]){1, 1, 1});
  th_tensor_make(&kc, LLMK_F16, 5, (int64_t[]){1, 1, 1, 8, 8}, NULL);
  th_tensor_make(&vc, LLMK_F16, 4, (int64_t[]){1, 1, 0, 8}, (int64_t[]){8, 8, 8, 1});
  th_tensor_make(&slots, LLMK_I64, 1, (int64_t[]){T}, NULL);
  th_fill_pattern(k.t.data, k.buf.size, 5);
  for (int64_t t = 0; t < T; t++) ((int64_t *)slots.t.data)[t] = t;
  size_t ws = 0;
  llmk_plan *plan = NULL;
  llmk_status st = reg_p1("value D = 0, xsplit", &k.t, &v.t, &kc.t, &vc.t, &slots.t,
                          LLMK_KV_XSPLIT, &ws, &plan);
  TU_CHECK(st == LLMK_SUCCESS, "value D = 0, xsplit: phase 1 %d ('%s')", (int)st,
           llmk_last_error());
  if (st == LLMK_SUCCESS) {
    double t0 = tu_now();
    st = th_run_plan(llmk_scatter_pa_kv_cache, plan, ws, NULL);
    TU_CHECK(st == LLMK_SUCCESS && tu_now() - t0 < 1.0,
             "value D = 0, xsplit: phase 2 %d in %.2f s ('%s')", (int)st, tu_now() - t0,
             llmk_last_error());
    /* key_cache [1, 1, 1, bs=8, x=8]: slot t's 8 elements are key[t] */
    TU_CHECK(memcmp(kc.t.data, k.t.data, (size_t)T * 16) == 0,
             "value D = 0, xsplit: key_cache rows differ from key");
    TU_CHECK(th_tensor_guards_ok(&kc) && th_tensor_guards_ok(&vc),
             "value D = 0, xsplit: a guard zone was written");
  }
  th_tensor_free(&k);
  th_tensor_free(&v);
  th_tensor_free(&kc);
  th_tensor_free(&vc);
  th_tensor_free(&slots);
}

/* Class (b): H*D of an NZ key overflowing int64 (an empty key, T = 0) is refused, not
 * computed; runs that merge over a stride only an extent of 1 allows (INT64_MAX) do not
 * overflow; T so large that the duplicate table's size would wrap is not looped over
 * when nothing is moved (an empty key row). */
static void test_reg_overflows(void) {
  const int64_t one[5] = {1, 1, 1, 1, 1};
  llmk_tensor k, kc, slots;
  size_t ws = 1;
  llmk_plan *plan = NULL;
  reg_desc(&slots, LLMK_I64, 1, (int64_t[]){0}, one, NULL);
  reg_desc(&k, LLMK_F16, 3, (int64_t[]){0, INT64_C(1) << 62, 4}, one, NULL);
  reg_desc(&kc, LLMK_F16, 4, (int64_t[]){0, 1, 1, 16}, one, NULL);
  llmk_status st =
      reg_p1("nz, H*D overflows", &k, NULL, &kc, NULL, &slots, LLMK_KV_NZ, &ws, &plan);
  th_check_refused("nz, H*D overflows", st, LLMK_ERROR_INVALID_SHAPE, &plan, &ws,
                   "scatter_pa_kv_cache", "H*D");
  if (st == LLMK_SUCCESS) llmk_plan_destroy(plan);

  /* blocks: key [1, 3, 1] with strides [3, 1, INT64_MAX] (D = 1: any stride) */
  {
    th_tensor kk, cc, ss;
    th_tensor_make(&kk, LLMK_F16, 3, (int64_t[]){1, 3, 1}, (int64_t[]){3, 1, INT64_MAX});
    th_tensor_make(&cc, LLMK_F16, 4, (int64_t[]){1, 1, 3, 1}, NULL);
    th_tensor_make(&ss, LLMK_I64, 1, (int64_t[]){1}, NULL);
    th_fill_pattern(kk.t.data, kk.buf.size, 6);
    st = reg_p1("blocks, D stride INT64_MAX", &kk.t, NULL, &cc.t, NULL, &ss.t,
                LLMK_KV_BLOCKS, &ws, &plan);
    TU_CHECK(st == LLMK_SUCCESS, "blocks, D stride INT64_MAX: phase 1 %d ('%s')", (int)st,
             llmk_last_error());
    if (st == LLMK_SUCCESS) {
      st = th_run_plan(llmk_scatter_pa_kv_cache, plan, ws, NULL);
      TU_CHECK(st == LLMK_SUCCESS && memcmp(cc.t.data, kk.t.data, 6) == 0,
               "blocks, D stride INT64_MAX: phase 2 %d or wrong bytes", (int)st);
    }
    th_tensor_free(&kk);
    th_tensor_free(&cc);
    th_tensor_free(&ss);
  }

  /* T = 2^62 + 1 padding tokens of empty rows (slot_mapping stride 0) */
  int64_t pad = -1, T = (INT64_C(1) << 62) + 1;
  reg_desc(&slots, LLMK_I64, 1, (int64_t[]){T}, (int64_t[]){0}, &pad);
  reg_desc(&k, LLMK_F16, 3, (int64_t[]){T, 0, 8}, one, NULL);
  reg_desc(&kc, LLMK_F16, 4, (int64_t[]){1, 1, 0, 8}, one, NULL);
  st = reg_p1("T = 2^62+1, empty rows", &k, NULL, &kc, NULL, &slots, LLMK_KV_BLOCKS, &ws,
              &plan);
  TU_CHECK(st == LLMK_SUCCESS && ws == 0, "T = 2^62+1, empty rows: %d ws %zu ('%s')",
           (int)st, ws, llmk_last_error());
  if (st == LLMK_SUCCESS) llmk_plan_destroy(plan);
}

static void test_regressions(void) {
  double t0 = tu_now();
  test_reg_empty_huge_heads();
  test_reg_value_d0_xsplit();
  test_reg_overflows();
  printf("regressions: %.2f s\n", tu_now() - t0);
}

int main(void) {
  double t0 = tu_now();
  tu_seed(20240817);
  static const int threads[3] = {0, 1, 2};
  th_sweep_init(&g_sw, threads, 3);
  g_native = llmk_get_native_isa();
  printf("native isa %s, isa in force %s, threading %s%s\n", llmk_isa_name(g_native),
         llmk_isa_name(llmk_get_isa()), llmk_threading_runtime(),
         SLOW ? " (sanitizer build: reduced case counts)" : "");
  test_regressions();
  test_samples();
  test_mixed_kv_dtypes();
  test_errors();
  test_workspace_and_plans();
  test_duplicates();
  test_large();
  test_random();
  llmk_set_max_isa(g_native);
  th_sweep_free(&g_sw);
  printf("fp8 NaN bytes where the library chose the other quiet NaN of the sign: %ld\n",
         g_nan_equiv);
  printf("time %.2f s\n", tu_now() - t0);
  return tu_finish("test_scatter_pa_kv_cache");
}
