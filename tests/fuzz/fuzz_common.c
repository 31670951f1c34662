/* SPDX-License-Identifier: Apache-2.0 */
/* See fuzz_common.h. */
#include "fuzz_common.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fz_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "fuzz: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\nfuzz: llmk_last_error: %s\n", llmk_last_error());
  va_end(ap);
  abort();
}

/* ------------------------------------------------------------------ reader */

uint8_t fz_u8(fz_reader *r) {
  return r->i < r->n ? r->p[r->i++] : 0;
}
uint64_t fz_u64(fz_reader *r) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)fz_u8(r) << (8 * i);
  return v;
}
bool fz_bool(fz_reader *r) {
  return fz_u8(r) & 1;
}
int64_t fz_range(fz_reader *r, int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
  uint64_t v = fz_u8(r);
  if (span > 256) v |= (uint64_t)fz_u8(r) << 8;
  return (int64_t)((uint64_t)lo + v % span);
}

const int64_t fz_special[15] = {INT32_MAX,
                                (int64_t)1 << 31,
                                (int64_t)1 << 32,
                                (int64_t)1 << 40,
                                (int64_t)1 << 53,
                                (int64_t)1 << 61,
                                (int64_t)1 << 62,
                                ((int64_t)1 << 62) + 1,
                                INT64_MAX - 1,
                                INT64_MAX,
                                INT64_MIN,
                                -1,
                                -2,
                                INT64_MIN + 1,
                                ((int64_t)1 << 32) + 1};

static int64_t int_tag(fz_reader *r, uint8_t t) {
  if (t < 0xC0) return t & 15;
  if (t < 0xE0) return 16 + fz_u8(r);
  if (t < 0xF0) {
    int64_t lo = fz_u8(r);
    return lo | (int64_t)fz_u8(r) << 8;
  }
  if (t < 0xFF) return fz_special[t - 0xF0];
  return (int64_t)fz_u64(r);
}
int64_t fz_int(fz_reader *r) {
  return int_tag(r, fz_u8(r));
}
int64_t fz_index(fz_reader *r, int64_t hi) {
  uint8_t t = fz_u8(r);
  if (t < 0xB0) return hi > 0 ? t % hi : t;
  if (t < 0xC0) return -1;
  if (t < 0xD0) return hi;
  return fz_int(r);
}

/* ----------------------------------------------------------------- buffers */

typedef struct buf {
  uint8_t *base; /* block start */
  size_t n;      /* bytes compared / snapshotted: the whole block */
  uint8_t *snap, *res;
} buf;

static buf g_bufs[FZ_MAX_BUFS];
static int g_nbufs;
static fz_tensor *g_tensors[FZ_MAX_TENSORS];
static int g_ntensors;
static fz_alloc_fn g_alloc;
static fz_free_fn g_free;

void fz_set_allocator(fz_alloc_fn a, fz_free_fn f) {
  g_alloc = a;
  g_free = f;
}

static void *default_alloc(size_t n, size_t *n_out) {
  *n_out = n;
  return malloc(n ? n : 1);
}

static int new_buf(size_t n) {
  if (g_nbufs == FZ_MAX_BUFS) return -1;
  size_t got = n;
  void *p = g_alloc ? g_alloc(n, &got) : default_alloc(n, &got);
  if (!p) return -1;
  buf *b = &g_bufs[g_nbufs];
  b->base = p;
  b->n = got;
  b->snap = b->res = NULL;
  return g_nbufs++;
}

void fz_begin(void) {
  for (int i = 0; i < g_nbufs; i++) {
    if (g_free)
      g_free(g_bufs[i].base);
    else
      free(g_bufs[i].base);
    free(g_bufs[i].snap);
    free(g_bufs[i].res);
  }
  g_nbufs = 0;
  g_ntensors = 0;
}

bool fz_any_overflow(void) {
  for (int i = 0; i < g_ntensors; i++)
    if (g_tensors[i]->overflow || g_tensors[i]->big) return true;
  return false;
}

/* ------------------------------------------------------------------ values */

static uint64_t rng_next(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint16_t f2h(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t s = (x >> 16) & 0x8000, ex = (x >> 23) & 0xff, m = (x >> 13) & 0x3ff;
  if (ex == 0xff) return (uint16_t)(s | 0x7c00 | (m ? 0x200 : 0));
  int e = (int)ex - 127 + 15;
  if (e >= 31) return (uint16_t)(s | 0x7c00);
  if (e <= 0) return (uint16_t)s;
  return (uint16_t)(s | ((uint32_t)e << 10) | m);
}

static void store(llmk_dtype dt, void *p, int64_t iv, float fv, bool is_float) {
  switch (dt) {
    case LLMK_F32: {
      float f = is_float ? fv : (float)iv;
      memcpy(p, &f, 4);
      break;
    }
    case LLMK_F16: {
      uint16_t h = f2h(is_float ? fv : (float)iv);
      memcpy(p, &h, 2);
      break;
    }
    case LLMK_BF16: {
      float f = is_float ? fv : (float)iv;
      uint32_t x;
      memcpy(&x, &f, 4);
      uint16_t h = (uint16_t)(x >> 16);
      memcpy(p, &h, 2);
      break;
    }
    case LLMK_I32: {
      int32_t v = is_float ? (fv > -2e9f && fv < 2e9f ? (int32_t)fv : 0) : (int32_t)iv;
      memcpy(p, &v, 4);
      break;
    }
    case LLMK_I64: {
      int64_t v = is_float ? (fv > -9e18f && fv < 9e18f ? (int64_t)fv : 0) : iv;
      memcpy(p, &v, 8);
      break;
    }
    default: {
      uint8_t v = (uint8_t)(is_float ? (fv > -1e9f && fv < 1e9f ? (int)fv : 0) : iv);
      memcpy(p, &v, 1);
    }
  }
}

static const float specials[] = {0.0f,        -0.0f,  1.0f / 0.0f, -1.0f / 0.0f,
                                 0.0f / 0.0f, 1e-40f, 65504.0f,    3e38f};

/* Fills a whole block by element slots of size es. */
static void fill_block(buf *b, llmk_dtype dt, size_t es, uint8_t mode, uint8_t seed) {
  uint64_t s = seed * 0x100000001ull + mode;
  if (es == 0) es = 1;
  switch (mode % 4) {
    case 0: /* small values */
      for (size_t o = 0; o + es <= b->n; o += es) {
        uint64_t v = rng_next(&s);
        if (dt == LLMK_F32 || dt == LLMK_F16 || dt == LLMK_BF16)
          store(dt, b->base + o, 0, (float)((int)(v % 33) - 16) * 0.25f, true);
        else if (dt == LLMK_FP8_E4M3FN || dt == LLMK_FP8_E5M2)
          b->base[o] = (uint8_t)(v & 0x77);
        else
          store(dt, b->base + o, (int64_t)(v % 8), 0, false);
      }
      break;
    case 1:
      for (size_t o = 0; o < b->n; o++) b->base[o] = (uint8_t)rng_next(&s);
      break;
    case 2:
      memset(b->base, 0, b->n);
      break;
    default: /* floats with special values */
      for (size_t o = 0; o + es <= b->n; o += es) {
        uint64_t v = rng_next(&s);
        float f = (v & 15) == 0 ? specials[(v >> 4) % 8]
                                : (float)((int64_t)(v >> 8) % 2000001 - 1000000) * 4e-6f;
        store(dt, b->base + o, 0, f, true);
      }
  }
}

/* ----------------------------------------------------------------- tensors */

static const int64_t one = 1;

llmk_tensor *fz_tensor_new(fz_reader *r, fz_tensor *ft, const llmk_dtype *dtypes, int ndt,
                           int rank, const int64_t *shape) {
  memset(ft, 0, sizeof *ft);
  ft->buf = -1;
  llmk_tensor *t = &ft->t;
  uint8_t d = fz_u8(r);
  t->dtype = d < 0xF0 ? dtypes[d % ndt] : (llmk_dtype)((d & 15) % 11);
  uint8_t pert = fz_u8(r);
  int64_t sh[LLMK_MAX_RANK];
  for (int i = 0; i < LLMK_MAX_RANK; i++) sh[i] = i < rank ? shape[i] : one;
  if (pert >= 0xE0 && pert < 0xF0 && rank > 0) sh[(pert & 7) % rank] = fz_int(r);
  int32_t rk = rank;
  if (pert >= 0xF0 && pert < 0xF8) rk = pert & 7;
  if (pert >= 0xF8) rk = (pert & 1) ? LLMK_MAX_RANK + 1 + (pert & 6) : -1 - (pert & 6);
  t->rank = rk;
  bool bad_rank = rk < 0 || rk > LLMK_MAX_RANK;
  int nr = bad_rank ? 0 : rk;
  for (int i = 0; i < nr; i++) t->shape[i] = sh[i];

  /* strides */
  uint8_t sm = fz_u8(r) % 8;
  int64_t acc = 1;
  for (int i = nr - 1; i >= 0; i--) {
    int64_t ext = t->shape[i] > 0 ? t->shape[i] : 1;
    int64_t pad = sm == 4 ? fz_range(r, 0, 3) : 0;
    t->strides[i] = acc;
    if (__builtin_add_overflow(ext, pad, &ext) || __builtin_mul_overflow(acc, ext, &acc))
      acc = INT64_MAX;
  }
  if (sm == 5) {
    for (int i = 0; i < nr; i++) t->strides[i] = fz_int(r);
  } else if (sm == 6 && nr > 0) {
    t->strides[fz_range(r, 0, nr - 1)] = 0;
  } else if (sm == 7) { /* column-major */
    acc = 1;
    for (int i = 0; i < nr; i++) {
      t->strides[i] = acc;
      if (__builtin_mul_overflow(acc, t->shape[i] > 0 ? t->shape[i] : 1, &acc))
        acc = INT64_MAX;
    }
  }

  /* span, with the library's overflow rules */
  bool bad = bad_rank || t->dtype <= LLMK_DTYPE_INVALID || t->dtype >= LLMK_DTYPE_COUNT_;
  bool empty = false;
  for (int i = 0; i < nr; i++) {
    if (t->shape[i] < 0 || t->strides[i] < 0) bad = true;
    if (t->shape[i] == 0) empty = true;
  }
  size_t es = llmk_dtype_size(t->dtype);
  int64_t lo = 0, hi = 0; /* element offsets of the lowest and highest element */
  bool ovf = false;
  if (!bad_rank && !empty) {
    for (int i = 0; i < nr; i++) {
      int64_t term;
      if (t->shape[i] < 0 ||
          __builtin_mul_overflow(t->shape[i] - 1, t->strides[i], &term) ||
          __builtin_add_overflow(term < 0 ? lo : hi, term, term < 0 ? &lo : &hi)) {
        ovf = true;
        break;
      }
    }
  }
  int64_t bytes = 0;
  if (!ovf && !bad_rank && !empty) {
    int64_t n;
    if (__builtin_sub_overflow(hi, lo, &n) || __builtin_add_overflow(n, 1, &n) ||
        __builtin_mul_overflow(n, (int64_t)(es ? es : 1), &bytes) ||
        (uint64_t)bytes > (uint64_t)(SIZE_MAX / 2))
      ovf = true;
  }
  if (ovf) bad = true;
  ft->overflow = bad;

  uint8_t a = fz_u8(r); /* data: own block, view of an earlier block, or NULL */
  uint8_t fill = fz_u8(r), seed = fz_u8(r);
  if (bad_rank || ovf || (size_t)bytes > FZ_MAX_BYTES) {
    ft->big = !ft->overflow;
    if (!(a & 1)) {
      ft->buf = new_buf(64);
      if (ft->buf >= 0) {
        t->data = g_bufs[ft->buf].base;
        fill_block(&g_bufs[ft->buf], t->dtype, es, fill, seed);
      }
    }
  } else if (a == 0xEE) {
    t->data = NULL;
    if (!empty) ft->overflow = true; /* NULL data with elements: must be refused */
  } else {
    bool viewed = false;
    if (a >= 0xF0 && g_ntensors > 0) {
      fz_tensor *src = g_tensors[(a & 15) % g_ntensors];
      if (src->buf >= 0 && !src->big) {
        buf *b = &g_bufs[src->buf];
        int64_t off = fz_range(r, 0, (int64_t)b->n);
        size_t e1 = es ? es : 1;
        off -= off % (int64_t)e1;
        int64_t start = off + lo * (int64_t)e1;
        if (start >= 0 && (uint64_t)start + (uint64_t)bytes <= b->n) {
          ft->buf = src->buf;
          t->data = b->base + off;
          viewed = true;
        }
      }
    }
    if (!viewed) {
      ft->buf = new_buf((size_t)bytes);
      if (ft->buf >= 0) {
        buf *b = &g_bufs[ft->buf];
        /* a view flush with the block's end (the block may be rounded up) */
        t->data = b->base + (b->n - (size_t)bytes) - lo * (int64_t)(es ? es : 1);
        fill_block(b, t->dtype, es, fill, seed);
      } else {
        t->data = NULL;
        if (!empty) ft->overflow = true;
      }
    }
  }
  if (g_ntensors < FZ_MAX_TENSORS) g_tensors[g_ntensors++] = ft;
  return t;
}

llmk_tensor *fz_tensor_opt(fz_reader *r, fz_tensor *ft, const llmk_dtype *dtypes, int ndt,
                           int rank, const int64_t *shape, int absent_mod) {
  if (fz_u8(r) % absent_mod == 0) {
    memset(ft, 0, sizeof *ft);
    ft->buf = -1;
    return NULL;
  }
  return fz_tensor_new(r, ft, dtypes, ndt, rank, shape);
}

int64_t fz_numel(const llmk_tensor *t) {
  if (t->rank < 0 || t->rank > LLMK_MAX_RANK) return 0;
  for (int i = 0; i < t->rank; i++) /* a 0 anywhere, even after dims that overflow */
    if (t->shape[i] <= 0) return 0;
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++)
    if (__builtin_mul_overflow(n, t->shape[i], &n)) return INT64_MAX;
  return n;
}

void *fz_elem(const fz_tensor *ft, int64_t lin) {
  const llmk_tensor *t = &ft->t;
  if (ft->big || ft->overflow || !t->data || lin >= fz_numel(t)) return NULL;
  int64_t off = 0;
  for (int i = t->rank - 1; i >= 0; i--) {
    off += (lin % t->shape[i]) * t->strides[i];
    lin /= t->shape[i];
  }
  return (char *)t->data + off * (int64_t)llmk_dtype_size(t->dtype);
}

void fz_set_int(fz_tensor *ft, int64_t lin, int64_t v) {
  void *p = fz_elem(ft, lin);
  if (p) store(ft->t.dtype, p, v, 0, false);
}
void fz_set_float(fz_tensor *ft, int64_t lin, float v) {
  void *p = fz_elem(ft, lin);
  if (p) store(ft->t.dtype, p, 0, v, true);
}

void fz_fill_index(fz_reader *r, fz_tensor *ft, int64_t hi) {
  int64_t n = fz_numel(&ft->t);
  if (n > 4096) n = 4096;
  for (int64_t i = 0; i < n; i++) fz_set_int(ft, i, fz_index(r, hi));
}

/* ------------------------------------------------------------------ runner */

static llmk_context *g_ctx[3];

llmk_context *fz_ctx(int which) {
  if (which <= 0 || which > 2) return NULL;
  if (!g_ctx[which] && llmk_context_create(which, &g_ctx[which]) != LLMK_SUCCESS)
    fz_fail("llmk_context_create(%d) failed", which);
  return g_ctx[which];
}

static void snapshot(void) {
  for (int i = 0; i < g_nbufs; i++) {
    buf *b = &g_bufs[i];
    free(b->snap);
    b->snap = malloc(b->n ? b->n : 1);
    memcpy(b->snap, b->base, b->n);
  }
}
static void restore(void) {
  for (int i = 0; i < g_nbufs; i++) memcpy(g_bufs[i].base, g_bufs[i].snap, g_bufs[i].n);
}
static void save_results(void) {
  for (int i = 0; i < g_nbufs; i++) {
    buf *b = &g_bufs[i];
    free(b->res);
    b->res = malloc(b->n ? b->n : 1);
    memcpy(b->res, b->base, b->n);
  }
}
static void compare(const char *op, const char *what, bool with_snap) {
  for (int i = 0; i < g_nbufs; i++) {
    buf *b = &g_bufs[i];
    const uint8_t *want = with_snap ? b->snap : b->res;
    if (memcmp(b->base, want, b->n) == 0) continue;
    size_t o = 0;
    while (b->base[o] == want[o]) o++;
    size_t a = o & ~(size_t)7; /* the aligned 8 bytes around it, for the element */
    uint64_t got = 0, exp = 0;
    memcpy(&got, b->base + a, a + 8 <= b->n ? 8 : b->n - a);
    memcpy(&exp, want + a, a + 8 <= b->n ? 8 : b->n - a);
    fz_fail(
        "%s: %s: buffer %d (%zu bytes) differs at byte %zu: 0x%02x, expected 0x%02x "
        "(bytes %zu..: 0x%016llx, expected 0x%016llx)",
        op, what, i, b->n, o, b->base[o], want[o], a, (unsigned long long)got,
        (unsigned long long)exp);
  }
}

void *fz_block_of(const fz_tensor *ft) {
  return ft->buf >= 0 ? g_bufs[ft->buf].base : NULL;
}
void fz_snapshot(void) {
  snapshot();
}
void fz_check_unchanged(const char *op, const char *what) {
  compare(op, what, true);
}

static void *ws_alloc(size_t n) {
  return n ? malloc(n) : NULL;
}

int fz_run(fz_reader *r, const fz_op *op) {
  uint8_t flags = fz_u8(r);
  bool must_refuse = false, big = false;
  for (int i = 0; i < g_ntensors; i++) {
    must_refuse |= g_tensors[i]->overflow;
    big |= g_tensors[i]->big;
  }
  snapshot();
  llmk_isa native = llmk_get_native_isa();
  llmk_set_max_isa(LLMK_ISA_SCALAR);
  size_t ws = 0;
  void *plan = NULL;
  int st = op->plan(op->arg, &ws, &plan);
  if (st != 0) {
    compare(op->name, "refused phase 1 wrote", true);
    llmk_set_max_isa(native);
    return -1;
  }
  /* the aclnn entry points ignore the tensors their mode does not use (CANN's rules: a
   * K-only call's value, scatterMode under PA_NZ, ...), so there a bad descriptor need
   * not be refused; the native ops use every tensor they are given */
  if (must_refuse && strcmp(op->name, "aclnn") != 0)
    fz_fail(
        "%s: phase 1 accepted a tensor with an invalid dtype/rank, a negative extent "
        "or stride, an overflowing span or NULL data with elements",
        op->name);
  if (big || ws > FZ_MAX_BYTES) {
    op->destroy(op->arg, plan);
    compare(op->name, "phase 1 wrote", true);
    llmk_set_max_isa(native);
    return -1;
  }
  compare(op->name, "phase 1 wrote", true);
  if ((flags & 1) && ws > 0) {
    void *w = malloc(ws - 1 ? ws - 1 : 1);
    st = op->exec(op->arg, w, ws - 1, plan, 0);
    free(w);
    if (st == 0)
      fz_fail("%s: phase 2 accepted a workspace of %zu < %zu", op->name, ws - 1, ws);
    compare(op->name, "phase 2 with a short workspace wrote", true);
    size_t ws2 = 0;
    st = op->plan(op->arg, &ws2, &plan);
    if (st != 0 || ws2 != ws)
      fz_fail("%s: phase 1 repeated gave %d (workspace %zu, before %zu)", op->name, st,
              ws2, ws);
  }
  void *w = ws_alloc(ws);
  int st2 = op->exec(op->arg, w, ws, plan, 0);
  free(w);
  if (st2 != 0) {
    compare(op->name, "refused phase 2 wrote", true);
    llmk_set_max_isa(native);
    return st2;
  }
  save_results();
  for (int isa = LLMK_ISA_SCALAR; isa <= (int)native; isa++) {
    /* (another architecture's ISA caps to scalar: not a run of its own) */
    if (llmk_set_max_isa((llmk_isa)isa) != (llmk_isa)isa) continue;
    for (int which = 1; which <= 2; which++) {
      restore();
      llmk_set_max_isa((llmk_isa)isa);
      size_t wsi = 0;
      plan = NULL;
      st = op->plan(op->arg, &wsi, &plan);
      if (st != 0)
        fz_fail("%s: phase 1 on %s refused (%d) what scalar accepted", op->name,
                llmk_isa_name((llmk_isa)isa), st);
      if (wsi > FZ_MAX_BYTES) {
        op->destroy(op->arg, plan);
        continue;
      }
      w = ws_alloc(wsi);
      st = op->exec(op->arg, w, wsi, plan, which);
      free(w);
      if (st != 0)
        fz_fail("%s: phase 2 on %s, %d thread(s) gave %d where scalar succeeded",
                op->name, llmk_isa_name((llmk_isa)isa), which, st);
      char what[96];
      snprintf(what, sizeof what, "result on %s with %d thread(s) differs from scalar's",
               llmk_isa_name((llmk_isa)isa), which);
      compare(op->name, what, false);
    }
  }
  llmk_set_max_isa(native);
  return 0;
}

void fz_plan_destroy(void *arg, void *plan) {
  (void)arg;
  llmk_plan_destroy(plan);
}
