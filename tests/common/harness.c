/* SPDX-License-Identifier: Apache-2.0 */
#include "harness.h"

#include "ref_util.h"

void th_die(const char *what) {
  fprintf(stderr, "test bug: %s\n", what);
  exit(2);
}

void *th_xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) th_die("out of memory");
  return p;
}

/* ---------------------------------------------------------------- tensors */

size_t th_dtype_size(llmk_dtype dt) {
  return ref_dtype_size(dt);
}

size_t th_span_bytes(llmk_dtype dt, int rank, const int64_t *shape,
                     const int64_t *strides) {
  int64_t last = 0;
  for (int k = 0; k < rank; k++) {
    if (shape[k] == 0) return 0;
    last += (shape[k] - 1) * strides[k];
  }
  return (size_t)(last + 1) * th_dtype_size(dt);
}

int64_t th_numel(int rank, const int64_t *shape) {
  int64_t n = 1;
  for (int k = 0; k < rank; k++) n *= shape[k];
  return n;
}

int64_t th_row_major_offset(int rank, const int64_t *shape, const int64_t *strides,
                            int64_t idx) {
  int64_t off = 0;
  for (int k = rank - 1; k >= 0; k--) {
    off += (idx % shape[k]) * strides[k];
    idx /= shape[k];
  }
  return off;
}

void th_contiguous_strides(int rank, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int k = rank - 1; k >= 0; k--) {
    strides[k] = s;
    s *= shape[k] > 1 ? shape[k] : 1;
  }
}

void th_fill_pattern(void *p, size_t n, uint64_t seed) {
  unsigned char *d = p;
  for (size_t i = 0; i < n; i += 8) {
    uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    memcpy(d + i, &z, n - i < 8 ? n - i : 8);
  }
}

void th_tensor_make(th_tensor *x, llmk_dtype dt, int rank, const int64_t *shape,
                    const int64_t *strides) {
  int64_t st[LLMK_MAX_RANK];
  if (rank < 0 || rank > LLMK_MAX_RANK) th_die("th_tensor_make: rank");
  if (strides)
    memcpy(st, strides, (size_t)rank * sizeof *st);
  else
    th_contiguous_strides(rank, shape, st);
  x->buf = tu_buf_alloc(th_span_bytes(dt, rank, shape, st));
  if (llmk_tensor_init(&x->t, dt, rank, shape, st, x->buf.data) != LLMK_SUCCESS)
    th_die("llmk_tensor_init rejected a test layout");
}

void th_tensor_free(th_tensor *x) {
  tu_buf_free(&x->buf);
  x->t.data = NULL;
}

int th_tensor_guards_ok(const th_tensor *x) {
  return tu_buf_check(&x->buf);
}

void *th_tensor_byte(const th_tensor *x, int64_t elem) {
  return (char *)x->t.data + elem * (int64_t)th_dtype_size(x->t.dtype);
}

/* ---------------------------------------------------------------- buffers */

void th_buf_clone(tu_buf *dst, const tu_buf *src) {
  *dst = tu_buf_alloc(src->size);
  memcpy(dst->base, src->base, src->size + 2 * TU_GUARD);
}

void th_buf_restore(tu_buf *dst, const tu_buf *src) {
  if (dst->size != src->size) th_die("th_buf_restore: sizes differ");
  memcpy(dst->base, src->base, src->size + 2 * TU_GUARD);
}

int th_buf_same(const tu_buf *a, const tu_buf *b) {
  return a->size == b->size && memcmp(a->base, b->base, a->size + 2 * TU_GUARD) == 0;
}

/* -------------------------------------------------------------- snapshots */

void th_snap_add(th_snap *s, const tu_buf *b, const char *name) {
  if (s->n == TH_SNAP_MAX) th_die("th_snap_add: too many buffers");
  s->live[s->n] = b;
  s->name[s->n] = name;
  th_buf_clone(&s->copy[s->n], b);
  s->n++;
}

int th_snap_unchanged(const th_snap *s, const char *label) {
  int ok = 1;
  for (int i = 0; i < s->n; i++) {
    int same = th_buf_same(s->live[i], &s->copy[i]);
    TU_CHECK(same, "%s: %s written (%s)", label, s->name[i] ? s->name[i] : "a buffer",
             tu_buf_check(s->live[i]) ? "guards intact" : "guards overwritten");
    ok &= same;
  }
  return ok;
}

void th_snap_free(th_snap *s) {
  for (int i = 0; i < s->n; i++) tu_buf_free(&s->copy[i]);
  s->n = 0;
}

/* ------------------------------------------------------ status, messages */

void th_reset_error(void) {
  (void)llmk_tensor_init(NULL, LLMK_I32, 0, NULL, NULL, NULL);
}

int th_words_in(const char *m, const char *words, int all) {
  int any = 0;
  for (const char *w = words; *w;) {
    size_t n = strcspn(w, "|");
    char buf[128];
    snprintf(buf, sizeof buf, "%.*s", (int)(n < sizeof buf ? n : sizeof buf - 1), w);
    int in = n > 0 && strstr(m, buf) != NULL;
    if (n > 0 && all && !in) return 0;
    any |= in;
    w += n;
    if (*w == '|') w++;
  }
  return all ? 1 : any;
}

int th_msg_ok(const char *op, const char *alts, const char *must) {
  const char *m = llmk_last_error();
  size_t n = strlen(op);
  if (!m || strncmp(m, op, n) != 0 || m[n] != ':') return 0;
  m += n + 1;
  if (alts && !th_words_in(m, alts, 0)) return 0;
  if (must && !th_words_in(m, must, 1)) return 0;
  return 1;
}

/* ------------------------------------------------------------ error tables */

/* ------------------------------------------------------------ defects */

static void rank_trailing(llmk_tensor *t, int r) {
  for (int k = t->rank; k < r; k++) {
    t->shape[k] = 1;
    t->strides[k] = 1;
  }
  while (t->rank > r) {
    int k = t->rank - 1;
    t->shape[k - 1] *= t->shape[k];
    t->strides[k - 1] = t->strides[k];
    t->shape[k] = t->strides[k] = 0;
    t->rank--;
  }
}

static void rank_leading(llmk_tensor *t, int r) {
  llmk_tensor o = *t;
  memset(t->shape, 0, sizeof t->shape);
  memset(t->strides, 0, sizeof t->strides);
  if (r > o.rank) {
    int add = r - o.rank;
    for (int i = 0; i < add; i++) {
      t->shape[i] = 1;
      t->strides[i] = o.rank ? o.shape[0] * o.strides[0] : 1;
    }
    for (int i = 0; i < o.rank; i++) {
      t->shape[add + i] = o.shape[i];
      t->strides[add + i] = o.strides[i];
    }
  } else {
    int drop = o.rank - r; /* the first drop + 1 dimensions become one */
    t->shape[0] = th_numel(drop + 1, o.shape);
    t->strides[0] = o.strides[drop];
    for (int i = 1; i < r; i++) {
      t->shape[i] = o.shape[drop + i];
      t->strides[i] = o.strides[drop + i];
    }
  }
}

int th_defect_apply(llmk_tensor *t, int d, int64_t a, int64_t b) {
  if (d == TH_D_NULL) return 0;
  if (d == TH_D_NONE) return 1;
  if (!t || d >= TH_D_OP ||
      ((d == TH_D_RANK || d == TH_D_RANK_LEAD) && (a < 0 || a > LLMK_MAX_RANK)))
    th_die("th_defect_apply: no such defect on this tensor");
  if ((d == TH_D_EXTENT_ADD || d == TH_D_EXTENT || d == TH_D_STRIDE) &&
      (a < 0 || a >= LLMK_MAX_RANK))
    th_die("th_defect_apply: dimension");
  switch (d) {
    case TH_D_DATA_NULL:
      t->data = NULL;
      break;
    case TH_D_DTYPE:
      t->dtype = (llmk_dtype)a;
      break;
    case TH_D_RANK:
    case TH_D_RANK_LEAD:
      if (a == 0) {
        memset(t->shape, 0, sizeof t->shape);
        memset(t->strides, 0, sizeof t->strides);
      } else if (d == TH_D_RANK) {
        rank_trailing(t, (int)a);
      } else {
        rank_leading(t, (int)a);
      }
      t->rank = (int32_t)a;
      break;
    case TH_D_EXTENT_ADD:
      t->shape[a] += b;
      break;
    case TH_D_EXTENT:
      t->shape[a] = b;
      break;
    default: /* TH_D_STRIDE */
      t->strides[a] = b;
      break;
  }
  return 1;
}

/* ------------------------------------------------------------ error tables */

void *th_table_add(th_table *t, const void *row, size_t row_size) {
  if (t->n && row_size != t->row_size) th_die("th_table_add: rows of two sizes");
  t->row_size = row_size;
  if (t->n == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 64;
    t->rows = realloc(t->rows, (size_t)t->cap * row_size);
    if (!t->rows) th_die("out of memory");
  }
  char *r = t->rows + (size_t)t->n++ * row_size;
  memcpy(r, row, row_size);
  return r;
}

const char *th_table_str(th_table *t, const char *s) {
  if (t->nstr == t->capstr) {
    t->capstr = t->capstr ? 2 * t->capstr : 64;
    t->strs = realloc(t->strs, (size_t)t->capstr * sizeof *t->strs);
    if (!t->strs) th_die("out of memory");
  }
  size_t n = strlen(s) + 1;
  char *c = th_xmalloc(n);
  memcpy(c, s, n);
  t->strs[t->nstr++] = c;
  return c;
}

void th_table_free(th_table *t) {
  for (int i = 0; i < t->nstr; i++) free(t->strs[i]);
  free(t->strs);
  free(t->rows);
  memset(t, 0, sizeof *t);
}

void th_table_run(th_table *t, const char *what, void (*fn)(const void *row)) {
  th_run_rows(what, t->rows, t->n, t->row_size, fn);
  th_table_free(t);
}

void th_run_table(const char *what, const void *rows, int n, size_t row_size,
                  th_row_fn fn, void *user) {
  for (int i = 0; i < n; i++) fn((const char *)rows + (size_t)i * row_size, i, user);
  printf("%s: %d rows\n", what, n);
}

void th_run_rows(const char *what, const void *rows, int n, size_t row_size,
                 th_case_fn fn) {
  for (int i = 0; i < n; i++) fn((const char *)rows + (size_t)i * row_size);
  printf("%s: %d rows\n", what, n);
}

void th_check_refused(const char *label, llmk_status st, llmk_status expect,
                      llmk_plan *const *plan, const size_t *ws, const char *op,
                      const char *alts) {
  TU_CHECK(st == expect, "%s: status %d, expected %d ('%s')", label, (int)st, (int)expect,
           llmk_last_error());
  if (st == LLMK_SUCCESS) return;
  if (plan) TU_CHECK(*plan == NULL, "%s: *plan not set to NULL", label);
  if (ws) TU_CHECK(*ws == 0, "%s: *workspace_size = %zu, not 0", label, *ws);
  TU_CHECK(th_msg_ok(op, alts, NULL),
           "%s: message '%s' should start with '%s:' and name %s", label,
           llmk_last_error(), op, alts ? alts : "the op");
}

llmk_status th_check_run(const char *label, llmk_status st, llmk_plan *plan, size_t ws,
                         th_exec_fn exec, llmk_status expect, const char *op,
                         const char *alts) {
  TU_CHECK(st == LLMK_SUCCESS && plan, "%s: phase 1 status %d ('%s')", label, (int)st,
           llmk_last_error());
  if (st != LLMK_SUCCESS || !plan) return st;
  th_reset_error();
  st = th_run_plan(exec, plan, ws, NULL);
  TU_CHECK(st == expect, "%s: phase 2 status %d, expected %d ('%s')", label, (int)st,
           (int)expect, st ? llmk_last_error() : "");
  if (expect != LLMK_SUCCESS && st != LLMK_SUCCESS)
    TU_CHECK(th_msg_ok(op, alts, NULL),
             "%s: message '%s' should start with '%s:' and name %s", label,
             llmk_last_error(), op, alts ? alts : "the op");
  return st;
}

/* ------------------------------------------------------------------ plans */

llmk_status th_run_plan(th_exec_fn exec, llmk_plan *plan, size_t ws, llmk_context *ctx) {
  void *w = ws ? th_xmalloc(ws) : NULL;
  llmk_status st = exec(w, ws, plan, ctx);
  free(w);
  return st;
}

void th_check_null_plan(th_exec_fn exec, const char *op) {
  TU_CHECK(exec(NULL, 0, NULL, NULL) == LLMK_ERROR_INVALID_PLAN, "%s: NULL plan", op);
  TU_CHECK(llmk_plan_destroy(NULL) == LLMK_SUCCESS, "llmk_plan_destroy(NULL)");
  TU_CHECK(llmk_plan_set_repeatable(NULL) == LLMK_ERROR_INVALID_PLAN,
           "llmk_plan_set_repeatable(NULL)");
}

int th_check_ws_too_small(th_exec_fn exec, llmk_plan *plan, size_t ws,
                          const char *label) {
  if (ws == 0) return 0;
  void *w = th_xmalloc(ws);
  llmk_status st = exec(w, ws - 1, plan, NULL);
  TU_CHECK(st == LLMK_ERROR_WORKSPACE_TOO_SMALL, "%s: workspace %zu of %zu: %d", label,
           ws - 1, ws, (int)st);
  free(w);
  return 1;
}

/* ------------------------------------------------------------------ sweep */

void th_sweep_init(th_sweep *w, const int *threads, int n) {
  memset(w, 0, sizeof *w);
  if (n > TH_SWEEP_MAX) th_die("th_sweep_init: too many contexts");
  w->n = n;
  for (int i = 0; i < n; i++) {
    w->threads[i] = threads[i];
    if (threads[i] == 0) {
      snprintf(w->name[i], sizeof w->name[i], "ctx NULL");
      continue;
    }
    snprintf(w->name[i], sizeof w->name[i], "%d thread%s", threads[i],
             threads[i] == 1 ? "" : "s");
    TU_CHECK(llmk_context_create(threads[i], &w->ctx[i]) == LLMK_SUCCESS && w->ctx[i],
             "context(%d)", threads[i]);
    TU_CHECK(llmk_context_num_threads(w->ctx[i]) == threads[i],
             "context(%d) has %d threads", threads[i],
             llmk_context_num_threads(w->ctx[i]));
  }
}

void th_sweep_free(th_sweep *w) {
  for (int i = 0; i < w->n; i++) llmk_context_destroy(w->ctx[i]);
  memset(w, 0, sizeof *w);
}

void th_out_add(th_out *o, const void *p, size_t size) {
  if (o->n == TH_OUT_MAX) th_die("th_out_add: too many outputs");
  o->p[o->n] = p;
  o->size[o->n] = size;
  o->n++;
}

void th_out_add_buf(th_out *o, const tu_buf *b) {
  th_out_add(o, b->base, b->size + 2 * TU_GUARD);
}

int th_sweep_run(const th_sweep *w, int all_isa, const int *reps, const char *label,
                 th_sweep_fn fn, void *user) {
  const llmk_isa native = llmk_get_native_isa();
  unsigned char *first[TH_OUT_MAX] = {0};
  size_t first_size[TH_OUT_MAX] = {0};
  int nfirst = -1, good = 0;
  char first_name[64] = "", lab[512];
  for (int isa = all_isa ? LLMK_ISA_SCALAR : (int)native; isa <= (int)native; isa++) {
    /* (another architecture's ISA caps to scalar: not a run of its own) */
    if (llmk_set_max_isa((llmk_isa)isa) != (llmk_isa)isa) continue;
    for (int c = 0; c < w->n; c++) {
      if (w->threads[c] && !w->ctx[c]) continue;
      for (int r = 0; r < (reps ? reps[c] : 1); r++) {
        snprintf(lab, sizeof lab, "%s [%s, %s]", label, llmk_isa_name(llmk_get_isa()),
                 w->name[c]);
        th_out out = {0};
        if (!fn(user, w->ctx[c], lab, &out)) continue;
        good++;
        if (nfirst < 0) {
          nfirst = out.n;
          for (int i = 0; i < out.n; i++) {
            first[i] = th_xmalloc(out.size[i]);
            memcpy(first[i], out.p[i], out.size[i]);
            first_size[i] = out.size[i];
          }
          snprintf(first_name, sizeof first_name, "%s, %s", llmk_isa_name(llmk_get_isa()),
                   w->name[c]);
          continue;
        }
        int same = out.n == nfirst;
        for (int i = 0; same && i < out.n; i++)
          same = out.size[i] == first_size[i] &&
                 memcmp(out.p[i], first[i], out.size[i]) == 0;
        TU_CHECK(same, "%s: result differs from the one of %s", lab, first_name);
      }
    }
  }
  llmk_set_max_isa(native);
  for (int i = 0; i < TH_OUT_MAX; i++) free(first[i]);
  return good;
}
