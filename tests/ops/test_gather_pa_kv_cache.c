/* SPDX-License-Identifier: Apache-2.0 */
/* gather_pa_kv_cache, the read path of the paged KV cache: hand-computed samples,
 * random cases against tests/ref/gather_pa_kv_cache_ref.c (every
 * layout, strided and shared views, every dtype pair, fp8 dequantization), scatter ->
 * gather round trips, an error table, plan and workspace checks, and bit-identical
 * results for every ISA and context. Expected f16/bf16/fp8 values come from
 * tests/ref/convert_ref.c, never from the library's own conversions. */
#include <float.h>
#include <math.h>
#include <time.h>

#include "convert_ref.h"
#include "gather_pa_kv_cache_ref.h"
#include "harness.h"
#include "llmk/llmk.h"

/* Under AddressSanitizer: 500 random cases instead of 1200. The threaded cases keep
 * their size: only they reach the library's streaming-store path (>= 16 MiB). */
#ifdef __SANITIZE_ADDRESS__
#define SMALL 1
#else
#define SMALL 0
#endif

enum { X_KC, X_VC, X_BT, X_SL, X_KS, X_VS, X_KO, X_VO, X_COUNT };
static const char *const tname[X_COUNT] = {"key_cache", "value_cache", "block_tables",
                                           "seq_lens",  "k_scale",     "v_scale",
                                           "key_out",   "value_out"};
#define ALL_HOSTS 0xffu
#define OUT_HOSTS ((1u << X_KO) | (1u << X_VO))

static uint64_t mix(
    uint64_t *x) { /* splitmix64: buffer patterns independent of tu_rand */
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

#define PICK(arr) ((arr)[tu_rand_range(0, (int64_t)(sizeof(arr) / sizeof((arr)[0])) - 1)])

static int64_t max64(int64_t a, int64_t b) {
  return a > b ? a : b;
}

/* ------------------------------------------------------------ descriptors */

/* A tensor's descriptor before it is built; `host` is the tensor whose buffer holds
 * it (itself, unless views share a buffer) and `off` its element offset there. */
typedef struct td {
  int present;
  llmk_dtype dt;
  int rank;
  int64_t shape[LLMK_MAX_RANK], strides[LLMK_MAX_RANK];
  int host;
  int64_t off;
} td;

static int64_t td_numel(const td *d) {
  int64_t n = 1;
  for (int k = 0; k < d->rank; k++) n *= d->shape[k];
  return n;
}

static int64_t td_span(const td *d) { /* elements */
  if (td_numel(d) == 0) return 0;
  int64_t s = 0;
  for (int k = 0; k < d->rank; k++) s += (d->shape[k] - 1) * d->strides[k];
  return s + 1;
}

static void td_set(td *d, llmk_dtype dt, int rank, const int64_t *shape, int host) {
  memset(d, 0, sizeof *d);
  d->present = 1;
  d->dt = dt;
  d->rank = rank;
  for (int k = 0; k < rank; k++) d->shape[k] = shape[k];
  d->host = host;
  int64_t s = 1;
  for (int k = rank - 1; k >= 0; k--) {
    d->strides[k] = s;
    s *= max64(d->shape[k], 1);
  }
}

/* Stride kinds: 0 contiguous, 1 row-major with padding at every level, 2 a random
 * order of the dimensions with padding, 3 like 1 with element stride 2. */
static void make_strides(td *d, int kind) {
  int order[LLMK_MAX_RANK];
  for (int i = 0; i < d->rank; i++) order[i] = i;
  if (kind == 2)
    for (int i = d->rank - 1; i > 0; i--) {
      int j = (int)tu_rand_range(0, i), t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
  int64_t s = kind == 3 ? 2 : 1;
  for (int j = d->rank - 1; j >= 0; j--) {
    int k = order[j];
    d->strides[k] = s;
    s = s * max64(d->shape[k], 1) + (kind >= 1 ? tu_rand_range(0, 3) : 0);
  }
}

/* ------------------------------------------------------------------ cases */

typedef struct gcase {
  llmk_kv_layout layout;
  llmk_dtype cdt, odt, bt_dt, sl_dt; /* cache, outputs, block_tables, seq_lens */
  int64_t nb, bs, H, Dk, Dv, B, mb, T, T_delta;
  int has_v;
  int ks_kind, vs_kind; /* 0 none, 1 [], 2 [1], 3 [H], 4 [H] with stride 2 */
  /* stride kinds. Caches: 0-3 as make_strides, 4 HND (blocks), 5 K and V views of one
   * [nb, 2, bs, H, D] buffer, 6 of one [2, nb, bs, H, D] buffer. Outputs: 0-3, 4 K and
   * V views of one [T, H, Dk + Dv + pad] buffer. block_tables: 0 contiguous, 1 padded
   * rows, 2 column stride 2, 3 column-major, 4 rows broadcast (stride 0).
   * seq_lens: stride kind + 1. */
  int kind[X_COUNT];
  int64_t *seq, *bt; /* seq[B], bt[B * mb] row-major */
  float *ks, *vs;    /* [H]; per-tensor scales use [0] */
  td d[X_COUNT];
} gcase;

static void case_vals_alloc(gcase *c) {
  free(c->seq);
  free(c->bt);
  free(c->ks);
  free(c->vs);
  c->seq = calloc((size_t)c->B + 1, sizeof *c->seq);
  c->bt = calloc((size_t)(c->B * c->mb) + 1, sizeof *c->bt);
  c->ks = calloc((size_t)c->H + 1, sizeof *c->ks);
  c->vs = calloc((size_t)c->H + 1, sizeof *c->vs);
  if (!c->seq || !c->bt || !c->ks || !c->vs) th_die("out of memory");
}

static void case_free(gcase *c) {
  free(c->seq);
  free(c->bt);
  free(c->ks);
  free(c->vs);
  c->seq = c->bt = NULL;
  c->ks = c->vs = NULL;
}

static void cache_desc(gcase *c, int v) {
  int k = v ? X_VC : X_KC;
  td *d = &c->d[k];
  int64_t D = v ? c->Dv : c->Dk, es = (int64_t)th_dtype_size(c->cdt);
  if (c->layout == LLMK_KV_BLOCKS) {
    int64_t s[4] = {c->nb, c->bs, c->H, D};
    td_set(d, c->cdt, 4, s, k);
  } else if (c->layout == LLMK_KV_XSPLIT && !v) {
    int64_t x = 16 / es, s[5] = {c->nb, c->H, D / x, c->bs, x};
    td_set(d, c->cdt, 5, s, k);
  } else if (c->layout == LLMK_KV_XSPLIT) {
    int64_t s[4] = {c->nb, c->H, D, c->bs};
    td_set(d, c->cdt, 4, s, k);
  } else {
    int64_t ld = 32 / es, s[4] = {c->nb, c->H * D / ld, c->bs, ld};
    td_set(d, c->cdt, 4, s, k);
  }
  int kind = c->kind[k];
  if (c->layout == LLMK_KV_BLOCKS && kind == 4) { /* HND: [nb, H, bs, D] in memory */
    d->strides[3] = 1;
    d->strides[1] = D;
    d->strides[2] = c->bs * D;
    d->strides[0] = c->H * c->bs * D;
  } else {
    make_strides(d, kind <= 3 ? kind : 0);
  }
}

/* Descriptors of every tensor from the case's parameters; outputs get
 * sum(seq_lens) + T_delta rows. */
static void case_layout(gcase *c) {
  memset(c->d, 0, sizeof c->d);
  c->T = c->T_delta;
  for (int64_t i = 0; i < c->B; i++) c->T += c->seq[i] > 0 ? c->seq[i] : 0;
  cache_desc(c, 0);
  if (c->has_v) cache_desc(c, 1);
  if (c->layout == LLMK_KV_BLOCKS && c->has_v && c->Dk == c->Dv &&
      (c->kind[X_KC] == 5 || c->kind[X_KC] == 6)) {
    int64_t blk = c->bs * c->H * c->Dk,
            st[4] = {c->kind[X_KC] == 5 ? 2 * blk : blk, c->H * c->Dk, c->Dk, 1};
    for (int k = X_KC; k <= X_VC; k++) {
      memcpy(c->d[k].strides, st, sizeof st);
      c->d[k].host = X_KC;
    }
    c->d[X_VC].off = c->kind[X_KC] == 5 ? blk : c->nb * blk;
  }
  {
    int64_t s[2] = {c->B, c->mb};
    td *b = &c->d[X_BT];
    td_set(b, c->bt_dt, 2, s, X_BT);
    switch (c->kind[X_BT]) {
      case 1:
        b->strides[0] = c->mb + 3;
        break;
      case 2:
        b->strides[0] = 2 * c->mb + 1;
        b->strides[1] = 2;
        break;
      case 3:
        b->strides[0] = 1;
        b->strides[1] = c->B + 2;
        break;
      case 4:
        b->strides[0] = 0;
        break;
      default:
        break;
    }
  }
  {
    int64_t s[1] = {c->B};
    td_set(&c->d[X_SL], c->sl_dt, 1, s, X_SL);
    c->d[X_SL].strides[0] = 1 + c->kind[X_SL];
  }
  for (int v = 0; v < 2; v++) {
    int kind = v ? c->vs_kind : c->ks_kind, k = v ? X_VS : X_KS;
    if (!kind) continue;
    int64_t s1[1] = {kind >= 3 ? c->H : 1};
    td_set(&c->d[k], LLMK_F32, kind == 1 ? 0 : 1, s1, k);
    if (kind == 4) c->d[k].strides[0] = 2;
  }
  {
    int64_t s[3] = {c->T, c->H, c->Dk};
    td_set(&c->d[X_KO], c->odt, 3, s, X_KO);
    if (c->has_v) {
      s[2] = c->Dv;
      td_set(&c->d[X_VO], c->odt, 3, s, X_VO);
    }
    if (c->has_v && c->kind[X_KO] == 4) { /* one [T, H, Dk + Dv + 2] buffer */
      int64_t pitch = c->Dk + c->Dv + 2, st[3] = {c->H * pitch, pitch, 1};
      for (int k = X_KO; k <= X_VO; k++) {
        memcpy(c->d[k].strides, st, sizeof st);
        c->d[k].host = X_KO;
      }
      c->d[X_VO].off = c->Dk + 1;
    } else {
      make_strides(&c->d[X_KO], c->kind[X_KO] <= 3 ? c->kind[X_KO] : 0);
      if (c->has_v) make_strides(&c->d[X_VO], c->kind[X_VO] <= 3 ? c->kind[X_VO] : 0);
    }
  }
}

/* ---------------------------------------------------------- tensor sets */

typedef struct tset {
  tu_buf buf[X_COUNT];
  int has_buf[X_COUNT], host[X_COUNT], pass[X_COUNT];
  llmk_tensor t[X_COUNT];
} tset;

static void put_int(void *data, llmk_dtype dt, int64_t elem, int64_t v) {
  char *p = (char *)data + elem * (int64_t)th_dtype_size(dt);
  if (dt == LLMK_I32) {
    if (v < INT32_MIN || v > INT32_MAX) th_die("value does not fit an i32 tensor");
    int32_t w = (int32_t)v;
    memcpy(p, &w, 4);
  } else {
    memcpy(p, &v, 8);
  }
}

/* Overwrites about 1 element in 8 of a float buffer with NaNs (quiet, signalling,
 * with payloads, both signs), infinities, signed zeros and subnormals. */
static void inject_specials(void *data, size_t bytes, llmk_dtype dt, uint64_t *rng) {
  static const uint32_t s32[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff812345u,
                                 0x7f800000u, 0xff800000u, 0x80000000u, 0x00000001u,
                                 0x807fffffu, 0x7fbfffffu};
  static const uint16_t s16[] = {0x7e00, 0xfe00, 0x7c01, 0xfd55, 0x7c00,
                                 0xfc00, 0x8000, 0x0001, 0x83ff, 0x7dff};
  static const uint16_t sb16[] = {0x7fc0, 0xffc0, 0x7f81, 0xff8f, 0x7f80,
                                  0xff80, 0x8000, 0x0001, 0x807f, 0x7fbf};
  size_t es = th_dtype_size(dt);
  if ((dt != LLMK_F32 && dt != LLMK_F16 && dt != LLMK_BF16) || bytes < es) return;
  size_t n = bytes / es;
  for (size_t i = 0; i < n / 8 + 1; i++) {
    char *p = (char *)data + (mix(rng) % n) * es;
    size_t j = mix(rng) % 10;
    if (dt == LLMK_F32)
      memcpy(p, &s32[j], 4);
    else
      memcpy(p, dt == LLMK_F16 ? &s16[j] : &sb16[j], 2);
  }
}

/* Buffers full of a pattern that depends only on `seed` (cache bytes are the cache
 * values, output bytes the "before" contents), then the index and scale values. */
static void tset_build(tset *s, const gcase *c, uint64_t seed) {
  memset(s, 0, sizeof *s);
  uint64_t rng = seed * 0x2545f4914f6cdd1dull + 17;
  for (int k = 0; k < X_COUNT; k++) {
    if (!c->d[k].present || c->d[k].host != k) continue;
    size_t size = 0;
    for (int j = 0; j < X_COUNT; j++)
      if (c->d[j].present && c->d[j].host == k && td_span(&c->d[j]) > 0) {
        size_t end =
            (size_t)(c->d[j].off + td_span(&c->d[j])) * th_dtype_size(c->d[j].dt);
        if (end > size) size = end;
      }
    s->buf[k] = tu_buf_alloc(size);
    s->has_buf[k] = 1;
    unsigned char *p = s->buf[k].data;
    for (size_t i = 0; i < size; i += 8) {
      uint64_t h = mix(&rng);
      memcpy(p + i, &h, size - i < 8 ? size - i : 8);
    }
    if (k == X_KC || k == X_VC) inject_specials(p, size, c->cdt, &rng);
  }
  for (int j = 0; j < X_COUNT; j++) {
    const td *d = &c->d[j];
    if (!d->present) continue;
    llmk_tensor *t = &s->t[j];
    memset(t, 0, sizeof *t);
    t->dtype = d->dt;
    t->rank = d->rank;
    memcpy(t->shape, d->shape, sizeof d->shape);
    memcpy(t->strides, d->strides, sizeof d->strides);
    t->data = (char *)s->buf[d->host].data + d->off * (int64_t)th_dtype_size(d->dt);
    s->host[j] = d->host;
    s->pass[j] = 1;
  }
  for (int64_t i = 0; i < c->B; i++) {
    put_int(s->t[X_SL].data, c->sl_dt, i * c->d[X_SL].strides[0], c->seq[i]);
    for (int64_t j = 0; j < c->mb; j++)
      put_int(s->t[X_BT].data, c->bt_dt,
              i * c->d[X_BT].strides[0] + j * c->d[X_BT].strides[1],
              c->bt[i * c->mb + j]);
  }
  for (int v = 0; v < 2; v++) {
    int k = v ? X_VS : X_KS;
    if (!c->d[k].present) continue;
    int64_t n = td_numel(&c->d[k]), st = c->d[k].rank ? c->d[k].strides[0] : 0;
    for (int64_t h = 0; h < n; h++)
      memcpy((float *)s->t[k].data + h * st, (v ? c->vs : c->ks) + h, 4);
  }
}

static void tset_rebase(tset *dst, const tset *src) {
  for (int j = 0; j < X_COUNT; j++) {
    dst->t[j] = src->t[j];
    if (src->pass[j] || src->t[j].data) {
      int h = src->host[j];
      if (src->t[j].data && src->has_buf[h])
        dst->t[j].data = (char *)dst->buf[h].data +
                         ((char *)src->t[j].data - (char *)src->buf[h].data);
    }
  }
  memcpy(dst->pass, src->pass, sizeof dst->pass);
  memcpy(dst->host, src->host, sizeof dst->host);
  memcpy(dst->has_buf, src->has_buf, sizeof dst->has_buf);
}

/* A byte-identical copy (guards included) with its own buffers. */
static void tset_copy(tset *dst, const tset *src) {
  memset(dst, 0, sizeof *dst);
  for (int k = 0; k < X_COUNT; k++) {
    if (!src->has_buf[k]) continue;
    th_buf_clone(&dst->buf[k], &src->buf[k]);
  }
  tset_rebase(dst, src);
}

static void tset_reset(tset *dst, const tset *src) { /* same shapes: contents only */
  for (int k = 0; k < X_COUNT; k++)
    if (src->has_buf[k]) th_buf_restore(&dst->buf[k], &src->buf[k]);
  tset_rebase(dst, src);
}

static void tset_free(tset *s) {
  for (int k = 0; k < X_COUNT; k++)
    if (s->has_buf[k]) tu_buf_free(&s->buf[k]);
  memset(s, 0, sizeof *s);
}

static int tset_equal(const tset *a, const tset *b) {
  for (int k = 0; k < X_COUNT; k++)
    if (a->has_buf[k] && !th_buf_same(&a->buf[k], &b->buf[k])) return 0;
  return 1;
}

/* ------------------------------------------------------------ comparison */

/* Output elements whose expected value is a NaN: any NaN of that sign is accepted. */
typedef struct nan_at {
  int host;
  size_t off; /* bytes from the host buffer's data */
  llmk_dtype dt;
  int neg;
} nan_at;
typedef struct nanlist {
  nan_at *v;
  size_t n, cap;
} nanlist;

static void nan_push(nanlist *l, int host, size_t off, llmk_dtype dt, int neg) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 64;
    l->v = realloc(l->v, l->cap * sizeof *l->v);
    if (!l->v) th_die("out of memory");
  }
  nan_at a = {host, off, dt, neg};
  l->v[l->n++] = a;
}

static int nan_bits(llmk_dtype dt, const void *p, int *neg) {
  if (dt == LLMK_F32) {
    uint32_t u;
    memcpy(&u, p, 4);
    *neg = (int)(u >> 31);
    return (u & 0x7fffffffu) > 0x7f800000u;
  }
  uint16_t u;
  memcpy(&u, p, 2);
  *neg = u >> 15;
  return (u & 0x7fff) > (dt == LLMK_F16 ? 0x7c00 : 0x7f80);
}

/* Index of the element of t (element size es) covering byte `rel` of its data. */
static int find_elem(const llmk_tensor *t, size_t es, int64_t rel, int64_t *idx) {
  int64_t n = 1, cnt[LLMK_MAX_RANK] = {0};
  for (int k = 0; k < t->rank; k++) n *= t->shape[k];
  for (int64_t i = 0; i < n; i++) {
    int64_t off = 0;
    for (int k = 0; k < t->rank; k++) off += cnt[k] * t->strides[k];
    if (rel >= off * (int64_t)es && rel < (off + 1) * (int64_t)es) {
      memcpy(idx, cnt, sizeof cnt);
      return 1;
    }
    for (int k = t->rank - 1; k >= 0; k--) {
      if (++cnt[k] < t->shape[k]) break;
      cnt[k] = 0;
    }
  }
  return 0;
}

static void report_diff(const tset *got, const tset *exp, int k, const char *label) {
  const unsigned char *g = got->buf[k].base, *e = exp->buf[k].base;
  size_t size = got->buf[k].size, i = 0, ndiff = 0;
  for (size_t j = 0; j < size + 2 * TU_GUARD; j++)
    if (g[j] != e[j]) {
      if (!ndiff) i = j;
      ndiff++;
    }
  if (i < TU_GUARD || i >= TU_GUARD + size) {
    TU_CHECK(0, "%s: guard bytes of the %s buffer changed (%zu bytes differ)", label,
             tname[k], ndiff);
    return;
  }
  int64_t rel = (int64_t)(i - TU_GUARD);
  for (int j = 0; j < X_COUNT; j++) {
    if (!exp->t[j].data || exp->host[j] != k || (!got->pass[j] && !exp->pass[j]))
      continue;
    size_t es = th_dtype_size(exp->t[j].dtype);
    int64_t jr = rel - ((const char *)exp->t[j].data - (const char *)exp->buf[k].data),
            idx[8];
    if (!es || !find_elem(&exp->t[j], es, jr, idx)) continue;
    char where[128] = "", val[64] = "";
    size_t w = 0;
    for (int r = 0; r < exp->t[j].rank && w < sizeof where - 24; r++)
      w += (size_t)snprintf(where + w, sizeof where - w, "%s%" PRId64, r ? "," : "",
                            idx[r]);
    size_t eb = (size_t)(jr - jr % (int64_t)es) + TU_GUARD +
                (size_t)((const char *)exp->t[j].data - (const char *)exp->buf[k].data);
    w = 0;
    for (size_t b = es; b-- > 0 && w < sizeof val - 12;)
      w += (size_t)snprintf(val + w, sizeof val - w, "%02x", g[eb + b]);
    w += (size_t)snprintf(val + w, sizeof val - w, " expected ");
    for (size_t b = es; b-- > 0 && w < sizeof val - 4;)
      w += (size_t)snprintf(val + w, sizeof val - w, "%02x", e[eb + b]);
    TU_CHECK(0, "%s: %s[%s] = 0x%s (%zu bytes differ)", label, tname[j], where, val,
             ndiff);
    return;
  }
  TU_CHECK(0,
           "%s: byte %" PRId64
           " of the %s buffer, outside every element, = 0x%02x, "
           "expected 0x%02x (%zu bytes differ)",
           label, rel, tname[k], g[i], e[i], ndiff);
}

/* Every buffer in `mask` (guards and gaps included) against the expected bytes; a NaN
 * of the expected sign is accepted where `nl` lists one. Returns 1 if all agree. */
static int tset_check(const tset *got, tset *exp, const nanlist *nl, unsigned mask,
                      const char *label) {
  int ok = 1;
  for (size_t i = 0; nl && i < nl->n; i++) {
    const nan_at *a = &nl->v[i];
    if (!(mask & (1u << a->host))) continue;
    const char *p = (const char *)got->buf[a->host].data + a->off;
    int neg = 0;
    int isn = nan_bits(a->dt, p, &neg);
    if (!isn || neg != a->neg) {
      ok = 0;
      TU_CHECK(0, "%s: %s buffer byte %zu should hold a %sNaN (%s)", label,
               tname[a->host], a->off, a->neg ? "-" : "+", llmk_dtype_name(a->dt));
    }
    memcpy((char *)exp->buf[a->host].data + a->off, p, th_dtype_size(a->dt));
  }
  for (int k = 0; k < X_COUNT; k++) {
    if (!got->has_buf[k] || !(mask & (1u << k))) continue;
    TU_CHECK(tu_buf_check(&got->buf[k]), "%s: guards of the %s buffer", label, tname[k]);
    if (memcmp(got->buf[k].base, exp->buf[k].base, got->buf[k].size + 2 * TU_GUARD)) {
      ok = 0;
      if (tu_failures < 50)
        report_diff(got, exp, k, label);
      else
        TU_CHECK(0, "%s: %s buffer differs", label, tname[k]);
    }
  }
  return ok;
}

/* --------------------------------------------------------------- reference */

typedef struct nan_sink {
  nanlist *nl;
  int host;
  const char *hb; /* the host buffer's data */
  llmk_dtype dt;
} nan_sink;

static void on_nan(void *user, const char *dst, int neg) {
  nan_sink *k = user;
  nan_push(k->nl, k->host, (size_t)(dst - k->hb), k->dt, neg);
}

/* tests/ref/gather_pa_kv_cache_ref.c on src's caches into exp's outputs; the NaNs it
 * expects go to nl. */
static void ref_gather(const gcase *c, const tset *src, tset *exp, nanlist *nl) {
  for (int v = 0; v <= c->has_v; v++) {
    int kc = v ? X_VC : X_KC, ko = v ? X_VO : X_KO;
    nan_sink sink = {nl, c->d[ko].host, exp->buf[c->d[ko].host].data, c->odt};
    int kind = v ? c->vs_kind : c->ks_kind;
    gather_pa_kv_cache_ref_one((int)c->layout, v, &src->t[kc], c->seq, c->B, c->bt, c->mb,
                               v ? c->vs : c->ks, kind >= 3 ? c->H : 1, &exp->t[ko],
                               on_nan, &sink);
  }
}

/* ---------------------------------------------------------------- calls */

static th_sweep g_sw; /* ctx NULL, 1 and 2 threads */
#define ctxs (g_sw.ctx)

static llmk_status call_p1(const tset *s, llmk_kv_layout layout, size_t *ws,
                           llmk_plan **plan) {
  const llmk_tensor *p[X_COUNT];
  for (int k = 0; k < X_COUNT; k++) p[k] = s->pass[k] ? &s->t[k] : NULL;
  return llmk_gather_pa_kv_cache_get_workspace_size(p[X_KC], p[X_VC], p[X_BT], p[X_SL],
                                                    p[X_KS], p[X_VS], p[X_KO], p[X_VO],
                                                    layout, ws, plan);
}

static llmk_status run_plan(llmk_plan *plan, size_t ws, llmk_context *ctx) {
  return th_run_plan(llmk_gather_pa_kv_cache, plan, ws, ctx);
}

static void describe(const gcase *c, char *out, size_t n) {
  snprintf(out, n,
           "%s %s->%s nb=%" PRId64 " bs=%" PRId64 " H=%" PRId64 " Dk=%" PRId64
           " Dv=%" PRId64 " B=%" PRId64 " mb=%" PRId64 " T=%" PRId64
           " kinds kc%d vc%d ko%d vo%d bt%d(%s) sl%d(%s) scales %d/%d",
           llmk_kv_layout_name(c->layout), llmk_dtype_name(c->cdt),
           llmk_dtype_name(c->odt), c->nb, c->bs, c->H, c->Dk, c->has_v ? c->Dv : -1,
           c->B, c->mb, c->T, c->kind[X_KC], c->kind[X_VC], c->kind[X_KO], c->kind[X_VO],
           c->kind[X_BT], llmk_dtype_name(c->bt_dt), c->kind[X_SL],
           llmk_dtype_name(c->sl_dt), c->ks_kind, c->vs_kind);
}

/* A valid case on every ISA up to the native one and every context: each result
 * against the reference (NaN-tolerant where a NaN is expected) and, byte for byte,
 * against the first variant's result. */
typedef struct variants {
  const gcase *c;
  tset S, E, W;
  nanlist nl;
  int runs;
} variants;

/* th_sweep_run's callback: W restored from S, run with the ISA in force and a context,
 * checked against E; the bytes of W go to the sweep's comparison. */
static int run_variant(void *user, llmk_context *ctx, const char *lab, th_out *out) {
  variants *v = user;
  tset_reset(&v->W, &v->S);
  size_t ws = 0;
  llmk_plan *plan = NULL;
  llmk_status st = call_p1(&v->W, v->c->layout, &ws, &plan);
  TU_CHECK(st == LLMK_SUCCESS && plan, "%s: phase 1 status %d ('%s')", lab, (int)st,
           llmk_last_error());
  if (st != LLMK_SUCCESS || !plan) return 0;
  if (!v->runs)
    TU_CHECK(tset_equal(&v->W, &v->S), "%s: phase 1 changed tensor bytes", lab);
  st = run_plan(plan, ws, ctx);
  TU_CHECK(st == LLMK_SUCCESS, "%s: status %d ('%s')", lab, (int)st, llmk_last_error());
  if (st != LLMK_SUCCESS) return 0;
  tset_check(&v->W, &v->E, &v->nl, ALL_HOSTS, lab);
  v->runs++;
  for (int k = 0; k < X_COUNT; k++)
    if (v->W.has_buf[k]) th_out_add_buf(out, &v->W.buf[k]);
  return 1;
}

/* A valid case on every ISA up to the native one and every context: each result
 * against the reference (NaN-tolerant where a NaN is expected) and, byte for byte,
 * against the first variant's result. */
static void run_all_variants(const gcase *c, uint64_t seed, const char *label) {
  variants v;
  memset(&v, 0, sizeof v);
  v.c = c;
  tset_build(&v.S, c, seed);
  tset_copy(&v.E, &v.S);
  tset_copy(&v.W, &v.S);
  ref_gather(c, &v.S, &v.E, &v.nl);
  th_sweep_run(&g_sw, 1, NULL, label, run_variant, &v);
  free(v.nl.v);
  tset_free(&v.S);
  tset_free(&v.E);
  tset_free(&v.W);
}

/* ---------------------------------------------------------------- samples */

static void sample_case(gcase *c, llmk_kv_layout layout, llmk_dtype cdt, llmk_dtype odt,
                        int64_t nb, int64_t bs, int64_t H, int64_t Dk, int64_t Dv,
                        int64_t seq0, const int64_t *bt_row, int64_t mb) {
  memset(c, 0, sizeof *c);
  c->layout = layout;
  c->cdt = cdt;
  c->odt = odt;
  c->bt_dt = LLMK_I32;
  c->sl_dt = LLMK_I64;
  c->nb = nb;
  c->bs = bs;
  c->H = H;
  c->Dk = Dk;
  c->Dv = Dv;
  c->has_v = Dv > 0;
  c->B = 1;
  c->mb = mb;
  case_vals_alloc(c);
  c->seq[0] = seq0;
  for (int64_t j = 0; j < mb; j++) c->bt[j] = bt_row[j];
}

/* Runs a sample whose cache contents the caller wrote into S; checks the reference
 * and the library against `want(v, t, h, d)` (16-bit elements or bytes). */
typedef uint32_t (*want_fn)(int v, int64_t t, int64_t h, int64_t d);
static void sample_check(const gcase *c, tset *S, want_fn want, const char *label) {
  tset E;
  nanlist nl = {0};
  tset_copy(&E, S);
  ref_gather(c, S, &E, &nl);
  size_t ws = 0;
  llmk_plan *plan = NULL;
  llmk_status st = call_p1(S, c->layout, &ws, &plan);
  TU_CHECK(st == LLMK_SUCCESS, "%s: phase 1 status %d ('%s')", label, (int)st,
           llmk_last_error());
  if (st == LLMK_SUCCESS) {
    st = run_plan(plan, ws, NULL);
    TU_CHECK(st == LLMK_SUCCESS, "%s: status %d ('%s')", label, (int)st,
             llmk_last_error());
  }
  size_t es = th_dtype_size(c->odt);
  for (int v = 0; v <= c->has_v; v++) {
    int64_t D = v ? c->Dv : c->Dk;
    for (int64_t t = 0; t < c->T; t++)
      for (int64_t h = 0; h < c->H; h++)
        for (int64_t d = 0; d < D; d++) {
          int64_t i = (t * c->H + h) * D + d; /* outputs are contiguous here */
          uint32_t w = want(v, t, h, d), r = 0, g = 0;
          memcpy(&r, (char *)E.t[X_KO + v].data + i * (int64_t)es, es);
          memcpy(&g, (char *)S->t[X_KO + v].data + i * (int64_t)es, es);
          TU_CHECK(r == w,
                   "%s: reference %s[%" PRId64 ",%" PRId64 ",%" PRId64
                   "] = 0x%x, hand value 0x%x",
                   label, tname[X_KO + v], t, h, d, r, w);
          TU_CHECK(g == w,
                   "%s: %s[%" PRId64 ",%" PRId64 ",%" PRId64 "] = 0x%x, expected 0x%x",
                   label, tname[X_KO + v], t, h, d, g, w);
        }
  }
  tset_check(S, &E, &nl, ALL_HOSTS, label);
  free(nl.v);
  tset_free(&E);
}

/* CANN's NZ example read back: cache [1, 4, 32, 16] f16 holding its element index,
 * slots 0 and 1: out[t, h, d] = index of [0, (h*32+d)/16, t, (h*32+d)%16]. */
static uint32_t want_nz(int v, int64_t t, int64_t h, int64_t d) {
  int64_t e = h * 32 + d;
  return (uint32_t)((v ? 0x1000 : 0) + (e / 16) * 512 + t * 16 + e % 16);
}
/* x-split f16: key [2, 1, 2, 4, 8], value [2, 1, 16, 4] holding index (value +0x4000);
 * block table [1, 0], 5 tokens. */
static uint32_t want_xs(int v, int64_t t, int64_t h, int64_t d) {
  int64_t b = t < 4 ? 1 : 0, o = t % 4;
  (void)h;
  if (!v) return (uint32_t)(b * 64 + (d / 8) * 32 + o * 8 + d % 8);
  return (uint32_t)(0x4000 + b * 64 + d * 4 + o);
}
/* HND u8 cache [2, 2(bs), 2(H), 4] stored as [nb, H, bs, D]; byte i holds i. */
static uint32_t want_hnd(int v, int64_t t, int64_t h, int64_t d) {
  (void)v;
  return (uint32_t)((t < 2 ? 1 : 0) * 16 + h * 8 + (t % 2) * 4 + d);
}

static void fill_index16(tset *S, int k, uint16_t base) {
  uint16_t *p = S->t[k].data;
  for (size_t i = 0; i < S->buf[k].size / 2; i++) p[i] = (uint16_t)(base + i);
}

/* fp8 dequantization by hand: 4 codes, one scale, the output bits (0xffffffff: +NaN,
 * 0xfffffffe: -NaN). */
static void sample_fp8(llmk_dtype cdt, llmk_dtype odt, int skind, float scale,
                       const uint8_t codes[4], const uint32_t want[4],
                       const char *label) {
  static const int64_t row[1] = {0};
  gcase c;
  sample_case(&c, LLMK_KV_BLOCKS, cdt, odt, 1, 1, 1, 4, 0, 1, row, 1);
  c.ks_kind = skind;
  c.ks[0] = scale;
  case_layout(&c);
  tset S, E;
  nanlist nl = {0};
  tset_build(&S, &c, 5);
  memcpy(S.t[X_KC].data, codes, 4);
  tset_copy(&E, &S);
  ref_gather(&c, &S, &E, &nl);
  size_t ws = 0, es = th_dtype_size(odt);
  llmk_plan *plan = NULL;
  llmk_status st = call_p1(&S, c.layout, &ws, &plan);
  if (st == LLMK_SUCCESS) st = run_plan(plan, ws, NULL);
  TU_CHECK(st == LLMK_SUCCESS, "%s: status %d ('%s')", label, (int)st, llmk_last_error());
  for (int d = 0; d < 4; d++)
    for (int who = 0; who < 2; who++) { /* 0 reference, 1 library */
      uint32_t g = 0;
      memcpy(&g, (char *)(who ? S : E).t[X_KO].data + d * (int)es, es);
      int neg = 0;
      if (want[d] >= 0xfffffffeu) {
        int isn = nan_bits(odt, &g, &neg);
        TU_CHECK(isn && neg == (want[d] == 0xfffffffeu),
                 "%s: %s code 0x%02x gives 0x%x, "
                 "expected a %sNaN",
                 label, who ? "library" : "reference", codes[d], g,
                 want[d] == 0xfffffffeu ? "-" : "+");
      } else {
        TU_CHECK(g == want[d], "%s: %s code 0x%02x gives 0x%x, expected 0x%x", label,
                 who ? "library" : "reference", codes[d], g, want[d]);
      }
    }
  free(nl.v);
  tset_free(&S);
  tset_free(&E);
  case_free(&c);
}

static void test_samples(void) {
  gcase c;
  tset S;
  {
    static const int64_t row[1] = {0};
    sample_case(&c, LLMK_KV_NZ, LLMK_F16, LLMK_F16, 1, 32, 2, 32, 32, 2, row, 1);
    case_layout(&c);
    TU_CHECK(
        c.d[X_KC].shape[1] == 4 && c.d[X_KC].shape[2] == 32 && c.d[X_KC].shape[3] == 16,
        "NZ sample: cache shape");
    tset_build(&S, &c, 1);
    fill_index16(&S, X_KC, 0);
    fill_index16(&S, X_VC, 0x1000);
    sample_check(&c, &S, want_nz, "CANN NZ sample read back");
    tset_free(&S);
    case_free(&c);
  }
  {
    static const int64_t row[2] = {1, 0};
    sample_case(&c, LLMK_KV_XSPLIT, LLMK_F16, LLMK_F16, 2, 4, 1, 16, 16, 5, row, 2);
    case_layout(&c);
    tset_build(&S, &c, 2);
    fill_index16(&S, X_KC, 0);
    fill_index16(&S, X_VC, 0x4000);
    sample_check(&c, &S, want_xs, "x-split sample");
    tset_free(&S);
    case_free(&c);
  }
  {
    static const int64_t row[2] = {1, 0};
    sample_case(&c, LLMK_KV_BLOCKS, LLMK_U8, LLMK_U8, 2, 2, 2, 4, 0, 3, row, 2);
    c.kind[X_KC] = 4;
    case_layout(&c);
    tset_build(&S, &c, 3);
    unsigned char *p = S.t[X_KC].data;
    for (size_t i = 0; i < S.buf[X_KC].size; i++) p[i] = (unsigned char)i;
    sample_check(&c, &S, want_hnd, "HND sample (K only)");
    tset_free(&S);
    case_free(&c);
  }
  {
    static const uint8_t c1[4] = {0x38, 0xc0, 0xff, 0x01};
    static const uint32_t w1[4] = {0x3f000000u, 0xbf800000u, 0xfffffffeu, 0x3a800000u};
    sample_fp8(LLMK_FP8_E4M3FN, LLMK_F32, 1, 0.5f, c1, w1, "e4m3fn -> f32, scale [] 0.5");
    static const uint8_t c2[4] = {0x3c, 0x7b, 0xfc, 0x80};
    static const uint32_t w2[4] = {0x4000, 0x7c00, 0xfc00, 0x8000};
    sample_fp8(LLMK_FP8_E5M2, LLMK_F16, 2, 2.0f, c2, w2, "e5m2 -> f16, scale [1] 2");
    static const uint8_t c3[4] = {0x7e, 0x08, 0x00, 0x7f};
    static const uint32_t w3[4] = {0x44a8, 0x3d40, 0x0000, 0xffffffffu};
    sample_fp8(LLMK_FP8_E4M3FN, LLMK_BF16, 3, 3.0f, c3, w3,
               "e4m3fn -> bf16, scale [H] 3");
  }
}

/* ------------------------------------------------------------ random cases */

typedef struct gopts {
  int layout;     /* -1: random */
  int dt;         /* -1: random; else the cache dtype of a copy */
  int no_bcast;   /* no broadcast block_tables (round trips need distinct slots) */
  int64_t budget; /* output elements, about */
} gopts;

static int64_t garbage_id(llmk_dtype dt, int64_t nb) {
  int wide = dt == LLMK_I64;
  switch (tu_rand_range(0, 6)) {
    case 0:
      return -1;
    case 1:
      return nb;
    case 2:
      return nb + tu_rand_range(0, 1000);
    case 3:
      return -tu_rand_range(1, 1000000);
    case 4:
      return wide ? INT64_MAX : INT32_MAX;
    case 5:
      return wide ? INT64_MIN : INT32_MIN;
    default:
      return nb > 0 ? tu_rand_range(0, nb - 1) : -7;
  }
}

static float f32_of(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static float rand_scale(void) {
  switch (tu_rand_range(0, 11)) {
    case 0:
    case 1:
      return 1.0f;
    case 2:
      return 0.5f;
    case 3:
      return 3.0f;
    case 4:
      return tu_rand_range(0, 2) ? 1e-30f : 1e-40f; /* tiny, even subnormal */
    case 5:
      return tu_rand_range(0, 1) ? 1e30f : 1e36f; /* overflows f16 / f32 */
    default:                                      /* 2^[-12, 12] with a random mantissa */
      return f32_of((uint32_t)(127 + tu_rand_range(-12, 12)) << 23 |
                    (uint32_t)tu_rand_range(0, 0x7fffff));
  }
}

/* A head size valid for the layout: x-split keys need D % x == 0, NZ H*D % ld == 0. */
static int64_t pick_d(const gcase *c, int key) {
  static const int64_t ds[] = {1, 2, 3, 5, 8, 16, 24, 32, 48, 64, 128};
  int64_t es = (int64_t)th_dtype_size(c->cdt);
  for (int tries = 0; tries < 10000; tries++) {
    int64_t d = PICK(ds);
    if (c->layout == LLMK_KV_XSPLIT && key && d % (16 / es)) continue;
    if (c->layout == LLMK_KV_NZ && (c->H * d) % (32 / es)) continue;
    return d;
  }
  th_die("pick_d");
  return 0;
}

static void gen_random(gcase *c, int idx, const gopts *o) {
  static const llmk_dtype copy_dts[] = {LLMK_F32,        LLMK_F16,     LLMK_BF16,
                                        LLMK_I8,         LLMK_U8,      LLMK_I32,
                                        LLMK_FP8_E4M3FN, LLMK_FP8_E5M2};
  static const llmk_dtype deq_out[] = {LLMK_F32, LLMK_F16, LLMK_BF16};
  static const int64_t Hs[] = {1, 2, 3, 4, 8};
  static const int64_t Bs[] = {0, 1, 3, 17, 1, 3, 17, 2, 5, 3};
  static const int64_t bss[] = {1, 2, 4, 5, 16, 32};
  memset(c, 0, sizeof *c);
  c->layout = (llmk_kv_layout)(o->layout >= 0 ? o->layout : idx % 3);
  if (o->dt >= 0) {
    c->cdt = c->odt = (llmk_dtype)o->dt;
  } else if (tu_rand_range(0, 1)) {
    c->cdt = tu_rand_range(0, 1) ? LLMK_FP8_E4M3FN : LLMK_FP8_E5M2;
    c->odt = PICK(deq_out);
  } else {
    c->cdt = c->odt = PICK(copy_dts);
  }
  c->H = PICK(Hs);
  c->Dk = pick_d(c, 1);
  c->has_v = tu_rand_range(0, 4) != 0;
  if (c->has_v) c->Dv = tu_rand_range(0, 2) == 0 ? c->Dk : pick_d(c, 0);
  c->B = Bs[(idx / 3) % (int)(sizeof Bs / sizeof Bs[0])];
  int64_t ept = c->H * (c->Dk + c->Dv), per_seq = o->budget / (max64(c->B, 1) * ept);
  int big = o->budget >= 400000; /* the largest block size that fits, long sequences */
  c->bs = 1;
  for (int tries = 0; tries < 20; tries++) {
    int64_t bs = big ? bss[5 - tries % 6] : PICK(bss);
    if (5 * bs <= per_seq) {
      c->bs = bs;
      break;
    }
  }
  c->bt_dt = tu_rand_range(0, 1) ? LLMK_I64 : LLMK_I32;
  c->sl_dt = tu_rand_range(0, 1) ? LLMK_I64 : LLMK_I32;
  c->kind[X_BT] = (int)tu_rand_range(0, 3);
  if (!o->no_bcast && tu_rand_range(0, 7) == 0) c->kind[X_BT] = 4;
  int bcast = c->kind[X_BT] == 4;

  int64_t *seq = calloc((size_t)c->B + 1, sizeof *seq), maxneed = 0, total = 0;
  if (!seq) th_die("out of memory");
  for (int64_t i = 0; i < c->B; i++) {
    int64_t bs = c->bs;
    switch (big && tu_rand_range(0, 1) ? 6 : tu_rand_range(0, 6)) {
      case 0:
        seq[i] = 0;
        break;
      case 1:
        seq[i] = 1;
        break;
      case 2:
        seq[i] = bs - 1;
        break;
      case 3:
        seq[i] = bs;
        break;
      case 4:
        seq[i] = bs + 1;
        break;
      default:
        seq[i] = bs * tu_rand_range(2, 4) + tu_rand_range(0, bs - 1);
        break;
    }
    int64_t need = (seq[i] + bs - 1) / bs;
    maxneed = max64(maxneed, need);
    total += need;
  }
  if (bcast) total = maxneed;
  c->mb = maxneed + tu_rand_range(0, 3);
  c->nb = total + tu_rand_range(0, 4);
  case_vals_alloc(c);
  memcpy(c->seq, seq, (size_t)c->B * sizeof *seq);
  free(seq);
  /* distinct random block ids for the used entries, garbage in the unused ones */
  int64_t *perm = malloc(((size_t)c->nb + 1) * sizeof *perm), pos = 0;
  if (!perm) th_die("out of memory");
  for (int64_t i = 0; i < c->nb; i++) perm[i] = i;
  for (int64_t i = c->nb - 1; i > 0; i--) {
    int64_t j = tu_rand_range(0, i), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  for (int64_t i = 0; i < c->B; i++) {
    int64_t used = bcast ? maxneed : (c->seq[i] + c->bs - 1) / c->bs;
    for (int64_t j = 0; j < c->mb; j++) {
      int64_t *e = &c->bt[i * c->mb + j];
      if (bcast && i > 0)
        *e = c->bt[j]; /* the library sees row 0 in every row */
      else if (j < used)
        *e = perm[bcast ? j : pos++];
      else
        *e = garbage_id(c->bt_dt, c->nb);
    }
  }
  free(perm);
  int shared_ok = c->layout == LLMK_KV_BLOCKS && c->has_v && c->Dk == c->Dv;
  c->kind[X_KC] =
      (int)tu_rand_range(0, c->layout == LLMK_KV_BLOCKS ? (shared_ok ? 6 : 4) : 3);
  c->kind[X_VC] = c->kind[X_KC] >= 5
                      ? c->kind[X_KC]
                      : (int)tu_rand_range(0, c->layout == LLMK_KV_BLOCKS ? 4 : 3);
  c->kind[X_KO] = (int)tu_rand_range(0, c->has_v ? 4 : 3);
  c->kind[X_VO] = c->kind[X_KO] == 4 ? 4 : (int)tu_rand_range(0, 3);
  c->kind[X_SL] = (int)tu_rand_range(0, 2);
  if (c->cdt != c->odt) {
    c->ks_kind = (int)tu_rand_range(1, 4);
    c->vs_kind = c->has_v ? (int)tu_rand_range(1, 4) : 0;
    for (int64_t h = 0; h < c->H; h++) {
      c->ks[h] = rand_scale();
      c->vs[h] = rand_scale();
    }
  }
  case_layout(c);
}

/* The last n_med cases are large enough (a few 100 KiB moved) to be split over two
 * threads, with thread ranges starting inside sequences and blocks. */
static void test_random(void) {
  const int n = SMALL ? 500 : 1200, n_med = SMALL ? 40 : 80;
  gopts o = {-1, -1, 0, 60000};
  llmk_isa start = llmk_get_isa(), native = llmk_get_native_isa();
  printf("random cases: %d; native isa %s, isa in force %s\n", n, llmk_isa_name(native),
         llmk_isa_name(start));
  for (int isa = LLMK_ISA_SCALAR; isa <= (int)native; isa++) {
    if (!TU_ISA_HERE(isa)) continue;
    /* With LLMK_ISA in the environment the ISA in force may stay at its cap. */
    llmk_isa capped = isa < (int)start ? (llmk_isa)isa : start;
    llmk_isa got = llmk_set_max_isa((llmk_isa)isa);
    TU_CHECK((got == (llmk_isa)isa || got == capped) && llmk_get_isa() == got,
             "set_max_isa(%d) -> %d, get_isa %d", isa, (int)got, (int)llmk_get_isa());
  }
  llmk_set_max_isa(native);
  int counts[3] = {0, 0, 0}, deq = 0, split = 0;
  for (int i = 0; i < n; i++) {
    gcase c;
    o.budget = i < n - n_med ? 60000 : 1000000;
    gen_random(&c, i, &o);
    char label[512], desc[400];
    describe(&c, desc, sizeof desc);
    snprintf(label, sizeof label, "random case %d (%s)", i, desc);
    run_all_variants(&c, 1000 + (uint64_t)i, label);
    counts[c.layout]++;
    deq += c.cdt != c.odt;
    /* bytes read + written over 256 KiB: enough for two threads in kv_cache.c today */
    split += c.T * c.H * (c.Dk + c.Dv) *
                 (int64_t)(th_dtype_size(c.cdt) + th_dtype_size(c.odt)) >
             (INT64_C(256) << 10);
    case_free(&c);
  }
  printf(
      "  blocks %d, xsplit %d, nz %d; %d dequantizing; %d over 256 KiB moved; every ISA "
      "x {ctx NULL, 1, 2 threads}\n",
      counts[0], counts[1], counts[2], deq, split);
}

/* Large enough to be split across threads: 4096 tokens, H = 8, D = 128. */
static void test_large(void) {
  const int64_t B = 16, len = 256;
  printf("threaded cases: %" PRId64 " tokens, H=8, D=128\n", B * len);
  for (int which = 0; which < 4; which++) {
    gcase c;
    memset(&c, 0, sizeof c);
    static const llmk_kv_layout lay[4] = {LLMK_KV_BLOCKS, LLMK_KV_BLOCKS, LLMK_KV_XSPLIT,
                                          LLMK_KV_NZ};
    static const llmk_dtype cd[4] = {LLMK_BF16, LLMK_FP8_E4M3FN, LLMK_F16, LLMK_FP8_E5M2};
    static const llmk_dtype od[4] = {LLMK_BF16, LLMK_BF16, LLMK_F16, LLMK_F16};
    c.layout = lay[which];
    c.cdt = cd[which];
    c.odt = od[which];
    c.bt_dt = LLMK_I32;
    c.sl_dt = LLMK_I64;
    c.H = 8;
    c.Dk = c.Dv = 128;
    c.has_v = 1;
    c.bs = 16;
    c.B = B;
    c.mb = len / c.bs + 4;
    c.nb = B * (len / c.bs + 3) + 7;
    case_vals_alloc(&c);
    int64_t *perm = malloc((size_t)c.nb * sizeof *perm), pos = 0;
    if (!perm) th_die("out of memory");
    for (int64_t i = 0; i < c.nb; i++) perm[i] = i;
    for (int64_t i = c.nb - 1; i > 0; i--) {
      int64_t j = tu_rand_range(0, i), t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    /* lengths around 256 (sum 4096 for B = 16), so that thread ranges start inside
     * sequences and blocks */
    for (int64_t i = 0; i < B; i++) {
      c.seq[i] =
          len + (i % 2 ? 1 : -1) * (5 + 3 * (i / 2)) * (i == B - 1 && B % 2 ? 0 : 1);
      for (int64_t j = 0; j < c.mb; j++)
        c.bt[i * c.mb + j] = j < (c.seq[i] + c.bs - 1) / c.bs ? perm[pos++] : -1;
    }
    free(perm);
    if (which == 1) c.kind[X_KC] = c.kind[X_VC] = 4; /* HND */
    if (c.cdt != c.odt) {
      c.ks_kind = which == 1 ? 3 : 1;
      c.vs_kind = which == 1 ? 3 : 2;
      for (int64_t h = 0; h < c.H; h++) {
        c.ks[h] = 0.25f * (float)(h + 1);
        c.vs[h] = 3.0f / (float)(h + 1);
      }
    }
    case_layout(&c);
    char label[512], desc[400];
    describe(&c, desc, sizeof desc);
    snprintf(label, sizeof label, "threaded case %d (%s)", which, desc);
    run_all_variants(&c, 77 + (uint64_t)which, label);
    case_free(&c);
  }
}

/* ------------------------------------------------------------ round trips */

typedef struct src_tensor {
  tu_buf buf;
  llmk_tensor t;
} src_tensor;

static void src_make(src_tensor *s, llmk_dtype dt, int64_t T, int64_t H, int64_t D,
                     uint64_t seed) {
  td d;
  int64_t shape[3] = {T, H, D};
  td_set(&d, dt, 3, shape, 0);
  make_strides(&d, (int)tu_rand_range(0, 3));
  size_t size = (size_t)td_span(&d) * th_dtype_size(dt);
  s->buf = tu_buf_alloc(size);
  uint64_t rng = seed;
  unsigned char *p = s->buf.data;
  for (size_t i = 0; i < size; i++) p[i] = (unsigned char)mix(&rng);
  inject_specials(p, size, dt, &rng);
  memset(&s->t, 0, sizeof s->t);
  s->t.dtype = dt;
  s->t.rank = 3;
  memcpy(s->t.shape, d.shape, sizeof d.shape);
  memcpy(s->t.strides, d.strides, sizeof d.strides);
  s->t.data = s->buf.data;
}

/* Scatter K/V by the slots the block tables give, gather them back: bit for bit. */
static void test_round_trip(void) {
  static const llmk_dtype dts[] = {LLMK_F32, LLMK_F16, LLMK_BF16, LLMK_I8, LLMK_U8};
  /* layout, cache stride kind (-1: random) */
  static const int lay[][2] = {
      {LLMK_KV_BLOCKS, 0},  {LLMK_KV_BLOCKS, 4}, {LLMK_KV_BLOCKS, 1},
      {LLMK_KV_BLOCKS, 5},  {LLMK_KV_BLOCKS, 2}, {LLMK_KV_XSPLIT, 0},
      {LLMK_KV_XSPLIT, -1}, {LLMK_KV_NZ, 0},     {LLMK_KV_NZ, -1}};
  int n = 0;
  for (size_t li = 0; li < sizeof lay / sizeof lay[0]; li++)
    for (size_t di = 0; di < sizeof dts / sizeof dts[0]; di++) {
      gopts o = {lay[li][0], (int)dts[di], 1, 60000};
      gcase c;
      gen_random(&c, (int)(3 * (li * 5 + di) + 3),
                 &o); /* B cycles through 1, 3, 17, ... */
      if (lay[li][1] >= 0) {
        c.kind[X_KC] = c.kind[X_VC] = lay[li][1];
        if (lay[li][1] == 5) { /* shared buffer: K and V of one head size */
          c.has_v = 1;
          c.Dv = c.Dk;
        }
        case_layout(&c);
      }
      char label[512], desc[400];
      describe(&c, desc, sizeof desc);
      snprintf(label, sizeof label, "round trip (%s)", desc);
      tset S, E;
      tset_build(&S, &c, 500 + (uint64_t)n);
      tset_copy(&E, &S);
      src_tensor K, V;
      src_make(&K, c.cdt, c.T, c.H, c.Dk, 900 + (uint64_t)n);
      if (c.has_v) src_make(&V, c.cdt, c.T, c.H, c.Dv, 1900 + (uint64_t)n);
      src_tensor slots;
      int64_t sl_stride = tu_rand_range(1, 2);
      llmk_dtype sl_dt = tu_rand_range(0, 1) ? LLMK_I64 : LLMK_I32;
      slots.buf =
          tu_buf_alloc((size_t)(max64(c.T, 1) * sl_stride) * th_dtype_size(sl_dt));
      memset(&slots.t, 0, sizeof slots.t);
      slots.t.dtype = sl_dt;
      slots.t.rank = 1;
      slots.t.shape[0] = c.T;
      slots.t.strides[0] = sl_stride;
      slots.t.data = slots.buf.data;
      int64_t t = 0;
      for (int64_t i = 0; i < c.B; i++)
        for (int64_t p = 0; p < c.seq[i]; p++, t++)
          put_int(slots.buf.data, sl_dt, t * sl_stride,
                  c.bt[i * c.mb + p / c.bs] * c.bs + p % c.bs);
      /* expected outputs: the source elements at the output views' positions */
      size_t es = th_dtype_size(c.cdt);
      for (int v = 0; v <= c.has_v; v++) {
        const llmk_tensor *src = v ? &V.t : &K.t, *out = &E.t[X_KO + v];
        for (int64_t tt = 0; tt < c.T; tt++)
          for (int64_t h = 0; h < c.H; h++)
            for (int64_t d = 0; d < out->shape[2]; d++)
              memcpy(
                  (char *)out->data +
                      (tt * out->strides[0] + h * out->strides[1] + d * out->strides[2]) *
                          (int64_t)es,
                  (const char *)src->data +
                      (tt * src->strides[0] + h * src->strides[1] + d * src->strides[2]) *
                          (int64_t)es,
                  es);
      }
      size_t ws = 0;
      llmk_plan *plan = NULL;
      llmk_status st = llmk_scatter_pa_kv_cache_get_workspace_size(
          &K.t, c.has_v ? &V.t : NULL, &S.t[X_KC], c.has_v ? &S.t[X_VC] : NULL, &slots.t,
          NULL, NULL, c.layout, &ws, &plan);
      if (st == LLMK_SUCCESS) {
        void *w = ws ? malloc(ws) : NULL;
        st = llmk_scatter_pa_kv_cache(w, ws, plan, ctxs[2]);
        free(w);
      }
      TU_CHECK(st == LLMK_SUCCESS, "%s: scatter status %d ('%s')", label, (int)st,
               llmk_last_error());
      if (st == LLMK_SUCCESS) {
        st = call_p1(&S, c.layout, &ws, &plan);
        if (st == LLMK_SUCCESS) st = run_plan(plan, ws, ctxs[2]);
        TU_CHECK(st == LLMK_SUCCESS, "%s: gather status %d ('%s')", label, (int)st,
                 llmk_last_error());
        if (st == LLMK_SUCCESS) tset_check(&S, &E, NULL, OUT_HOSTS, label);
      }
      tu_buf_free(&K.buf);
      if (c.has_v) tu_buf_free(&V.buf);
      tu_buf_free(&slots.buf);
      tset_free(&S);
      tset_free(&E);
      case_free(&c);
      n++;
    }
  printf("round trips: %d (every layout, f32/f16/bf16/i8/u8)\n", n);
}

/* ------------------------------------------------------------ error table */

/* Valid base calls. 0: blocks f16 copy; 1: blocks e4m3fn -> f32, k_scale [] 0.5,
 * v_scale [1] 2; 2: blocks e5m2 -> bf16, [H] scales; 3: x-split f16; 4: NZ f16;
 * 5: blocks u8 with i64 block_tables and i32 seq_lens. nb 16, bs 4, H 2, Dk 16, Dv 8,
 * seq_lens {5, 0, 9}, 4 blocks per row, 14 tokens. */
static void base_case(gcase *c, int v) {
  memset(c, 0, sizeof *c);
  c->layout = v == 3 ? LLMK_KV_XSPLIT : v == 4 ? LLMK_KV_NZ : LLMK_KV_BLOCKS;
  c->cdt = c->odt = v == 5 ? LLMK_U8 : LLMK_F16;
  if (v == 1) {
    c->cdt = LLMK_FP8_E4M3FN;
    c->odt = LLMK_F32;
    c->ks_kind = 1;
    c->vs_kind = 2;
  }
  if (v == 2) {
    c->cdt = LLMK_FP8_E5M2;
    c->odt = LLMK_BF16;
    c->ks_kind = c->vs_kind = 3;
  }
  c->bt_dt = v == 5 ? LLMK_I64 : LLMK_I32;
  c->sl_dt = v == 5 ? LLMK_I32 : LLMK_I64;
  c->nb = 16;
  c->bs = 4;
  c->H = 2;
  c->Dk = 16;
  c->Dv = 8;
  c->has_v = 1;
  c->B = 3;
  c->mb = 4;
  case_vals_alloc(c);
  static const int64_t seq[3] = {5, 0, 9}, bt[12] = {3, 7, 0, 0, 0, 0, 0, 0, 1, 12, 5, 0};
  memcpy(c->seq, seq, sizeof seq);
  memcpy(c->bt, bt, sizeof bt);
  c->ks[0] = 0.5f;
  c->ks[1] = 4.0f;
  c->vs[0] = 2.0f;
  c->vs[1] = 0.25f;
}

/* The shared descriptor defects are the harness's (TH_D_*); these are the op's own. */
enum defect {
  /* before the descriptors are made */
  D_KONLY = TH_D_OP,
  D_KONLY_VS,
  D_SCALE,
  D_SEQ,
  D_BT,
  D_UNUSED_ALL,
  D_SCALEV,
  D_TDELTA,
  D_MB,
  D_B0,
  D_NB0,
  D_BS0,
  D_HD,
  D_LAYOUT,
  /* after: values that leave the outputs' rows as they were */
  D_SEQ_KEEP_T,
  D_SEQ_WRAP,
  /* on the built descriptors */
  D_NULL2,
  D_NULL_WS,
  D_NULL_PLAN,
  D_DTYPE2,
  D_DTYPE_OUTS,
  D_LASTDIM,
  D_B0_NULL_DATA
};

typedef struct err_row {
  const char *name;
  int base, defect, tensor;
  int64_t a1, a2;
  llmk_status expect;
  int phase; /* 1 or 2: the phase that must reject; 0: must succeed */
  const char *msg;
} err_row;

static th_table rows;

static void add(const char *name, int base, int defect, int tensor, int64_t a1,
                int64_t a2, llmk_status expect, int phase, const char *msg) {
  TH_TABLE_ADD(&rows, err_row, th_table_str(&rows, name), base, defect, tensor, a1, a2,
               expect, phase, msg);
}

static float special_scale(int64_t code) {
  switch (code) {
    case 0:
      return 0.0f;
    case 1:
      return -0.0f;
    case 2:
      return -1.0f;
    case 3:
      return NAN;
    case 4:
      return INFINITY;
    case 5:
      return -INFINITY;
    case 6:
      return 1e-40f; /* subnormal: valid */
    default:
      return FLT_MAX;
  }
}

static void apply_pre(gcase *c, const err_row *r) {
  switch (r->defect) {
    case D_KONLY:
      c->has_v = 0;
      c->vs_kind = 0;
      break;
    case D_KONLY_VS:
      c->has_v = 0;
      break;
    case D_SCALE:
      if (r->tensor == X_KS)
        c->ks_kind = (int)r->a1;
      else
        c->vs_kind = (int)r->a1;
      break;
    case D_SEQ:
      c->seq[r->a1] = r->a2;
      break;
    case D_BT:
      c->bt[r->a1] = r->a2;
      break;
    case D_UNUSED_ALL: /* every entry no sequence reads */
      for (int64_t i = 0; i < c->B; i++)
        for (int64_t j = (c->seq[i] + c->bs - 1) / c->bs; j < c->mb; j++)
          c->bt[i * c->mb + j] = (i + j) % 3 == 0       ? -1
                                 : (i + j) % 3 == 1     ? c->nb
                                 : c->bt_dt == LLMK_I64 ? INT64_MIN
                                                        : INT32_MIN;
      break;
    case D_SCALEV:
      (r->tensor == X_KS ? c->ks : c->vs)[r->a1] = special_scale(r->a2);
      break;
    case D_TDELTA:
      c->T_delta = r->a1;
      break;
    case D_MB: {
      int64_t *nbt = calloc((size_t)(c->B * r->a1) + 1, sizeof *nbt);
      if (!nbt) th_die("out of memory");
      for (int64_t i = 0; i < c->B; i++)
        for (int64_t j = 0; j < r->a1 && j < c->mb; j++)
          nbt[i * r->a1 + j] = c->bt[i * c->mb + j];
      free(c->bt);
      c->bt = nbt;
      c->mb = r->a1;
      if (r->a2 == 0)
        for (int64_t i = 0; i < c->B; i++) c->seq[i] = 0;
      break;
    }
    case D_B0:
    case D_B0_NULL_DATA:
      c->B = 0;
      break;
    case D_NB0:
      c->nb = 0;
      for (int64_t i = 0; i < c->B; i++) c->seq[i] = 0;
      break;
    case D_BS0: /* empty blocks: only empty sequences fit */
      c->bs = 0;
      for (int64_t i = 0; i < c->B; i++) c->seq[i] = i == 0 ? r->a1 : 0;
      break;
    case D_HD:
      c->H = r->a1;
      c->Dk = r->a2;
      if (r->a1 == 1) c->Dv = 16;
      break;
    default:
      break;
  }
}

static void apply_mid(gcase *c, const err_row *r) {
  if (r->defect == D_SEQ_KEEP_T) c->seq[r->a1] = r->a2;
  if (r->defect == D_SEQ_WRAP) { /* the i64 sum wraps to exactly key_out.shape[0] */
    c->seq[0] = INT64_MAX;
    c->seq[1] = INT64_MAX;
    c->seq[2] = 16;
  }
}

static void apply_post(tset *s, const err_row *r) {
  llmk_tensor *t = r->tensor >= 0 ? &s->t[r->tensor] : NULL;
  if (r->defect < TH_D_OP) {
    if (!th_defect_apply(t, r->defect, r->a1, r->a2)) s->pass[r->tensor] = 0;
    return;
  }
  switch (r->defect) {
    case D_NULL2:
      s->pass[r->a1] = s->pass[r->a2] = 0;
      break;
    case D_DTYPE2:
      t->dtype = (llmk_dtype)r->a1;
      s->t[X_KO].dtype = (llmk_dtype)r->a1;
      break;
    case D_DTYPE_OUTS:
      s->t[X_KO].dtype = s->t[X_VO].dtype = (llmk_dtype)r->a1;
      break;
    case D_LASTDIM: { /* last dim halved, the one before doubled: same D, wrong x / ld */
      int k = t->rank - 1;
      t->shape[k] /= 2;
      t->shape[r->a1] *= 2;
      int64_t st = 1;
      for (int j = t->rank - 1; j >= 0; j--) {
        t->strides[j] = st;
        st *= t->shape[j];
      }
      break;
    }
    case D_B0_NULL_DATA:
      s->t[X_BT].data = s->t[X_SL].data = s->t[X_KO].data = s->t[X_VO].data = NULL;
      break;
    default:
      break;
  }
}

static void build_rows(void) {
  const llmk_status NP = LLMK_ERROR_NULL_POINTER, DT = LLMK_ERROR_INVALID_DTYPE,
                    SH = LLMK_ERROR_INVALID_SHAPE, AT = LLMK_ERROR_INVALID_ATTRIBUTE,
                    VA = LLMK_ERROR_INVALID_VALUE, OK = LLMK_SUCCESS;
  static const char *const bname[6] = {"f16",        "e4m3fn->f32", "e5m2->bf16 [H]",
                                       "xsplit f16", "nz f16",      "u8 i64 tables"};
  char nm[112];
  for (int b = 0; b < 6; b++) {
    snprintf(nm, sizeof nm, "valid base (%s)", bname[b]);
    add(nm, b, TH_D_NONE, -1, 0, 0, OK, 0, NULL);
    snprintf(nm, sizeof nm, "valid K only (%s)", bname[b]);
    add(nm, b, D_KONLY, -1, 0, 0, OK, 0, NULL);
  }
  /* NULL pointers */
  add("workspace_size NULL", 0, D_NULL_WS, -1, 0, 0, NP, 1, "workspace_size");
  add("plan NULL", 0, D_NULL_PLAN, -1, 0, 0, NP, 1, "plan");
  add("key_cache NULL", 0, TH_D_NULL, X_KC, 0, 0, NP, 1, "key_cache");
  add("key_out NULL", 0, TH_D_NULL, X_KO, 0, 0, NP, 1, "key_out");
  add("block_tables NULL", 0, TH_D_NULL, X_BT, 0, 0, NP, 1, "block_tables");
  add("seq_lens NULL", 0, TH_D_NULL, X_SL, 0, 0, NP, 1, "seq_lens");
  add("value_cache without value_out", 0, TH_D_NULL, X_VO, 0, 0, NP, 1, "value_out");
  add("value_out without value_cache", 0, TH_D_NULL, X_VC, 0, 0, AT, 1,
      "value_cache|value_out");
  add("value_cache NULL with v_scale (fp8)", 1, D_NULL2, -1, X_VC, X_VO, AT, 1,
      "v_scale");
  add("fp8 K only with v_scale", 1, D_KONLY_VS, -1, 0, 0, AT, 1, "v_scale");
  add("k_scale missing (fp8 -> f32)", 1, TH_D_NULL, X_KS, 0, 0, NP, 1, "k_scale");
  add("v_scale missing (fp8 -> f32)", 1, TH_D_NULL, X_VS, 0, 0, NP, 1, "v_scale");
  add("k_scale missing (fp8 -> bf16 [H])", 2, TH_D_NULL, X_KS, 0, 0, NP, 1, "k_scale");
  for (int k = 0; k < X_COUNT; k++) {
    if (k == X_VS) continue;
    snprintf(nm, sizeof nm, "%s data NULL", tname[k]);
    add(nm, k == X_KS ? 1 : 0, TH_D_DATA_NULL, k, 0, 0, NP, 1, tname[k]);
  }
  add("v_scale data NULL", 2, TH_D_DATA_NULL, X_VS, 0, 0, NP, 1, "v_scale");
  add("B = 0 with NULL data in the empty tensors", 0, D_B0_NULL_DATA, -1, 0, 0, OK, 0,
      NULL);
  /* dtypes */
  const char *kd = "key_out|key_cache", *vd = "value_out|value_cache";
  add("key_out bf16, key_cache f16", 0, TH_D_DTYPE, X_KO, LLMK_BF16, 0, DT, 1, kd);
  add("key_out f32, key_cache f16", 0, TH_D_DTYPE, X_KO, LLMK_F32, 0, DT, 1, kd);
  add("key_out fp8_e4m3fn, key_cache f16 (no quantizing read)", 0, TH_D_DTYPE, X_KO,
      LLMK_FP8_E4M3FN, 0, DT, 1, kd);
  add("key_cache bf16, key_out f16", 0, TH_D_DTYPE, X_KC, LLMK_BF16, 0, DT, 1, kd);
  add("value_out f32, value_cache f16", 0, TH_D_DTYPE, X_VO, LLMK_F32, 0, DT, 1, vd);
  add("value_out u8, value_cache f16", 0, TH_D_DTYPE, X_VO, LLMK_U8, 0, DT, 1, vd);
  add("value_cache i8, value_out f16", 0, TH_D_DTYPE, X_VC, LLMK_I8, 0, DT, 1, vd);
  add("key_cache and key_out i64 (8-byte elements)", 0, D_DTYPE2, X_KC, LLMK_I64, 0, DT,
      1, kd);
  add("key_cache and key_out dtype invalid (0)", 0, D_DTYPE2, X_KC, LLMK_DTYPE_INVALID, 0,
      DT, 1, kd);
  add("key_cache and key_out dtype 99", 0, D_DTYPE2, X_KC, 99, 0, DT, 1, kd);
  add("e4m3fn cache, key_out i8", 1, TH_D_DTYPE, X_KO, LLMK_I8, 0, DT, 1, kd);
  add("e4m3fn cache, key_out i32", 1, TH_D_DTYPE, X_KO, LLMK_I32, 0, DT, 1, kd);
  add("e4m3fn cache, key_out fp8_e5m2", 1, TH_D_DTYPE, X_KO, LLMK_FP8_E5M2, 0, DT, 1, kd);
  add("e5m2 cache, value_out fp8_e4m3fn", 2, TH_D_DTYPE, X_VO, LLMK_FP8_E4M3FN, 0, DT, 1,
      vd);
  add("block_tables f32", 0, TH_D_DTYPE, X_BT, LLMK_F32, 0, DT, 1, "block_tables");
  add("block_tables i8", 0, TH_D_DTYPE, X_BT, LLMK_I8, 0, DT, 1, "block_tables");
  add("seq_lens u8", 0, TH_D_DTYPE, X_SL, LLMK_U8, 0, DT, 1, "seq_lens");
  add("seq_lens f32", 0, TH_D_DTYPE, X_SL, LLMK_F32, 0, DT, 1, "seq_lens");
  add("k_scale f16", 1, TH_D_DTYPE, X_KS, LLMK_F16, 0, DT, 1, "k_scale");
  add("v_scale i32", 2, TH_D_DTYPE, X_VS, LLMK_I32, 0, DT, 1, "v_scale");
  /* attributes: layout, scales where no conversion happens */
  add("layout = 3", 0, D_LAYOUT, -1, 3, 0, AT, 1, "layout");
  add("layout = -1", 0, D_LAYOUT, -1, -1, 0, AT, 1, "layout");
  add("k_scale given to an f16 copy", 0, D_SCALE, X_KS, 1, 0, AT, 1, "k_scale");
  add("v_scale [H] given to an f16 copy", 0, D_SCALE, X_VS, 3, 0, AT, 1, "v_scale");
  add("k_scale, v_scale given to an fp8 -> fp8 copy", 1, D_DTYPE_OUTS, -1,
      LLMK_FP8_E4M3FN, 0, AT, 1, "k_scale|v_scale");
  add("key_out f32, value_out bf16 (fp8 cache)", 1, TH_D_DTYPE, X_VO, LLMK_BF16, 0, DT, 1,
      "value_out|key_out");
  /* ranks and shapes */
  add("key_cache rank 3", 0, TH_D_RANK, X_KC, 3, 0, SH, 1, "key_cache");
  add("key_cache rank 5 (blocks)", 0, TH_D_RANK, X_KC, 5, 0, SH, 1, "key_cache");
  add("value_cache rank 3", 0, TH_D_RANK, X_VC, 3, 0, SH, 1, "value_cache");
  add("key_out rank 2", 0, TH_D_RANK, X_KO, 2, 0, SH, 1, "key_out");
  add("key_out rank 4", 0, TH_D_RANK, X_KO, 4, 0, SH, 1, "key_out");
  add("value_out rank 2", 0, TH_D_RANK, X_VO, 2, 0, SH, 1, "value_out");
  add("block_tables rank 1", 0, TH_D_RANK, X_BT, 1, 0, SH, 1, "block_tables");
  add("block_tables rank 3", 0, TH_D_RANK, X_BT, 3, 0, SH, 1, "block_tables");
  add("seq_lens rank 0", 0, TH_D_RANK, X_SL, 0, 0, SH, 1, "seq_lens");
  add("seq_lens rank 2", 0, TH_D_RANK, X_SL, 2, 0, SH, 1, "seq_lens");
  add("x-split key_cache rank 4", 3, TH_D_RANK, X_KC, 4, 0, SH, 1, "key_cache");
  add("x-split value_cache rank 5", 3, TH_D_RANK, X_VC, 5, 0, SH, 1, "value_cache");
  add("NZ key_cache rank 5", 4, TH_D_RANK, X_KC, 5, 0, SH, 1, "key_cache");
  add("NZ value_cache rank 3", 4, TH_D_RANK, X_VC, 3, 0, SH, 1, "value_cache");
  add("x-split cache with layout blocks", 3, D_LAYOUT, -1, LLMK_KV_BLOCKS, 0, SH, 1,
      "key_cache|value_cache");
  add("blocks cache with layout NZ", 0, D_LAYOUT, -1, LLMK_KV_NZ, 0, SH, 1,
      "key_cache|value_cache|key_out");
  add("key_out H = cache H + 1", 0, TH_D_EXTENT_ADD, X_KO, 1, 1, SH, 1, kd);
  add("key_out Dk + 1", 0, TH_D_EXTENT_ADD, X_KO, 2, 1, SH, 1, kd);
  add("key_cache H + 1", 0, TH_D_EXTENT_ADD, X_KC, 2, 1, SH, 1, kd);
  add("key_cache D - 1", 0, TH_D_EXTENT_ADD, X_KC, 3, -1, SH, 1, kd);
  add("value_out H + 1", 0, TH_D_EXTENT_ADD, X_VO, 1, 1, SH, 1, vd);
  add("value_out Dv - 1", 0, TH_D_EXTENT_ADD, X_VO, 2, -1, SH, 1, vd);
  add("value_cache H + 1", 0, TH_D_EXTENT_ADD, X_VC, 2, 1, SH, 1, vd);
  add("value_out rows = key_out rows + 1", 0, TH_D_EXTENT_ADD, X_VO, 0, 1, SH, 1,
      "value_out|key_out");
  add("value_cache num_blocks + 1", 0, TH_D_EXTENT_ADD, X_VC, 0, 1, SH, 1,
      "value_cache|num_blocks|key_cache");
  add("value_cache block_size + 1", 0, TH_D_EXTENT_ADD, X_VC, 1, 1, SH, 1,
      "value_cache|block_size|key_cache");
  add("block_tables rows = B + 1", 0, TH_D_EXTENT_ADD, X_BT, 0, 1, SH, 1,
      "block_tables|seq_lens");
  add("seq_lens B - 1", 0, TH_D_EXTENT_ADD, X_SL, 0, -1, SH, 1, "block_tables|seq_lens");
  add("x-split key_cache H + 1", 3, TH_D_EXTENT_ADD, X_KC, 1, 1, SH, 1, kd);
  add("x-split key_cache D/x + 1", 3, TH_D_EXTENT_ADD, X_KC, 2, 1, SH, 1, kd);
  add("x-split key_cache last dim x/2 (same D)", 3, D_LASTDIM, X_KC, 2, 0, SH, 1,
      "key_cache");
  add("x-split key Dk = 12, not a multiple of x = 8", 3, D_HD, -1, 2, 12, SH, 1, kd);
  add("x-split value_cache Dv + 1", 3, TH_D_EXTENT_ADD, X_VC, 2, 1, SH, 1, vd);
  add("x-split value_cache block_size + 1", 3, TH_D_EXTENT_ADD, X_VC, 3, 1, SH, 1,
      "value_cache|block_size|key_cache");
  add("NZ key_cache H*D/ld + 1", 4, TH_D_EXTENT_ADD, X_KC, 1, 1, SH, 1, kd);
  add("NZ key_cache last dim ld/2 (same H*D)", 4, D_LASTDIM, X_KC, 1, 0, SH, 1,
      "key_cache");
  add("NZ H*Dk = 24, not a multiple of ld = 16", 4, D_HD, -1, 1, 24, SH, 1, kd);
  add("NZ value_cache H*D/ld - 1", 4, TH_D_EXTENT_ADD, X_VC, 1, -1, SH, 1, vd);
  add("k_scale [3] with H = 2", 2, TH_D_EXTENT_ADD, X_KS, 0, 1, SH, 1, "k_scale");
  add("valid: v_scale [1] next to a k_scale [H]", 2, D_SCALE, X_VS, 2, 0, OK, 0, NULL);
  add("k_scale [H, 1]", 2, TH_D_RANK, X_KS, 2, 0, SH, 1, "k_scale");
  add("v_scale [1, 1]", 1, TH_D_RANK, X_VS, 2, 0, SH, 1, "v_scale");
  add("key_cache stride -1", 0, TH_D_STRIDE, X_KC, 1, -1, SH, 1, "key_cache");
  add("value_cache stride -8", 0, TH_D_STRIDE, X_VC, 0, -8, SH, 1, "value_cache");
  add("key_out stride -3", 0, TH_D_STRIDE, X_KO, 0, -3, SH, 1, "key_out");
  add("block_tables stride -1", 0, TH_D_STRIDE, X_BT, 1, -1, SH, 1, "block_tables");
  add("seq_lens stride -1", 0, TH_D_STRIDE, X_SL, 0, -1, SH, 1, "seq_lens");
  add("key_cache span overflows", 0, TH_D_STRIDE, X_KC, 0, INT64_MAX / 2, SH, 1,
      "key_cache");
  add("key_out span overflows", 0, TH_D_STRIDE, X_KO, 0, INT64_MAX / 4, SH, 1, "key_out");
  add("value_out span overflows", 0, TH_D_STRIDE, X_VO, 0, INT64_MAX / 2, SH, 1,
      "value_out");

  /* phase 2: values */
  const char *sums = "key_out|seq_lens|sum", *over = "seq_lens|max_blocks|block_tables";
  add("key_out rows = sum(seq_lens) + 1", 0, D_TDELTA, -1, 1, 0, VA, 2, sums);
  add("key_out rows = sum(seq_lens) - 1", 0, D_TDELTA, -1, -1, 0, VA, 2, sums);
  add("key_out rows = sum(seq_lens) + 1 (fp8)", 1, D_TDELTA, -1, 1, 0, VA, 2, sums);
  add("seq_lens[1] = -1", 0, D_SEQ, -1, 1, -1, VA, 2, "seq_lens");
  add("seq_lens[2] = INT32_MIN (i32)", 5, D_SEQ, -1, 2, INT32_MIN, VA, 2, "seq_lens");
  add("seq_lens[0] = -1, rows kept", 0, D_SEQ_KEEP_T, -1, 0, -1, VA, 2,
      "seq_lens|key_out");
  add("seq_lens[2] = 17 needs 5 blocks, max_blocks 4", 0, D_SEQ, -1, 2, 17, VA, 2, over);
  add("seq_lens[0] = 2^40, rows kept", 0, D_SEQ_KEEP_T, -1, 0, INT64_C(1) << 40, VA, 2,
      "seq_lens|max_blocks|block_tables|key_out");
  add("seq_lens sum wraps to key_out rows", 0, D_SEQ_WRAP, -1, 0, 0, VA, 2,
      "seq_lens|max_blocks|block_tables|key_out|overflow");
  add("valid: seq_lens[2] = 16 = max_blocks * block_size", 0, D_SEQ, -1, 2, 16, OK, 0,
      NULL);
  add("max_blocks 0, seq_lens 0", 0, D_MB, -1, 0, 0, OK, 0, NULL);
  add("max_blocks 0, seq_lens[0] = 5", 0, D_MB, -1, 0, 1, VA, 2, over);
  add("max_blocks 2, seq_lens[2] = 9 needs 3", 0, D_MB, -1, 2, 1, VA, 2, over);
  add("valid: B = 0", 0, D_B0, -1, 0, 0, OK, 0, NULL);
  add("valid: num_blocks = 0, seq_lens 0", 0, D_NB0, -1, 0, 0, OK, 0, NULL);
  add("valid: num_blocks = 0, seq_lens 0 (x-split)", 3, D_NB0, -1, 0, 0, OK, 0, NULL);
  add("valid: block_size = 0, seq_lens 0", 0, D_BS0, -1, 0, 0, OK, 0, NULL);
  add("block_size = 0, seq_lens[0] = 1", 0, D_BS0, -1, 1, 0, VA, 2, over);
  add("block_tables[2][1] = num_blocks", 0, D_BT, -1, 9, 16, VA, 2, "block_tables");
  add("block_tables[0][0] = -1", 0, D_BT, -1, 0, -1, VA, 2, "block_tables");
  add("block_tables[2][2] = INT32_MAX", 0, D_BT, -1, 10, INT32_MAX, VA, 2,
      "block_tables");
  add("block_tables[0][1] = num_blocks (fp8)", 1, D_BT, -1, 1, 16, VA, 2, "block_tables");
  add("block_tables[2][0] = -1 (x-split)", 3, D_BT, -1, 8, -1, VA, 2, "block_tables");
  add("block_tables[2][2] = num_blocks (NZ)", 4, D_BT, -1, 10, 16, VA, 2, "block_tables");
  add("block_tables[2][0] = INT64_MIN (i64)", 5, D_BT, -1, 8, INT64_MIN, VA, 2,
      "block_tables");
  add("block_tables[0][1] = 2^40 (i64)", 5, D_BT, -1, 1, INT64_C(1) << 40, VA, 2,
      "block_tables");
  add("valid: unused block_tables[0][2] = -1", 0, D_BT, -1, 2, -1, OK, 0, NULL);
  add("valid: unused block_tables[0][3] = num_blocks", 0, D_BT, -1, 3, 16, OK, 0, NULL);
  add("valid: unused block_tables[2][3] = INT32_MIN", 0, D_BT, -1, 11, INT32_MIN, OK, 0,
      NULL);
  add("valid: block_tables row 1 (seq_len 0) = -1", 0, D_BT, -1, 4, -1, OK, 0, NULL);
  add("valid: every unused entry invalid", 0, D_UNUSED_ALL, -1, 0, 0, OK, 0, NULL);
  add("valid: every unused entry invalid (i64)", 5, D_UNUSED_ALL, -1, 0, 0, OK, 0, NULL);
  add("valid: every unused entry invalid (NZ)", 4, D_UNUSED_ALL, -1, 0, 0, OK, 0, NULL);
  add("valid: unused block_tables[2][3] = INT64_MAX (i64)", 5, D_BT, -1, 11, INT64_MAX,
      OK, 0, NULL);
  static const char *const sname[8] = {
      "0", "-0", "-1", "NaN", "inf", "-inf", "1e-40 (valid)", "FLT_MAX (valid)"};
  for (int code = 0; code < 8; code++) {
    int ok = code >= 6;
    snprintf(nm, sizeof nm, "k_scale [] = %s", sname[code]);
    add(nm, 1, D_SCALEV, X_KS, 0, code, ok ? OK : VA, ok ? 0 : 2, ok ? NULL : "k_scale");
    snprintf(nm, sizeof nm, "v_scale [1] = %s", sname[code]);
    add(nm, 1, D_SCALEV, X_VS, 0, code, ok ? OK : VA, ok ? 0 : 2, ok ? NULL : "v_scale");
  }
  add("k_scale[1] = 0 ([H])", 2, D_SCALEV, X_KS, 1, 0, VA, 2, "k_scale");
  add("v_scale[1] = NaN ([H])", 2, D_SCALEV, X_VS, 1, 3, VA, 2, "v_scale");
  add("v_scale[0] = -inf ([H])", 2, D_SCALEV, X_VS, 0, 5, VA, 2, "v_scale");
}

static void run_row(const void *row) {
  const err_row *r = row;
  static int sentinel;
  gcase c;
  base_case(&c, r->base);
  apply_pre(&c, r);
  case_layout(&c);
  apply_mid(&c, r);
  llmk_kv_layout layout = r->defect == D_LAYOUT ? (llmk_kv_layout)r->a1 : c.layout;
  tset s, e;
  nanlist nl = {0};
  tset_build(&s, &c, 7);
  tset_copy(&e, &s);
  if (r->expect == LLMK_SUCCESS) ref_gather(&c, &s, &e, &nl);
  apply_post(&s, r);
  size_t ws = 12345;
  llmk_plan *plan = (llmk_plan *)(void *)&sentinel;
  th_reset_error();
  llmk_status st = call_p1(&s, layout, r->defect == D_NULL_WS ? NULL : &ws,
                           r->defect == D_NULL_PLAN ? NULL : &plan);
  if (r->phase == 1) {
    th_check_refused(r->name, st, r->expect, r->defect == D_NULL_PLAN ? NULL : &plan,
                     r->defect == D_NULL_WS ? NULL : &ws, "gather_pa_kv_cache", r->msg);
    if (st == LLMK_SUCCESS) llmk_plan_destroy(plan); /* never run a bad descriptor's */
  } else {
    st = th_check_run(r->name, st, plan, ws, llmk_gather_pa_kv_cache, r->expect,
                      "gather_pa_kv_cache", r->msg);
  }
  /* rejected: every byte as before; accepted: the reference's outputs */
  if (st == r->expect)
    tset_check(&s, &e, &nl, ALL_HOSTS, r->name);
  else
    for (int k = 0; k < X_COUNT; k++)
      if (s.has_buf[k])
        TU_CHECK(tu_buf_check(&s.buf[k]), "%s: %s guards", r->name, tname[k]);
  free(nl.v);
  tset_free(&s);
  tset_free(&e);
  case_free(&c);
}

static void test_errors(void) {
  build_rows();
  th_table_run(&rows, "error table", run_row);
}

/* ------------------------------------------------------ plans, workspace */

static void test_lifecycle(void) {
  gcase c;
  base_case(&c, 1);
  case_layout(&c);
  tset s, e;
  nanlist nl = {0};
  tset_build(&s, &c, 31);
  tset_copy(&e, &s);
  ref_gather(&c, &s, &e, &nl);
  size_t ws = 0;
  llmk_plan *plan = NULL;
  TU_CHECK(call_p1(&s, c.layout, &ws, &plan) == LLMK_SUCCESS, "lifecycle: phase 1");
  TU_CHECK(llmk_plan_set_repeatable(plan) == LLMK_SUCCESS, "lifecycle: set_repeatable");
  for (int run = 0; run < 3; run++) {
    llmk_status st = run_plan(plan, ws, ctxs[run]);
    TU_CHECK(st == LLMK_SUCCESS, "repeatable run %d: %d ('%s')", run, (int)st,
             llmk_last_error());
  }
  tset_check(&s, &e, &nl, ALL_HOSTS, "repeatable plan run 3 times");
  TU_CHECK(llmk_plan_destroy(plan) == LLMK_SUCCESS, "destroy repeatable plan");

  tset_free(&s);
  tset_build(&s, &c, 31);
  TU_CHECK(call_p1(&s, c.layout, &ws, &plan) == LLMK_SUCCESS, "lifecycle: phase 1");
  TU_CHECK(run_plan(plan, ws, NULL) == LLMK_SUCCESS, "lifecycle: first run");
  TU_CHECK(run_plan(plan, ws, NULL) == LLMK_ERROR_INVALID_PLAN,
           "consumed plan run again");
  tset_check(&s, &e, &nl, ALL_HOSTS, "consumed plan run again");
  TU_CHECK(call_p1(&s, c.layout, &ws, &plan) == LLMK_SUCCESS, "lifecycle: phase 1");
  TU_CHECK(llmk_plan_destroy(plan) == LLMK_SUCCESS, "destroy an unrun plan");
  th_check_null_plan(llmk_gather_pa_kv_cache, "gather_pa_kv_cache");
  free(nl.v);
  tset_free(&s);
  tset_free(&e);
  case_free(&c);
}

static void workspace_case(const gcase *c, const char *label) {
  tset s, e;
  tset_build(&s, c, 41);
  tset_copy(&e, &s);
  size_t ws = 0;
  llmk_plan *plan = NULL;
  llmk_status st = call_p1(&s, c->layout, &ws, &plan);
  TU_CHECK(st == LLMK_SUCCESS, "%s: phase 1 %d ('%s')", label, (int)st,
           llmk_last_error());
  if (st != LLMK_SUCCESS) goto done;
  if (ws == 0) {
    printf("  %s: workspace size is 0: WORKSPACE_TOO_SMALL not reachable\n", label);
    TU_CHECK(llmk_plan_destroy(plan) == LLMK_SUCCESS, "%s: destroy", label);
  } else {
    printf("  %s: workspace size %zu\n", label, ws);
    void *w = malloc(ws);
    st = llmk_gather_pa_kv_cache(w, ws - 1, plan, NULL);
    TU_CHECK(st == LLMK_ERROR_WORKSPACE_TOO_SMALL, "%s: workspace %zu of %zu: %d", label,
             ws - 1, ws, (int)st);
    tset_check(&s, &e, NULL, ALL_HOSTS, "workspace too small");
    st = call_p1(&s, c->layout, &ws, &plan);
    if (st == LLMK_SUCCESS) {
      st = llmk_gather_pa_kv_cache(NULL, ws, plan, NULL);
      TU_CHECK(st == LLMK_ERROR_NULL_POINTER, "%s: NULL workspace of %zu: %d", label, ws,
               (int)st);
      tset_check(&s, &e, NULL, ALL_HOSTS, "NULL workspace");
    }
    free(w);
  }
done:
  tset_free(&s);
  tset_free(&e);
}

static void test_workspace(void) {
  printf("workspace:\n");
  static const char *const bname[6] = {
      "blocks f16", "blocks e4m3fn->f32", "blocks e5m2->bf16", "xsplit f16",
      "nz f16",     "blocks u8"};
  for (int b = 0; b < 6; b++) {
    gcase c;
    base_case(&c, b);
    case_layout(&c);
    workspace_case(&c, bname[b]);
    case_free(&c);
  }
  gcase c;
  gopts o = {LLMK_KV_BLOCKS, LLMK_BF16, 1, 200000};
  gen_random(&c, 9, &o); /* B = 17 */
  workspace_case(&c, "random blocks bf16, B = 17");
  case_free(&c);
}

/* ------------------------------------------------------------ regressions */

/* Hand-built calls at the edges of the shapes: empty tensors with huge extents, a block
 * size of 0, a batch whose workspace would wrap. Each must answer at once. */

static void reg_desc(llmk_tensor *t, llmk_dtype dt, int rank, const int64_t *shape,
                     const int64_t *strides, void *data) {
  if (llmk_tensor_init(t, dt, rank, shape, strides, data) != LLMK_SUCCESS)
    th_die("llmk_tensor_init rejected a regression layout");
}

static llmk_status reg_p1(const char *label, const llmk_tensor *kc, const llmk_tensor *bt,
                          const llmk_tensor *sl, const llmk_tensor *ko, size_t *ws,
                          llmk_plan **plan) {
  double t0 = tu_now();
  th_reset_error();
  llmk_status st = llmk_gather_pa_kv_cache_get_workspace_size(
      kc, NULL, bt, sl, NULL, NULL, ko, NULL, LLMK_KV_BLOCKS, ws, plan);
  double dt = tu_now() - t0;
  TU_CHECK(dt < 1.0, "%s: phase 1 took %.2f s", label, dt);
  return st;
}

static void test_regressions(void) {
  double t0 = tu_now();
  const int64_t one[4] = {1, 1, 1, 1};
  int64_t zero = 0, len1 = 1;
  llmk_tensor kc, bt, sl, ko;
  size_t ws = 1;
  llmk_plan *plan = NULL;
  /* an empty output (T = 0) with H = 2^63-2: no head may be enumerated */
  const int64_t H = INT64_MAX - 1;
  reg_desc(&kc, LLMK_F16, 4, (int64_t[]){0, 1, H, 1}, one, NULL);
  reg_desc(&ko, LLMK_F16, 3, (int64_t[]){0, H, 1}, one, NULL);
  reg_desc(&bt, LLMK_I64, 2, (int64_t[]){0, 1}, one, NULL);
  reg_desc(&sl, LLMK_I64, 1, (int64_t[]){0}, one, NULL);
  llmk_status st = reg_p1("empty, H = 2^63-2", &kc, &bt, &sl, &ko, &ws, &plan);
  TU_CHECK(st == LLMK_SUCCESS, "empty, H = 2^63-2: phase 1 %d ('%s')", (int)st,
           llmk_last_error());
  if (st == LLMK_SUCCESS) {
    st = th_run_plan(llmk_gather_pa_kv_cache, plan, ws, NULL);
    TU_CHECK(st == LLMK_SUCCESS, "empty, H = 2^63-2: phase 2 %d ('%s')", (int)st,
             llmk_last_error());
  }
  /* block_size 0 and max_blocks = INT64_MAX (a stride-0 row): seq_lens[0] = 1 needs a
   * block no block size of 0 gives; it used to pass as "INT64_MAX blocks" and check
   * them one by one */
  {
    th_tensor out;
    th_tensor_make(&out, LLMK_F16, 3, (int64_t[]){1, 1, 1}, NULL);
    reg_desc(&kc, LLMK_F16, 4, (int64_t[]){1, 0, 1, 1}, one, NULL);
    reg_desc(&bt, LLMK_I64, 2, (int64_t[]){1, INT64_MAX}, (int64_t[]){1, 0}, &zero);
    reg_desc(&sl, LLMK_I64, 1, (int64_t[]){1}, one, &len1);
    st = reg_p1("block_size 0, max_blocks INT64_MAX", &kc, &bt, &sl, &out.t, &ws, &plan);
    TU_CHECK(st == LLMK_SUCCESS, "block_size 0, max_blocks INT64_MAX: phase 1 %d ('%s')",
             (int)st, llmk_last_error());
    if (st == LLMK_SUCCESS) {
      double t1 = tu_now();
      th_reset_error();
      st = th_run_plan(llmk_gather_pa_kv_cache, plan, ws, NULL);
      TU_CHECK(st == LLMK_ERROR_INVALID_VALUE && tu_now() - t1 < 1.0 &&
                   th_msg_ok("gather_pa_kv_cache", "seq_lens", NULL),
               "block_size 0, max_blocks INT64_MAX: phase 2 %d in %.2f s ('%s')", (int)st,
               tu_now() - t1, llmk_last_error());
    }
    th_tensor_free(&out);
  }
  /* B = INT64_MAX (block_tables [B, 0], seq_lens of stride 0): 16 + 8 * (B + 1) bytes of
   * workspace cannot be computed */
  reg_desc(&kc, LLMK_F16, 4, (int64_t[]){1, 1, 1, 1}, one, &zero);
  reg_desc(&bt, LLMK_I64, 2, (int64_t[]){INT64_MAX, 0}, one, NULL);
  reg_desc(&sl, LLMK_I64, 1, (int64_t[]){INT64_MAX}, (int64_t[]){0}, &zero);
  reg_desc(&ko, LLMK_F16, 3, (int64_t[]){0, 1, 1}, one, NULL);
  st = reg_p1("B = INT64_MAX", &kc, &bt, &sl, &ko, &ws, &plan);
  th_check_refused("B = INT64_MAX", st, LLMK_ERROR_INVALID_SHAPE, &plan, &ws,
                   "gather_pa_kv_cache", "block_tables");
  if (st == LLMK_SUCCESS) llmk_plan_destroy(plan);
  printf("regressions: %.2f s\n", tu_now() - t0);
}

/* ------------------------------------------------------- CANN's controls (_ex) */
/* llmk_gather_pa_kv_cache_ex: cumulative seq_lens ([B + 1], rows from seq_lens[i], rows
 * below seq_lens[0] untouched) and seq_offset (a sequence's blocks from block-table
 * column seq_offset[i] / block_size), in the blocks and NZ layouts, checked against
 * gather_pa_kv_cache_ref_one_at (tests/ref) for every context of the sweep; then the
 * refusals: each leaves both outputs byte-identical. */

typedef struct ex_case {
  llmk_kv_layout layout;
  llmk_dtype dt, idt;
  int64_t B, nb, bs, H, Dk, Dv, mb;
  int cumsum, offs;
  int64_t lens[8], offsets[8], starts[8], firsts[8], T;
  th_tensor kc, vc, bt, sl, so, ko, vo;
  int64_t tables[8 * 16];
} ex_case;

static void ex_fill_random(th_tensor *x) {
  unsigned char *p = x->buf.data;
  for (size_t i = 0; i < x->buf.size; i++) p[i] = (unsigned char)tu_rand_range(0, 255);
}

static void ex_put(th_tensor *x, int64_t i, int64_t v) {
  put_int(x->t.data, x->t.dtype, i, v);
}

/* Shapes and index values of a valid case; row 0 is left free when cumsum starts at 1. */
static void ex_build(ex_case *c, int lead) {
  int64_t es = (int64_t)llmk_dtype_size(c->dt);
  int64_t ld = 32 / es;
  int64_t total = lead;
  for (int64_t i = 0; i < c->B; i++) {
    c->starts[i] = total;
    c->firsts[i] = c->offs ? c->offsets[i] / c->bs : 0;
    total += c->lens[i];
  }
  c->T = total;
  if (c->layout == LLMK_KV_NZ) {
    th_tensor_make(&c->kc, c->dt, 4, (int64_t[]){c->nb, c->H * c->Dk / ld, c->bs, ld},
                   NULL);
    th_tensor_make(&c->vc, c->dt, 4, (int64_t[]){c->nb, c->H * c->Dv / ld, c->bs, ld},
                   NULL);
  } else {
    th_tensor_make(&c->kc, c->dt, 4, (int64_t[]){c->nb, c->bs, c->H, c->Dk}, NULL);
    th_tensor_make(&c->vc, c->dt, 4, (int64_t[]){c->nb, c->bs, c->H, c->Dv}, NULL);
  }
  ex_fill_random(&c->kc);
  ex_fill_random(&c->vc);
  th_tensor_make(&c->bt, c->idt, 2, (int64_t[]){c->B, c->mb}, NULL);
  for (int64_t i = 0; i < c->B * c->mb; i++) {
    c->tables[i] = tu_rand_range(0, c->nb - 1);
    ex_put(&c->bt, i, c->tables[i]);
  }
  th_tensor_make(&c->sl, c->idt, 1, (int64_t[]){c->B + (c->cumsum ? 1 : 0)}, NULL);
  for (int64_t i = 0; i < c->B; i++) {
    if (c->cumsum)
      ex_put(&c->sl, i, c->starts[i]);
    else
      ex_put(&c->sl, i, c->lens[i]);
  }
  if (c->cumsum) ex_put(&c->sl, c->B, total);
  th_tensor_make(&c->so, c->idt, 1, (int64_t[]){c->B}, NULL);
  for (int64_t i = 0; i < c->B; i++) ex_put(&c->so, i, c->offs ? c->offsets[i] : 0);
  th_tensor_make(&c->ko, c->dt, 3, (int64_t[]){c->T, c->H, c->Dk}, NULL);
  th_tensor_make(&c->vo, c->dt, 3, (int64_t[]){c->T, c->H, c->Dv}, NULL);
  ex_fill_random(&c->ko);
  ex_fill_random(&c->vo);
}

static void ex_free(ex_case *c) {
  th_tensor *all[7] = {&c->kc, &c->vc, &c->bt, &c->sl, &c->so, &c->ko, &c->vo};
  for (int i = 0; i < 7; i++) th_tensor_free(all[i]);
}

static llmk_status ex_p1(ex_case *c, size_t *ws, llmk_plan **plan) {
  th_reset_error();
  return llmk_gather_pa_kv_cache_ex_get_workspace_size(
      &c->kc.t, &c->vc.t, &c->bt.t, &c->sl.t, c->offs ? &c->so.t : NULL, c->cumsum, NULL,
      NULL, &c->ko.t, &c->vo.t, c->layout, ws, plan);
}

/* The NZ view of an output [T, H, D] as the ref reads it: the same descriptor. */
static void ex_expect(const ex_case *c, const th_tensor *cache, const th_tensor *out,
                      int v, tu_buf *want) {
  th_buf_clone(want, &out->buf);
  llmk_tensor o = out->t;
  o.data = (char *)want->data + ((char *)out->t.data - (char *)out->buf.data);
  gather_pa_kv_cache_ref_one_at((int)c->layout, v, &cache->t, c->starts, c->lens,
                                c->firsts, c->B, c->tables, c->mb, NULL, 0, &o, NULL,
                                NULL);
}

static void ex_run_case(ex_case *c, const char *label) {
  tu_buf wk, wv, k0, v0;
  th_buf_clone(&k0, &c->ko.buf);
  th_buf_clone(&v0, &c->vo.buf);
  ex_expect(c, &c->kc, &c->ko, 0, &wk);
  ex_expect(c, &c->vc, &c->vo, 1, &wv);
  for (int k = 0; k < g_sw.n; k++) {
    th_buf_restore(&c->ko.buf, &k0);
    th_buf_restore(&c->vo.buf, &v0);
    size_t ws = 0;
    llmk_plan *plan = NULL;
    llmk_status st = ex_p1(c, &ws, &plan);
    TU_CHECK(st == LLMK_SUCCESS, "%s: phase 1 %d ('%s')", label, (int)st,
             llmk_last_error());
    if (st != LLMK_SUCCESS) continue;
    st = th_run_plan(llmk_gather_pa_kv_cache, plan, ws, g_sw.ctx[k]);
    TU_CHECK(st == LLMK_SUCCESS, "%s [%s]: phase 2 %d ('%s')", label, g_sw.name[k],
             (int)st, llmk_last_error());
    TU_CHECK(th_buf_same(&c->ko.buf, &wk) && th_buf_same(&c->vo.buf, &wv),
             "%s [%s]: outputs differ from the reference", label, g_sw.name[k]);
  }
  tu_buf_free(&wk);
  tu_buf_free(&wv);
  tu_buf_free(&k0);
  tu_buf_free(&v0);
}

static void ex_random(ex_case *c, llmk_kv_layout layout, llmk_dtype dt, llmk_dtype idt,
                      int cumsum, int offs) {
  memset(c, 0, sizeof *c);
  c->layout = layout;
  c->dt = dt;
  c->idt = idt;
  c->cumsum = cumsum;
  c->offs = offs;
  c->B = tu_rand_range(1, 6);
  c->nb = tu_rand_range(2, 9);
  c->bs = tu_rand_range(1, 5);
  c->H = tu_rand_range(1, 3);
  int64_t ld = 32 / (int64_t)llmk_dtype_size(dt);
  c->Dk = layout == LLMK_KV_NZ ? ld * tu_rand_range(1, 2) : tu_rand_range(1, 9);
  c->Dv = layout == LLMK_KV_NZ ? ld * tu_rand_range(1, 2) : tu_rand_range(1, 9);
  c->mb = tu_rand_range(4, 16);
  for (int64_t i = 0; i < c->B; i++) {
    int64_t first = offs ? tu_rand_range(0, c->mb - 1) : 0;
    int64_t room = (c->mb - first) * c->bs; /* positions that fit after first */
    c->offsets[i] = first * c->bs + tu_rand_range(0, c->bs - 1); /* not a multiple */
    c->lens[i] = tu_rand_range(0, room < 11 ? room : 11);
  }
}

static void test_ex_values(void) {
  static const llmk_kv_layout layouts[2] = {LLMK_KV_BLOCKS, LLMK_KV_NZ};
  static const llmk_dtype dts[3] = {LLMK_F16, LLMK_I8, LLMK_F32};
  int n = 0;
  for (int rep = 0; rep < 8; rep++)
    for (int l = 0; l < 2; l++)
      for (int d = 0; d < 3; d++)
        for (int cs = 0; cs < 2; cs++)
          for (int of = 0; of < 2; of++) {
            ex_case c;
            ex_random(&c, layouts[l], dts[d], rep & 1 ? LLMK_I64 : LLMK_I32, cs, of);
            ex_build(&c, cs && rep % 4 >= 2 ? (int)tu_rand_range(1, 3) : 0);
            char label[96];
            snprintf(label, sizeof label, "ex %s %s cumsum=%d offset=%d B=%lld rep %d",
                     llmk_kv_layout_name(c.layout), llmk_dtype_name(c.dt), cs, of,
                     (long long)c.B, rep);
            ex_run_case(&c, label);
            ex_free(&c);
            n++;
          }
  printf("ex values: %d cases\n", n);
}

/* A fixed case: B 2, lens 3 and 2, block size 2, offsets 2 and 5 (columns 1 and 2). */
static void ex_fixed(ex_case *c, int cumsum) {
  memset(c, 0, sizeof *c);
  c->layout = LLMK_KV_BLOCKS;
  c->dt = LLMK_F16;
  c->idt = LLMK_I32;
  c->B = 2, c->nb = 4, c->bs = 2, c->H = 1, c->Dk = 2, c->Dv = 3, c->mb = 4;
  c->cumsum = cumsum;
  c->offs = 1;
  c->lens[0] = 3, c->lens[1] = 2;
  c->offsets[0] = 2, c->offsets[1] = 5;
  ex_build(c, 0);
}

typedef struct ex_err {
  const char *name;
  int cumsum;
  int what; /* see ex_apply */
  int64_t a, b;
  llmk_status want;
  int phase;
} ex_err;

/* 0 seq_lens[a] = b; 1 seq_offset[a] = b; 2 seq_offset dtype f32; 3 seq_offset shape
 * [B + a]; 4 seq_lens shape [b] (B stays); 5 seq_offset rank 2; 6 key_out over
 * seq_offset */
static void ex_apply(ex_case *c, const ex_err *e) {
  switch (e->what) {
    case 0:
      ex_put(&c->sl, e->a, e->b);
      break;
    case 1:
      ex_put(&c->so, e->a, e->b);
      break;
    case 2:
      c->so.t.dtype = LLMK_F32;
      break;
    case 3:
      c->so.t.shape[0] = c->B + e->a;
      if (e->a < 0) break;
      c->so.t.strides[0] = 0;
      break;
    case 4:
      c->sl.t.shape[0] = e->b;
      c->sl.t.strides[0] = 0;
      break;
    case 5:
      c->so.t.rank = 2;
      c->so.t.shape[1] = 1;
      c->so.t.strides[1] = 1;
      break;
    case 6:
      c->so.t.data = c->ko.t.data;
      break;
  }
}

static void test_ex_errors(void) {
  static const ex_err ex_rows[] = {
      {"negative seq_offset", 0, 1, 1, -1, LLMK_ERROR_INVALID_VALUE, 2},
      {"seq_offset past max_blocks", 0, 1, 1, 8, LLMK_ERROR_INVALID_VALUE, 2},
      {"seq_offset needs one column too many", 0, 1, 0, 6, LLMK_ERROR_INVALID_VALUE, 2},
      {"cumulative seq_lens[0] negative", 1, 0, 0, -1, LLMK_ERROR_INVALID_VALUE, 2},
      {"cumulative seq_lens decrease", 1, 0, 1, 6, LLMK_ERROR_INVALID_VALUE, 2},
      {"cumulative seq_lens[B] != T", 1, 0, 2, 4, LLMK_ERROR_INVALID_VALUE, 2},
      {"plain sum != T", 0, 0, 1, 1, LLMK_ERROR_INVALID_VALUE, 2},
      {"seq_offset f32", 0, 2, 0, 0, LLMK_ERROR_INVALID_DTYPE, 1},
      {"seq_offset [B + 1]", 0, 3, 1, 0, LLMK_ERROR_INVALID_SHAPE, 1},
      {"seq_offset [B - 1]", 0, 3, -1, 0, LLMK_ERROR_INVALID_SHAPE, 1},
      {"seq_offset rank 2", 0, 5, 0, 0, LLMK_ERROR_INVALID_SHAPE, 1},
      {"cumulative seq_lens [B]", 1, 4, 0, 2, LLMK_ERROR_INVALID_SHAPE, 1},
      {"plain seq_lens [B + 1]", 0, 4, 0, 3, LLMK_ERROR_INVALID_SHAPE, 1},
      {"key_out over seq_offset", 0, 6, 0, 0, LLMK_ERROR_OVERLAP, 1},
  };
  int n = (int)(sizeof ex_rows / sizeof ex_rows[0]);
  for (int r = 0; r < n; r++) {
    const ex_err *e = &ex_rows[r];
    ex_case c;
    ex_fixed(&c, e->cumsum);
    ex_apply(&c, e);
    th_snap snap = {0};
    th_snap_add(&snap, &c.ko.buf, "key_out");
    th_snap_add(&snap, &c.vo.buf, "value_out");
    size_t ws = 1;
    llmk_plan *plan = NULL;
    llmk_status st = ex_p1(&c, &ws, &plan);
    if (e->phase == 1) {
      th_check_refused(e->name, st, e->want, &plan, &ws, "gather_pa_kv_cache", NULL);
      if (st == LLMK_SUCCESS) llmk_plan_destroy(plan);
    } else {
      th_check_run(e->name, st, plan, ws, llmk_gather_pa_kv_cache, e->want,
                   "gather_pa_kv_cache", "seq_lens|seq_offset|block_tables|key_out");
    }
    th_snap_unchanged(&snap, e->name);
    th_snap_free(&snap);
    ex_free(&c);
  }
  /* the fixed case itself, both forms: key rows come from blocks tables[0][1..2] and
   * tables[1][2] */
  for (int cs = 0; cs < 2; cs++) {
    ex_case c;
    ex_fixed(&c, cs);
    ex_run_case(&c, cs ? "ex fixed, cumulative" : "ex fixed, plain");
    ex_free(&c);
  }
  printf("ex errors: %d rows\n", n);
}

int main(void) {
  double t0 = tu_now();
  setvbuf(stdout, NULL, _IOLBF, 0); /* progress survives a crash */
  tu_seed(20240717);
  if (SMALL) printf("AddressSanitizer build: 500 random cases instead of 1200\n");
  static const int threads[3] = {0, 1, 2};
  th_sweep_init(&g_sw, threads, 3);
  test_regressions();
  test_ex_values();
  test_ex_errors();
  test_samples();
  double t1 = tu_now();
  test_errors();
  test_lifecycle();
  test_workspace();
  double t2 = tu_now();
  test_round_trip();
  double t3 = tu_now();
  test_random();
  double t4 = tu_now();
  test_large();
  double t5 = tu_now();
  printf(
      "time %.2f s (samples %.2f, errors + plans %.2f, round trips %.2f, random %.2f, "
      "threaded %.2f)\n",
      t5 - t0, t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4);
  th_sweep_free(&g_sw);
  return tu_finish("test_gather_pa_kv_cache");
}
