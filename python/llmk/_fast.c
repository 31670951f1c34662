/* SPDX-License-Identifier: Apache-2.0 */
/*
 * llmk._fast: the per-step calls (scatter_pa_kv_cache, ...) on plain CPU torch tensors
 * without ctypes. Descriptors are built here from the tensors' own accessors and the
 * library's two phases are called through the addresses of the ctypes library that
 * llmk._core loaded (this module does not link libllmk: the ctypes library stays the
 * one source). Each function returns True when it made the call and False when it
 * cannot take the arguments (a view(), NumPy, a non-CPU or subclassed tensor, Python
 * scales, HND, ...), in which case nothing was done and the caller takes the ctypes
 * path, so results and errors are those of that path. A failed call raises llmk.Error.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MAX_RANK 8

typedef struct {
  int dtype;
  int32_t rank;
  int64_t shape[MAX_RANK];
  int64_t strides[MAX_RANK];
  void *data;
} tensor_desc; /* struct llmk_tensor (include/llmk/types.h) */

typedef int (*run_fn)(void *, size_t, void *, void *);
typedef int (*plan_destroy_fn)(void *);
typedef const char *(*last_error_fn)(void);
typedef int (*scatter_ws_fn)(const tensor_desc *, const tensor_desc *,
                             const tensor_desc *, const tensor_desc *,
                             const tensor_desc *, const tensor_desc *,
                             const tensor_desc *, int, size_t *, void **);

typedef const tensor_desc *T_;
typedef int (*advance_ws_fn)(T_, T_, T_, T_, T_, T_, T_, T_, int64_t, int64_t, int64_t,
                             size_t *, void **);
typedef int (*gather_ws_fn)(T_, T_, T_, T_, T_, T_, T_, T_, int, size_t *, void **);
typedef int (*topk_ws_fn)(T_, T_, T_, T_, size_t *, void **);
typedef int (*conv_ws_fn)(T_, T_, T_, T_, T_, T_, T_, T_, T_, T_, T_, int64_t, int64_t,
                          int64_t, int64_t, int64_t, int, size_t *, void **);

static struct {
  int bound; /* library addresses taken */
  int torch; /* torch objects cached: 1, not usable: -1, not imported yet: 0 */
  PyObject *core;
  PyObject *error;
  PyTypeObject *tensor_type;
  PyObject *strided;
  PyObject *dtypes[16];
  int codes[16];
  int ndtypes;
  PyObject *get_num_threads;
  /* torch.Tensor's own accessors, called without the attribute lookup: getters of the
   * C getset descriptors, and the method descriptors */
  getter g_dtype, g_layout, g_is_cpu, g_shape;
  void *c_dtype, *c_layout, *c_is_cpu, *c_shape;
  PyObject *m_stride, *m_data_ptr;
  PyObject *s_dtype, *s_layout, *s_is_cpu, *s_shape, *s_stride, *s_data_ptr;
  PyObject *s_default_threads, *s_context_handle, *s_workspace, *s_value, *s_bind;
  PyObject *ctx_key;
  plan_destroy_fn plan_destroy;
  last_error_fn last_error;
  scatter_ws_fn scatter_ws;
  run_fn scatter_run;
  advance_ws_fn advance_ws;
  run_fn advance_run;
  gather_ws_fn gather_ws;
  run_fn gather_run;
  topk_ws_fn topk_ws;
  run_fn topk_run;
  conv_ws_fn conv_ws;
  run_fn conv_run;
} S;

/* ------------------------------------------------------------------ set-up */

static int intern(PyObject **p, const char *s) {
  *p = PyUnicode_InternFromString(s);
  return *p ? 0 : -1;
}

/* bind(dict): the library's entry points, {name: address}, from llmk._core. */
static void *address(PyObject *d, const char *name) {
  PyObject *v = PyDict_GetItemString(d, name);
  if (v == NULL) {
    PyErr_Format(PyExc_KeyError, "llmk._fast: no address for %s", name);
    return NULL;
  }
  void *p = PyLong_AsVoidPtr(v);
  if (p == NULL && !PyErr_Occurred())
    PyErr_Format(PyExc_ValueError, "llmk._fast: %s at NULL", name);
  return p;
}

static PyObject *fast_bind(PyObject *self, PyObject *d) {
  (void)self;
  if (!PyDict_Check(d)) {
    PyErr_SetString(PyExc_TypeError, "llmk._fast.bind: a dict of addresses");
    return NULL;
  }
  /* object to function pointers: through memcpy, which ISO C allows */
  struct {
    const char *name;
    void *dst;
  } fns[] = {{"llmk_plan_destroy", &S.plan_destroy},
             {"llmk_last_error", &S.last_error},
             {"llmk_scatter_pa_kv_cache_get_workspace_size", &S.scatter_ws},
             {"llmk_scatter_pa_kv_cache", &S.scatter_run},
             {"llmk_advance_step_get_workspace_size", &S.advance_ws},
             {"llmk_advance_step", &S.advance_run},
             {"llmk_gather_pa_kv_cache_get_workspace_size", &S.gather_ws},
             {"llmk_gather_pa_kv_cache", &S.gather_run},
             {"llmk_apply_top_k_top_p_get_workspace_size", &S.topk_ws},
             {"llmk_apply_top_k_top_p", &S.topk_run},
             {"llmk_fused_causal_conv1d_get_workspace_size", &S.conv_ws},
             {"llmk_fused_causal_conv1d", &S.conv_run}};
  void *got[sizeof fns / sizeof fns[0]];
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
    if ((got[i] = address(d, fns[i].name)) == NULL) return NULL;
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
    memcpy(fns[i].dst, &got[i], sizeof got[i]);
  S.bound = 1;
  Py_RETURN_NONE;
}

/* The library, through llmk._core._bind_fast() on first use (importing llmk does not
 * load it). */
static int ensure_bound(void) {
  if (S.bound) return 0;
  PyObject *r = PyObject_CallMethodNoArgs(S.core, S.s_bind);
  if (r == NULL) return -1;
  Py_DECREF(r);
  if (!S.bound) {
    PyErr_SetString(PyExc_RuntimeError, "llmk._fast: the library was not bound");
    return -1;
  }
  return 0;
}

static void add_dtype(PyObject *torch, const char *name, int code) {
  PyObject *d = PyObject_GetAttrString(torch, name);
  if (d == NULL) {
    PyErr_Clear(); /* fp8 dtypes: only in newer torch */
    return;
  }
  S.dtypes[S.ndtypes] = d;
  S.codes[S.ndtypes++] = code;
}

/* torch's objects, once torch is imported (by the caller: a torch tensor means it is).
 * Returns 1 when ready, 0 when torch is not imported, -1 on error. */
static int ensure_torch(void) {
  if (S.torch) return S.torch;
  PyObject *name = PyUnicode_FromString("torch");
  if (name == NULL) return -1;
  PyObject *torch = PyImport_GetModule(name);
  Py_DECREF(name);
  if (torch == NULL) return PyErr_Occurred() ? -1 : 0;
  PyObject *tt = PyObject_GetAttrString(torch, "Tensor");
  PyObject *st = PyObject_GetAttrString(torch, "strided");
  PyObject *gn = PyObject_GetAttrString(torch, "get_num_threads");
  if (tt == NULL || st == NULL || gn == NULL || !PyType_Check(tt)) {
    Py_XDECREF(tt);
    Py_XDECREF(st);
    Py_XDECREF(gn);
    Py_DECREF(torch);
    PyErr_Clear();
    return 0;
  }
  struct {
    PyObject *name;
    getter *g;
    void **c;
  } gs[] = {{S.s_dtype, &S.g_dtype, &S.c_dtype},
            {S.s_layout, &S.g_layout, &S.c_layout},
            {S.s_is_cpu, &S.g_is_cpu, &S.c_is_cpu},
            {S.s_shape, &S.g_shape, &S.c_shape}};
  int ok = 1;
  for (size_t i = 0; i < sizeof gs / sizeof gs[0]; i++) {
    PyObject *d = PyObject_GetAttr(tt, gs[i].name); /* on the type: the descriptor */
    if (d != NULL && Py_IS_TYPE(d, &PyGetSetDescr_Type) &&
        ((PyGetSetDescrObject *)d)->d_getset->get != NULL) {
      *gs[i].g = ((PyGetSetDescrObject *)d)->d_getset->get;
      *gs[i].c = ((PyGetSetDescrObject *)d)->d_getset->closure;
    } else {
      ok = 0; /* not torch's C getters (another torch): no fast path */
    }
    Py_XDECREF(d); /* the type keeps its descriptors */
  }
  PyObject *ms = PyObject_GetAttr(tt, S.s_stride),
           *mp = PyObject_GetAttr(tt, S.s_data_ptr);
  if (ms == NULL || mp == NULL || !Py_IS_TYPE(ms, &PyMethodDescr_Type) ||
      !Py_IS_TYPE(mp, &PyMethodDescr_Type))
    ok = 0;
  if (!ok) {
    Py_XDECREF(ms);
    Py_XDECREF(mp);
    Py_DECREF(tt);
    Py_DECREF(st);
    Py_DECREF(gn);
    Py_DECREF(torch);
    PyErr_Clear();
    S.torch = -1;
    return 0;
  }
  S.m_stride = ms;
  S.m_data_ptr = mp;
  /* llmk_dtype values: f32 1, f16 2, bf16 3, i8 4, u8 5, i32 6, i64 7, fp8 8 / 9 */
  S.ndtypes = 0;
  add_dtype(torch, "float32", 1);
  add_dtype(torch, "float16", 2);
  add_dtype(torch, "bfloat16", 3);
  add_dtype(torch, "int8", 4);
  add_dtype(torch, "uint8", 5);
  add_dtype(torch, "int32", 6);
  add_dtype(torch, "int64", 7);
  add_dtype(torch, "float8_e4m3fn", 8);
  add_dtype(torch, "float8_e5m2", 9);
  Py_DECREF(torch);
  S.tensor_type = (PyTypeObject *)tt;
  S.strided = st;
  S.get_num_threads = gn;
  S.torch = 1;
  return 1;
}

/* ------------------------------------------------------------------ tensors */

/* Reads a sequence of Python ints (a tuple or torch.Size) into v[]. -1 on error. */
static int read_ints(PyObject *t, int64_t *v, int *n) {
  if (!PyTuple_Check(t)) return 1;
  Py_ssize_t k = PyTuple_GET_SIZE(t);
  if (k > MAX_RANK) return 1;
  for (Py_ssize_t i = 0; i < k; i++) {
    PyObject *x = PyTuple_GET_ITEM(t, i);
    if (!PyLong_Check(x)) return 1;
    long long e = PyLong_AsLongLong(x);
    if (e == -1 && PyErr_Occurred()) return -1;
    v[i] = (int64_t)e;
  }
  *n = (int)k;
  return 0;
}

/* Fills *t from a plain CPU strided torch tensor of an llmk dtype. Returns 0 (filled),
 * 1 (not one this path takes: nothing raised) or -1 (a Python error is set). */
static int describe(PyObject *o, tensor_desc *t) {
  if (Py_TYPE(o) != S.tensor_type) return 1;
  PyObject *dt = S.g_dtype(o, S.c_dtype);
  if (dt == NULL) return -1;
  int code = 0;
  for (int i = 0; i < S.ndtypes; i++)
    if (S.dtypes[i] == dt) {
      code = S.codes[i];
      break;
    }
  Py_DECREF(dt);
  if (code == 0) return 1;
  PyObject *lay = S.g_layout(o, S.c_layout);
  if (lay == NULL) return -1;
  Py_DECREF(lay); /* torch.strided stays alive in torch's module */
  if (lay != S.strided) return 1;
  PyObject *cpu = S.g_is_cpu(o, S.c_is_cpu);
  if (cpu == NULL) return -1;
  Py_DECREF(cpu);
  if (cpu != Py_True) return 1;
  PyObject *shape = S.g_shape(o, S.c_shape);
  if (shape == NULL) return -1;
  int rank = 0, rs = 0;
  int r = read_ints(shape, t->shape, &rank);
  Py_DECREF(shape);
  if (r) return r;
  PyObject *st = PyObject_Vectorcall(S.m_stride, &o, 1, NULL);
  if (st == NULL) return -1;
  r = read_ints(st, t->strides, &rs);
  Py_DECREF(st);
  if (r) return r;
  if (rs != rank) return 1;
  PyObject *p = PyObject_Vectorcall(S.m_data_ptr, &o, 1, NULL);
  if (p == NULL) return -1;
  void *data = PyLong_AsVoidPtr(p);
  Py_DECREF(p);
  if (data == NULL && PyErr_Occurred()) return -1;
  t->dtype = code;
  t->rank = rank;
  for (int i = rank; i < MAX_RANK; i++) t->shape[i] = t->strides[i] = 0;
  t->data = data;
  return 0;
}

/* An optional tensor argument: None gives NULL. */
static int describe_opt(PyObject *o, tensor_desc *t, const tensor_desc **p) {
  if (o == Py_None) {
    *p = NULL;
    return 0;
  }
  *p = t;
  return describe(o, t);
}

/* ------------------------------------------------------------------ contexts, errors */

/* The llmk_context of ctx as llmk._core.context_handle(ctx) gives it: thread counts
 * (ctx None: set_num_threads()'s, else torch.get_num_threads()) map to a per-thread
 * cache of the handles llmk._core keeps alive. Returns 0 or -1. */
static int context_of(PyObject *ctx, void **h) {
  long n;
  *h = NULL;
  if (ctx == Py_None) {
    PyObject *d = PyObject_GetAttr(S.core, S.s_default_threads);
    if (d == NULL) return -1;
    if (d == Py_None) {
      Py_DECREF(d);
      PyObject *g = PyObject_CallNoArgs(S.get_num_threads);
      n = g ? PyLong_AsLong(g) : -1;
      Py_XDECREF(g);
      if (n == -1 && PyErr_Occurred()) PyErr_Clear();
      if (n < 1) n = 1; /* default_num_threads(): max(1, ...), 1 when torch fails */
    } else {
      int over = 0;
      n = PyLong_CheckExact(d) ? PyLong_AsLongAndOverflow(d, &over) : 0;
      Py_DECREF(d);
      if (n == -1 && PyErr_Occurred()) return -1;
      if (n == 0 || over) goto slow; /* leave odd values to context_handle() */
    }
  } else if (PyLong_CheckExact(ctx)) {
    int over = 0;
    n = PyLong_AsLongAndOverflow(ctx, &over);
    if (n == -1 && PyErr_Occurred()) return -1;
    if (over) goto slow;
  } else {
    goto slow;
  }
  if (n == 1) return 0;
  PyObject *td = PyThreadState_GetDict();
  PyObject *cache = td ? PyDict_GetItemWithError(td, S.ctx_key) : NULL;
  if (cache == NULL && PyErr_Occurred()) return -1;
  if (td != NULL && cache == NULL) {
    cache = PyDict_New();
    if (cache == NULL || PyDict_SetItem(td, S.ctx_key, cache) < 0) {
      Py_XDECREF(cache);
      return -1;
    }
    Py_DECREF(cache); /* the thread's dict holds it */
  }
  PyObject *key = PyLong_FromLong(n);
  if (key == NULL) return -1;
  PyObject *v = cache ? PyDict_GetItemWithError(cache, key) : NULL;
  if (v != NULL) {
    Py_DECREF(key);
    *h = PyLong_AsVoidPtr(v);
    return PyErr_Occurred() ? -1 : 0;
  }
  if (PyErr_Occurred()) {
    Py_DECREF(key);
    return -1;
  }
  PyObject *hv = PyObject_CallMethodOneArg(S.core, S.s_context_handle, key);
  PyObject *val = NULL;
  if (hv != NULL) {
    if (hv == Py_None) {
      Py_INCREF(hv);
      val = hv;
    } else {
      val = PyObject_GetAttr(hv, S.s_value);
    }
  }
  Py_XDECREF(hv);
  if (val == NULL) {
    Py_DECREF(key);
    return -1;
  }
  if (val == Py_None) {
    Py_DECREF(val);
    val = PyLong_FromLong(0);
    if (val == NULL) {
      Py_DECREF(key);
      return -1;
    }
  }
  /* the Context lives in llmk._core's per-thread table as long as this thread does */
  int bad = cache && PyDict_SetItem(cache, key, val) < 0;
  Py_DECREF(key);
  *h = PyLong_AsVoidPtr(val);
  Py_DECREF(val);
  return bad || PyErr_Occurred() ? -1 : 0;
slow:;
  PyObject *r = PyObject_CallMethodOneArg(S.core, S.s_context_handle, ctx);
  if (r == NULL) return -1;
  if (r != Py_None) {
    PyObject *a = PyObject_GetAttr(r, S.s_value);
    Py_DECREF(r);
    if (a == NULL) return -1;
    *h = a == Py_None ? NULL : PyLong_AsVoidPtr(a);
    Py_DECREF(a);
    return PyErr_Occurred() ? -1 : 0;
  }
  Py_DECREF(r);
  return 0;
}

/* llmk.Error(status, llmk_last_error()), as llmk._core._check raises it. */
static void raise_error(int st) {
  const char *m = S.last_error();
  PyObject *msg =
      PyUnicode_DecodeUTF8(m ? m : "", m ? (Py_ssize_t)strlen(m) : 0, "replace");
  if (msg == NULL) return;
  PyObject *e = PyObject_CallFunction(S.error, "iO", st, msg);
  Py_DECREF(msg);
  if (e == NULL) return;
  PyErr_SetObject((PyObject *)Py_TYPE(e), e);
  Py_DECREF(e);
}

/* Phase 2 after a successful phase 1: the workspace (llmk._core.workspace, per Python
 * thread) and the run, which consumes the plan whatever it returns. */
static PyObject *finish(int st, size_t ws, void *plan, run_fn runner, PyObject *ctx) {
  if (st != 0) {
    raise_error(st);
    return NULL;
  }
  void *h = NULL, *buf = NULL;
  if (context_of(ctx, &h) < 0) {
    S.plan_destroy(plan);
    return NULL;
  }
  if (ws > 0) {
    PyObject *a = PyLong_FromSize_t(ws);
    PyObject *b = a ? PyObject_CallMethodOneArg(S.core, S.s_workspace, a) : NULL;
    Py_XDECREF(a);
    if (b != NULL) {
      buf = b == Py_None ? NULL : PyLong_AsVoidPtr(b);
      Py_DECREF(b);
    }
    if (PyErr_Occurred()) {
      S.plan_destroy(plan);
      return NULL;
    }
  }
  /* as ctypes does: other Python threads run meanwhile (the caller's frame keeps the
   * tensors alive) */
  PyThreadState *ts = PyEval_SaveThread();
  st = runner(buf, ws, plan, h);
  PyEval_RestoreThread(ts);
  if (st != 0) {
    raise_error(st);
    return NULL;
  }
  Py_RETURN_TRUE;
}

/* The layout argument: an int, or a name of the 'blocks' / 'xsplit' / 'nz' layouts as
 * written in the docs; anything else (HND, other spellings, errors) is left to _ops. */
static int layout_of(PyObject *o, int *v) {
  if (PyLong_CheckExact(o)) {
    int over = 0;
    long x = PyLong_AsLongAndOverflow(o, &over);
    if (over || x < INT32_MIN || x > INT32_MAX) {
      PyErr_Clear();
      return 1;
    }
    *v = (int)x;
    return 0;
  }
  if (!PyUnicode_CheckExact(o)) return 1;
  const char *s = PyUnicode_AsUTF8(o);
  if (s == NULL) {
    PyErr_Clear();
    return 1;
  }
  if (!strcmp(s, "blocks") || !strcmp(s, "nhd"))
    *v = 0;
  else if (!strcmp(s, "xsplit") || !strcmp(s, "x-split"))
    *v = 1;
  else if (!strcmp(s, "nz"))
    *v = 2;
  else
    return 1;
  return 0;
}

/* ------------------------------------------------------------------ ops */

#define TAKE(call)               \
  do {                           \
    int r_ = (call);             \
    if (r_ < 0) return NULL;     \
    if (r_ > 0) Py_RETURN_FALSE; \
  } while (0)

/* scatter_pa_kv_cache(key, value, key_cache, value_cache, slot_mapping, k_scale,
 * v_scale, layout, ctx) */
static PyObject *fast_scatter(PyObject *self, PyObject *const *a, Py_ssize_t n) {
  (void)self;
  if (n != 9) {
    PyErr_SetString(PyExc_TypeError, "llmk._fast.scatter_pa_kv_cache: 9 arguments");
    return NULL;
  }
  TAKE(ensure_torch() == 1 ? 0 : 1); /* a torch tensor: torch is imported */
  tensor_desc t[7];
  const tensor_desc *p[7];
  int layout;
  TAKE(layout_of(a[7], &layout));
  TAKE(describe(a[0], &t[0]));
  p[0] = &t[0];
  TAKE(describe_opt(a[1], &t[1], &p[1]));
  TAKE(describe(a[2], &t[2]));
  p[2] = &t[2];
  TAKE(describe_opt(a[3], &t[3], &p[3]));
  TAKE(describe(a[4], &t[4]));
  p[4] = &t[4];
  TAKE(describe_opt(a[5], &t[5], &p[5]));
  TAKE(describe_opt(a[6], &t[6], &p[6]));
  if (ensure_bound() < 0) return NULL;
  size_t ws = 0;
  void *plan = NULL;
  int st = S.scatter_ws(p[0], p[1], p[2], p[3], p[4], p[5], p[6], layout, &ws, &plan);
  return finish(st, ws, plan, S.scatter_run, a[8]);
}

/* n tensor arguments; kinds[i] 'T' (a tensor) or 'o' (a tensor or None). */
static int describe_all(PyObject *const *a, const char *kinds, tensor_desc *t,
                        const tensor_desc **p) {
  for (int i = 0; kinds[i]; i++) {
    int r = kinds[i] == 'o' ? describe_opt(a[i], &t[i], &p[i]) : describe(a[i], &t[i]);
    if (kinds[i] != 'o') p[i] = &t[i];
    if (r) return r;
  }
  return 0;
}

/* An exact Python int within [lo, hi] (bools, NumPy ints, ...: the ctypes path). */
static int int_arg(PyObject *o, int64_t lo, int64_t hi, int64_t *v) {
  if (!PyLong_CheckExact(o)) return 1;
  int over = 0;
  long long x = PyLong_AsLongLongAndOverflow(o, &over);
  if (x == -1 && PyErr_Occurred()) return -1;
  if (over || x < lo || x > hi) return 1;
  *v = (int64_t)x;
  return 0;
}

static int nargs(Py_ssize_t n, Py_ssize_t want, const char *name) {
  if (n == want) return 0;
  PyErr_Format(PyExc_TypeError, "llmk._fast.%s: %d arguments", name, (int)want);
  return -1;
}

/* advance_step(8 tensors (spec_token, accepted_num optional), num_seqs, num_queries,
 * block_size, ctx); num_seqs / num_queries None: as llmk._ops.advance_step defaults them
 */
static PyObject *fast_advance(PyObject *self, PyObject *const *a, Py_ssize_t n) {
  (void)self;
  if (nargs(n, 12, "advance_step")) return NULL;
  TAKE(ensure_torch() == 1 ? 0 : 1);
  tensor_desc t[8];
  const tensor_desc *p[8];
  int64_t ns = 0, nq = 0, bs = 0;
  TAKE(a[10] == Py_None ? 1 : int_arg(a[10], INT64_MIN, INT64_MAX, &bs));
  TAKE(describe_all(a, "TTTTTToo", t, p));
  if (a[8] == Py_None) {
    TAKE(t[5].rank < 1 ? 1 : 0);
    ns = t[5].shape[0];
  } else {
    TAKE(int_arg(a[8], INT64_MIN, INT64_MAX, &ns));
  }
  if (a[9] == Py_None) {
    if (p[6] != NULL) {
      nq = ns;
    } else {
      TAKE(t[1].rank < 1 ? 1 : 0);
      nq = t[1].shape[0];
    }
  } else {
    TAKE(int_arg(a[9], INT64_MIN, INT64_MAX, &nq));
  }
  if (ensure_bound() < 0) return NULL;
  size_t ws = 0;
  void *plan = NULL;
  int st = S.advance_ws(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], ns, nq, bs, &ws,
                        &plan);
  return finish(st, ws, plan, S.advance_run, a[11]);
}

/* gather_pa_kv_cache(key_cache, value_cache, block_tables, seq_lens, k_scale, v_scale,
 * key_out, value_out, layout, ctx): the outputs given */
static PyObject *fast_gather(PyObject *self, PyObject *const *a, Py_ssize_t n) {
  (void)self;
  if (nargs(n, 10, "gather_pa_kv_cache")) return NULL;
  TAKE(ensure_torch() == 1 ? 0 : 1);
  tensor_desc t[8];
  const tensor_desc *p[8];
  int layout;
  TAKE(layout_of(a[8], &layout));
  TAKE(describe_all(a, "ToTTooTo", t, p));
  if (ensure_bound() < 0) return NULL;
  size_t ws = 0;
  void *plan = NULL;
  int st =
      S.gather_ws(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], layout, &ws, &plan);
  return finish(st, ws, plan, S.gather_run, a[9]);
}

/* apply_top_k_top_p(logits, p, k, out, ctx): p and k tensors or None, out given */
static PyObject *fast_topk(PyObject *self, PyObject *const *a, Py_ssize_t n) {
  (void)self;
  if (nargs(n, 5, "apply_top_k_top_p")) return NULL;
  TAKE(ensure_torch() == 1 ? 0 : 1);
  tensor_desc t[4];
  const tensor_desc *p[4];
  TAKE(describe_all(a, "TooT", t, p));
  if (ensure_bound() < 0) return NULL;
  size_t ws = 0;
  void *plan = NULL;
  int st = S.topk_ws(p[0], p[1], p[2], p[3], &ws, &plan);
  return finish(st, ws, plan, S.topk_run, a[4]);
}

/* fused_causal_conv1d(x, weight, conv_states, 7 index tensors, bias, pad_slot_id,
 * max_query_len, residual_connection, block_size, conv_mode, activation, ctx): the
 * first entry point (no v2 option); activation an int (the Python layer maps names) */
static PyObject *fast_conv(PyObject *self, PyObject *const *a, Py_ssize_t n) {
  (void)self;
  if (nargs(n, 18, "fused_causal_conv1d")) return NULL;
  TAKE(ensure_torch() == 1 ? 0 : 1);
  tensor_desc t[11];
  const tensor_desc *p[11];
  int64_t v[6];
  for (int i = 0; i < 5; i++) TAKE(int_arg(a[11 + i], INT64_MIN, INT64_MAX, &v[i]));
  TAKE(int_arg(a[16], INT32_MIN, INT32_MAX, &v[5]));
  TAKE(describe_all(a, "TTToooooooo", t, p));
  if (ensure_bound() < 0) return NULL;
  size_t ws = 0;
  void *plan = NULL;
  int st = S.conv_ws(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10],
                     v[0], v[1], v[2], v[3], v[4], (int)v[5], &ws, &plan);
  return finish(st, ws, plan, S.conv_run, a[17]);
}

#define FASTCALL(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL

static PyMethodDef methods[] = {
    {"bind", fast_bind, METH_O, "bind(addresses): the library's entry points"},
    {"scatter_pa_kv_cache", (PyCFunction)(void (*)(void))fast_scatter, METH_FASTCALL,
     "scatter_pa_kv_cache(key, value, key_cache, value_cache, slot_mapping, k_scale, "
     "v_scale, layout, ctx) -> True (done) or False (take the ctypes path)"},
    {"advance_step", FASTCALL(fast_advance),
     "advance_step(input_tokens, sampled_token_ids, input_positions, seq_lens, "
     "slot_mapping, block_tables, spec_token, accepted_num, num_seqs, num_queries, "
     "block_size, ctx) -> True or False"},
    {"gather_pa_kv_cache", FASTCALL(fast_gather),
     "gather_pa_kv_cache(key_cache, value_cache, block_tables, seq_lens, k_scale, "
     "v_scale, "
     "key_out, value_out, layout, ctx) -> True or False"},
    {"apply_top_k_top_p", FASTCALL(fast_topk),
     "apply_top_k_top_p(logits, p, k, out, ctx) -> True or False"},
    {"fused_causal_conv1d", FASTCALL(fast_conv),
     "fused_causal_conv1d(x, weight, conv_states, query_start_loc, cache_indices, "
     "num_accepted_tokens, num_computed_tokens, block_idx_first_scheduled_token, "
     "block_idx_last_scheduled_token, initial_state_idx, bias, pad_slot_id, "
     "max_query_len, "
     "residual_connection, block_size, conv_mode, activation, ctx) -> True or False"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT,
                                    "llmk._fast",
                                    "llmk's per-step calls without ctypes",
                                    -1,
                                    methods,
                                    NULL,
                                    NULL,
                                    NULL,
                                    NULL};

PyMODINIT_FUNC PyInit__fast(void);
PyMODINIT_FUNC PyInit__fast(void) {
  PyObject *m = PyModule_Create(&module);
  if (m == NULL) return NULL;
  if (intern(&S.s_dtype, "dtype") || intern(&S.s_layout, "layout") ||
      intern(&S.s_is_cpu, "is_cpu") || intern(&S.s_shape, "shape") ||
      intern(&S.s_stride, "stride") || intern(&S.s_data_ptr, "data_ptr") ||
      intern(&S.s_default_threads, "_default_threads") ||
      intern(&S.s_context_handle, "context_handle") ||
      intern(&S.s_workspace, "workspace") || intern(&S.s_value, "value") ||
      intern(&S.s_bind, "_bind_fast") || intern(&S.ctx_key, "llmk._fast.contexts"))
    goto fail;
  S.core = PyImport_ImportModule("llmk._core");
  if (S.core == NULL) goto fail;
  S.error = PyObject_GetAttrString(S.core, "Error");
  if (S.error == NULL) goto fail;
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}
