/* SPDX-License-Identifier: Apache-2.0 */
/* Allocation-failure test: every allocation the library makes, failed in turn.
 *
 * The program is linked with -Wl,--wrap for malloc, calloc, realloc, aligned_alloc,
 * posix_memalign, free and C++'s nothrow new / delete (tests/alloc/CMakeLists.txt), so
 * only calls from the objects linked into it (llmk_static, the aclnn sources, this
 * file) come here; libc, libgomp, libpthread and libstdc++ allocate unobserved.
 * Allocations are counted only while the test is "armed" (around the call under test).
 *
 * For each scenario (a call sequence that cleans up after itself, failure or not):
 * run it once counting allocations (n); then for k = 1..n run it again with
 * allocation k failing. Every run must return success (the allocation was optional)
 * or the documented out-of-memory code (native: LLMK_ERROR_OUT_OF_MEMORY; aclnn:
 * ACL_ERROR_BAD_ALLOC for the runtime, ACLNN_ERR_INNER / ACLNN_ERR_INNER_CREATE_EXECUTOR
 * for executors, a NULL handle for aclCreate*), and leave as many live allocations as
 * before (no leak). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llmk/llmk.h"
#include "stress_ops.h"
#ifdef LLMK_ALLOC_ACLNN
#include "acl/acl.h"
#include "aclnnop/aclnn_advance_step.h"
#include "aclnnop/aclnn_advance_step_v2.h"
#include "aclnnop/aclnn_apply_top_k_top_p.h"
#include "aclnnop/aclnn_scatter_pa_kv_cache.h"
#endif

/* ------------------------------------------------------------ the interposed allocator
 */

void *__real_malloc(size_t n);
void *__real_calloc(size_t m, size_t n);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
int __real_posix_memalign(void **p, size_t a, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t m, size_t n);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t a, size_t n);
int __wrap_posix_memalign(void **p, size_t a, size_t n);
void __wrap_free(void *p);
static atomic_bool armed;
static atomic_long counted; /* allocations seen while armed */
static long fail_at;        /* 1-based index of the allocation to fail; 0: none */
static atomic_long failed;  /* allocations failed on purpose */

/* Live blocks from the wrapped allocators: an open-addressing set (no allocation). */
#define LIVE_CAP (1 << 16)
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static void *live_set[LIVE_CAP];
static const char tomb;
static long live_count;

static size_t slot_of(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
  return (size_t)(x >> 48) & (LIVE_CAP - 1);
}
static void live_add(void *p) {
  if (!p) return;
  pthread_mutex_lock(&live_lock);
  size_t i = slot_of(p);
  while (live_set[i] && live_set[i] != (void *)&tomb) i = (i + 1) & (LIVE_CAP - 1);
  live_set[i] = p;
  live_count++;
  pthread_mutex_unlock(&live_lock);
}
static void live_remove(void *p) {
  if (!p) return;
  pthread_mutex_lock(&live_lock);
  for (size_t i = slot_of(p); live_set[i]; i = (i + 1) & (LIVE_CAP - 1))
    if (live_set[i] == p) {
      live_set[i] = (void *)&tomb;
      live_count--;
      break;
    }
  pthread_mutex_unlock(&live_lock);
}
static long live_now(void) {
  pthread_mutex_lock(&live_lock);
  long n = live_count;
  pthread_mutex_unlock(&live_lock);
  return n;
}

/* true: this allocation fails */
static bool next_fails(void) {
  if (!atomic_load(&armed)) return false;
  long k = atomic_fetch_add(&counted, 1) + 1;
  if (k != fail_at) return false;
  atomic_fetch_add(&failed, 1);
  return true;
}

void *__wrap_malloc(size_t n) {
  if (next_fails()) return NULL;
  void *p = __real_malloc(n);
  live_add(p);
  return p;
}
void *__wrap_calloc(size_t m, size_t n) {
  if (next_fails()) return NULL;
  void *p = __real_calloc(m, n);
  live_add(p);
  return p;
}
void *__wrap_realloc(void *p, size_t n) {
  if (next_fails()) return NULL;
  void *q = __real_realloc(p, n);
  if (q || n == 0) live_remove(p);
  live_add(q);
  return q;
}
void *__wrap_aligned_alloc(size_t a, size_t n) {
  if (next_fails()) return NULL;
  void *p = __real_aligned_alloc(a, n);
  live_add(p);
  return p;
}
int __wrap_posix_memalign(void **p, size_t a, size_t n) {
  if (next_fails()) return 12; /* ENOMEM */
  int r = __real_posix_memalign(p, a, n);
  if (!r) live_add(*p);
  return r;
}
void __wrap_free(void *p) {
  live_remove(p);
  __real_free(p);
}
#ifdef LLMK_ALLOC_ACLNN
/* C++ nothrow new and delete (meta.cpp) */
void *__real__ZnwmRKSt9nothrow_t(size_t n, const void *nt);
void *__real__ZnamRKSt9nothrow_t(size_t n, const void *nt);
void __real__ZdlPv(void *p);
void __real__ZdaPv(void *p);
void __real__ZdlPvm(void *p, size_t n);
void __real__ZdaPvm(void *p, size_t n);

void *__wrap__ZnwmRKSt9nothrow_t(size_t n, const void *nt);
void *__wrap__ZnamRKSt9nothrow_t(size_t n, const void *nt);
void __wrap__ZdlPv(void *p);
void __wrap__ZdaPv(void *p);
void __wrap__ZdlPvm(void *p, size_t n);
void __wrap__ZdaPvm(void *p, size_t n);

void *__wrap__ZnwmRKSt9nothrow_t(size_t n, const void *nt) {
  if (next_fails()) return NULL;
  void *p = __real__ZnwmRKSt9nothrow_t(n, nt);
  live_add(p);
  return p;
}
void *__wrap__ZnamRKSt9nothrow_t(size_t n, const void *nt) {
  if (next_fails()) return NULL;
  void *p = __real__ZnamRKSt9nothrow_t(n, nt);
  live_add(p);
  return p;
}
void __wrap__ZdlPv(void *p) {
  live_remove(p);
  __real__ZdlPv(p);
}
void __wrap__ZdaPv(void *p) {
  live_remove(p);
  __real__ZdaPv(p);
}
void __wrap__ZdlPvm(void *p, size_t n) {
  live_remove(p);
  __real__ZdlPvm(p, n);
}
void __wrap__ZdaPvm(void *p, size_t n) {
  live_remove(p);
  __real__ZdaPvm(p, n);
}
#endif

/* ------------------------------------------------------------------- the driver */

static int failures;
#define FAIL(...)                                        \
  do {                                                   \
    fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__);                        \
    fprintf(stderr, "\n");                               \
    failures++;                                          \
  } while (0)

typedef int (*scenario_fn)(const void *arg);
static const int native_oom[] = {LLMK_ERROR_OUT_OF_MEMORY, 0};

/* the message of the last failure on this thread: native, or aclnn's */
static const char *last_message(bool native) {
#ifdef LLMK_ALLOC_ACLNN
  const char *m = native ? NULL : aclGetRecentErrMsg();
  if (m && *m) return m;
#else
  (void)native;
#endif
  return llmk_last_error();
}

/* A scenario returns 0 on success, else its status; OOM codes lists the acceptable
 * failure codes (0-terminated). */
static void check(const char *name, scenario_fn fn, const void *arg, const int *oom) {
  int rc = fn(arg); /* warm-up: lazy state (ISA detection, registries) settles */
  if (rc != 0) {
    FAIL("%s: fails without an allocation failure: %d (%s)", name, rc,
         last_message(oom == native_oom));
    return;
  }
  long live0 = live_now();
  fail_at = 0;
  atomic_store(&counted, 0);
  atomic_store(&armed, true);
  rc = fn(arg);
  atomic_store(&armed, false);
  long n = atomic_load(&counted);
  if (rc != 0) FAIL("%s: counting run: %d", name, rc);
  if (live_now() != live0)
    FAIL("%s: counting run leaks %ld blocks", name, live_now() - live0);
  int oom_runs = 0, optional = 0;
  for (long k = 1; k <= n; k++) {
    fail_at = k;
    atomic_store(&counted, 0);
    atomic_store(&failed, 0);
    atomic_store(&armed, true);
    rc = fn(arg);
    atomic_store(&armed, false);
    fail_at = 0;
    bool ok = rc == 0;
    for (const int *c = oom; *c && !ok; c++) ok = rc == *c;
    if (!ok)
      FAIL("%s: allocation %ld of %ld failed: status %d, not an out-of-memory code (%s)",
           name, k, n, rc, last_message(oom == native_oom));
    if (rc == 0)
      optional++;
    else
      oom_runs++;
    long leak = live_now() - live0;
    if (leak) {
      FAIL("%s: allocation %ld of %ld failed: %ld blocks leaked", name, k, n, leak);
      live0 = live_now(); /* report each leak once */
    }
  }
  printf("%-34s %3ld allocations: %3d out of memory, %3d optional\n", name, n, oom_runs,
         optional);
}

/* native scenarios */

static int sc_context(const void *arg) {
  llmk_context *c;
  llmk_status st = llmk_context_create(*(const int *)arg, &c);
  if (st) return st;
  llmk_context_destroy(c);
  return 0;
}

typedef struct op_arg {
  int op;
  int mode; /* 0: plan + run; 1: repeatable, two runs, destroy; 2: plan, destroy;
               3: a 2-thread context made and used for the run */
} op_arg;
static bufs *the_bufs;

static int sc_op(const void *varg) {
  const op_arg *a = varg;
  size_t ws;
  llmk_plan *plan;
  llmk_context *ctx = NULL;
  if (a->mode == 3) {
    llmk_status st = llmk_context_create(2, &ctx);
    if (st) return st;
  }
  llmk_status st = so_plan(the_bufs, a->op, &ws, &plan);
  if (st) {
    llmk_context_destroy(ctx);
    return st;
  }
  if (plan == NULL) return LLMK_ERROR_INTERNAL;
  void *w = __real_malloc(ws ? ws : 1); /* the caller's workspace: never failed */
  if (a->mode == 2) {
    st = llmk_plan_destroy(plan);
  } else if (a->mode == 1) {
    st = llmk_plan_set_repeatable(plan);
    for (int r = 0; r < 2 && !st; r++) {
      so_reset(the_bufs, a->op);
      st = so_run(a->op, w, ws, plan, ctx);
    }
    llmk_status st2 = llmk_plan_destroy(plan);
    if (!st) st = st2;
  } else {
    so_reset(the_bufs, a->op);
    st = so_run(a->op, w, ws, plan, ctx);
  }
  __real_free(w);
  llmk_context_destroy(ctx);
  return st;
}

#ifdef LLMK_ALLOC_ACLNN
enum { NULL_HANDLE = -1 };
static const int rt_oom[] = {ACL_ERROR_BAD_ALLOC, 0};
static const int aclnn_oom[] = {ACL_ERROR_BAD_ALLOC, ACLNN_ERR_INNER,
                                ACLNN_ERR_INNER_CREATE_EXECUTOR, NULL_HANDLE, 0};

static int sc_acl_init(const void *arg) {
  (void)arg;
  int st = aclInit(NULL);
  if (st) return st;
  return aclFinalize();
}

static int sc_acl_malloc(const void *arg) {
  enum { N = 70 }; /* past the 64 the block table starts with */
  void *p[N] = {0};
  int st = 0, n = 0;
  bool host = *(const int *)arg;
  for (; n < N && !st; n++)
    st = host ? aclrtMallocHost(&p[n], 100 + (size_t)n)
              : aclrtMalloc(&p[n], 100 + (size_t)n, ACL_MEM_MALLOC_HUGE_FIRST);
  for (int i = 0; i < N; i++)
    if (p[i]) {
      int e = host ? aclrtFreeHost(p[i]) : aclrtFree(p[i]);
      if (e && !st) st = e;
    }
  return st;
}

static int sc_acl_handles(const void *arg) {
  (void)arg;
  aclrtContext c = NULL;
  aclrtStream s = NULL;
  aclrtEvent e = NULL;
  int st = aclrtCreateContext(&c, 0);
  if (!st) st = aclrtCreateStream(&s);
  if (!st) st = aclrtCreateEvent(&e);
  if (e) aclrtDestroyEvent(e);
  if (s) aclrtDestroyStream(s);
  if (c) aclrtDestroyContext(c);
  return st;
}

static int sc_acl_tensors(const void *arg) {
  (void)arg;
  static float data[12];
  int64_t dims[2] = {3, 4}, strides[2] = {4, 1}, vals[3] = {1, 2, 3};
  aclTensor *t =
      aclCreateTensor(dims, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, dims, 2, data);
  if (!t) return NULL_HANDLE;
  aclTensor *u =
      aclCreateTensor(dims, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, dims, 2, data);
  if (!u) {
    aclDestroyTensor(t);
    return NULL_HANDLE;
  }
  aclIntArray *ia = aclCreateIntArray(vals, 3);
  const aclTensor *list[2] = {t, u};
  aclTensorList *tl = ia ? aclCreateTensorList(list, 2) : NULL;
  int st = ia && tl ? 0 : NULL_HANDLE;
  if (tl)
    aclDestroyTensorList(tl); /* destroys t and u too */
  else {
    aclDestroyTensor(t);
    aclDestroyTensor(u);
  }
  if (ia) aclDestroyIntArray(ia);
  return st;
}

/* An aclnn op end to end over aclrtMalloc memory on a new stream (whose first run makes
 * its llmk context): op 0 aclnnApplyTopKTopP, 1 aclnnAdvanceStep; repeat 1: a
 * repeatable executor run twice and destroyed. */
typedef struct acl_arg {
  int op, repeat;
} acl_arg;

static int sc_aclnn(const void *varg) {
  const acl_arg *a = varg;
  enum { B = 4, V = 64, N = 4, MB = 2 };
  void *mem[6] = {0};
  aclTensor *t[6] = {0};
  aclrtStream stream = NULL;
  aclOpExecutor *ex = NULL;
  uint64_t ws = 0;
  int st = aclrtCreateStream(&stream);
  int nt = a->op == 0 ? 4 : 6;
  for (int i = 0; i < nt && !st; i++) {
    int64_t dims[2], nd;
    aclDataType dt;
    size_t es;
    if (a->op == 0) {
      nd = i == 0 || i == 3 ? 2 : 1;
      dims[0] = B;
      dims[1] = V;
      dt = i == 2 ? ACL_INT32 : ACL_FLOAT;
      es = 4;
    } else { /* tokens, sampled [N,1], positions, seq_lens, slots, tables [N,MB] */
      nd = i == 1 || i == 5 ? 2 : 1;
      dims[0] = i == 1 ? N - 1 : N; /* CANN: numSeqs > numQueries */
      dims[1] = i == 5 ? MB : 1;
      dt = ACL_INT64;
      es = 8;
    }
    size_t count = (size_t)dims[0] * (nd == 2 ? (size_t)dims[1] : 1);
    st = aclrtMalloc(&mem[i], count * es, ACL_MEM_MALLOC_HUGE_FIRST);
    if (st) break;
    memset(mem[i], 0, count * es);
    if (a->op == 0) {
      float *f = mem[i];
      int32_t *k = mem[i];
      for (size_t j = 0; j < count; j++) {
        if (i == 0) f[j] = (float)(j % 17);
        if (i == 1) f[j] = 0.7f;
        if (i == 2) k[j] = 5;
      }
    } else {
      int64_t *v = mem[i];
      for (size_t j = 0; j < count; j++) {
        if (i == 2) v[j] = (int64_t)j; /* positions */
        if (i == 3) v[j] = (int64_t)j + 1;
        if (i == 5) v[j] = (int64_t)j;
      }
    }
    int64_t strides[2] = {nd == 2 ? dims[1] : 1, 1};
    t[i] = aclCreateTensor(dims, (uint64_t)nd, dt, strides, 0, ACL_FORMAT_ND, dims,
                           (uint64_t)nd, mem[i]);
    if (!t[i]) st = NULL_HANDLE;
  }
  if (!st)
    st = a->op == 0 ? aclnnApplyTopKTopPGetWorkspaceSize(t[0], t[1], t[2], t[3], &ws, &ex)
                    : aclnnAdvanceStepGetWorkspaceSize(t[0], t[1], t[2], t[3], t[4], t[5],
                                                       N, N - 1, 16, &ws, &ex);
  void *w = NULL;
  if (!st && ws) st = aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
  if (!st && a->repeat) st = aclSetAclOpExecutorRepeatable(ex);
  for (int r = 0; r < (a->repeat ? 2 : 1) && !st; r++) {
    st = a->op == 0 ? aclnnApplyTopKTopP(w, ws, ex, stream)
                    : aclnnAdvanceStep(w, ws, ex, stream);
    if (!a->repeat) ex = NULL; /* consumed */
  }
  if (ex) aclDestroyAclOpExecutor(ex);
  if (w) aclrtFree(w);
  for (int i = 0; i < 6; i++) {
    if (t[i]) aclDestroyTensor(t[i]);
    if (mem[i]) aclrtFree(mem[i]);
  }
  if (stream) aclrtDestroyStream(stream);
  return st;
}

/* aclnnAdvanceStepV2 (speculative) and aclnnScatterPaKvCache (Norm): which 2 or 3. */
static int sc_aclnn_more(const void *varg) {
  int which = *(const int *)varg;
  enum { NS = 2, S = 1, T = NS * (S + 1) };
  /* V2: tokens, sampled [NS, S+1], positions, seq_lens, slots [T], tables [NS, 2],
   * spec [NS, S], accepted [NS]; scatter: key [2, 1, 16] f16, cache [2, 4, 1, 16] f16,
   * slots [2] i32 */
  int64_t dims[8][4] = {{T}, {NS, S + 1}, {T}, {T}, {T}, {NS, 2}, {NS, S}, {NS}};
  int nd[8] = {1, 2, 1, 1, 1, 2, 2, 1}, nt = 8;
  aclDataType dt[8] = {ACL_INT64, ACL_INT64, ACL_INT64, ACL_INT64,
                       ACL_INT64, ACL_INT64, ACL_INT64, ACL_INT64};
  if (which == 3) {
    int64_t sd[3][4] = {{2, 1, 16}, {2, 4, 1, 16}, {2}};
    memcpy(dims, sd, sizeof sd);
    nd[0] = 3, nd[1] = 4, nd[2] = 1, nt = 3;
    dt[0] = dt[1] = ACL_FLOAT16, dt[2] = ACL_INT32;
  }
  void *mem[8] = {0};
  aclTensor *t[8] = {0};
  aclrtStream stream = NULL;
  aclOpExecutor *ex = NULL;
  uint64_t ws = 0;
  int st = aclrtCreateStream(&stream);
  for (int i = 0; i < nt && !st; i++) {
    size_t count = 1, es = dt[i] == ACL_INT64 ? 8 : dt[i] == ACL_INT32 ? 4 : 2;
    int64_t strides[4];
    for (int d = nd[i] - 1; d >= 0; d--) {
      strides[d] = (int64_t)count;
      count *= (size_t)dims[i][d];
    }
    st = aclrtMalloc(&mem[i], count * es, ACL_MEM_MALLOC_HUGE_FIRST);
    if (st) break;
    memset(mem[i], 0, count * es);
    if (which == 2 && i == 2) /* positions */
      for (size_t j = 0; j < count; j++) ((int64_t *)mem[i])[j] = (int64_t)j;
    if (which == 2 && i == 5) /* block tables */
      for (size_t j = 0; j < count; j++) ((int64_t *)mem[i])[j] = (int64_t)j;
    if (which == 2 && i == 1) /* sampled: every token accepted */
      for (size_t j = 0; j < count; j++) ((int64_t *)mem[i])[j] = 7;
    if (which == 3 && i == 2) ((int32_t *)mem[i])[1] = 5;
    t[i] = aclCreateTensor(dims[i], (uint64_t)nd[i], dt[i], strides, 0, ACL_FORMAT_ND,
                           dims[i], (uint64_t)nd[i], mem[i]);
    if (!t[i]) st = NULL_HANDLE;
  }
  char norm[] = "Norm", none[] = "None";
  if (!st)
    st = which == 2
             ? aclnnAdvanceStepV2GetWorkspaceSize(t[0], t[1], t[2], t[3], t[4], t[5],
                                                  t[6], t[7], NS, NS, 16, &ws, &ex)
             : aclnnScatterPaKvCacheGetWorkspaceSize(t[0], t[1], t[2], NULL, NULL, NULL,
                                                     NULL, NULL, norm, none, NULL, NULL,
                                                     &ws, &ex);
  void *w = NULL;
  if (!st && ws) st = aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
  if (!st)
    st = which == 2 ? aclnnAdvanceStepV2(w, ws, ex, stream)
                    : aclnnScatterPaKvCache(w, ws, ex, stream);
  else if (ex)
    aclDestroyAclOpExecutor(ex);
  if (w) aclrtFree(w);
  for (int i = 0; i < 8; i++) {
    if (t[i]) aclDestroyTensor(t[i]);
    if (mem[i]) aclrtFree(mem[i]);
  }
  if (stream) aclrtDestroyStream(stream);
  return st;
}
#endif

int main(void) {
  the_bufs = calloc(1, sizeof(bufs));
  if (!the_bufs) return 2;
  printf("test_alloc_fail: runtime %s, ISA %s\n", llmk_threading_runtime(),
         llmk_isa_name(llmk_get_isa()));
  /* fill the plan quarantine (64 freed plans held back): from then on each retired
   * plan frees one, so the number of live blocks is steady */
  for (int i = 0; i < 80; i++) {
    size_t ws;
    llmk_plan *p;
    if (so_plan(the_bufs, OP_ADVANCE, &ws, &p) == LLMK_SUCCESS) llmk_plan_destroy(p);
  }

  static const int one = 1, two = 2;
  check("context_create(1)", sc_context, &one, native_oom);
  check("context_create(2)", sc_context, &two, native_oom);
  static const char *const modes[4] = {"plan+run", "repeatable", "plan+destroy",
                                       "2-thread ctx"};
  for (int op = 0; op < NUM_OPS; op++)
    for (int mode = 0; mode < 4; mode++) {
      op_arg a = {op, mode};
      char name[80];
      snprintf(name, sizeof name, "%s %s", so_op_names[op], modes[mode]);
      check(name, sc_op, &a, native_oom);
    }

#ifdef LLMK_ALLOC_ACLNN
  aclInit(NULL);
  /* fill the executor quarantine the same way */
  for (int i = 0; i < 70; i++) {
    acl_arg a = {0, 1};
    sc_aclnn(&a);
  }
  aclFinalize();
  check("aclInit+aclFinalize", sc_acl_init, NULL, rt_oom);
  aclInit(NULL);
  static const int dev = 0, host = 1;
  check("aclrtMalloc x70", sc_acl_malloc, &dev, rt_oom);
  check("aclrtMallocHost x70", sc_acl_malloc, &host, rt_oom);
  check("aclrt context/stream/event", sc_acl_handles, NULL, rt_oom);
  check("aclCreateTensor/IntArray/TensorList", sc_acl_tensors, NULL, aclnn_oom);
  static const acl_arg topk = {0, 0}, topk_rep = {0, 1}, adv = {1, 0}, adv_rep = {1, 1};
  check("aclnnApplyTopKTopP", sc_aclnn, &topk, aclnn_oom);
  check("aclnnApplyTopKTopP repeatable", sc_aclnn, &topk_rep, aclnn_oom);
  check("aclnnAdvanceStep", sc_aclnn, &adv, aclnn_oom);
  check("aclnnAdvanceStep repeatable", sc_aclnn, &adv_rep, aclnn_oom);
  static const int v2 = 2, scatter = 3;
  check("aclnnAdvanceStepV2 speculative", sc_aclnn_more, &v2, aclnn_oom);
  check("aclnnScatterPaKvCache", sc_aclnn_more, &scatter, aclnn_oom);
  aclFinalize();
#endif
  free(the_bufs);
  printf("%s: %d failure(s)\n", failures ? "FAILED" : "passed", failures);
  return failures ? 1 : 0;
}
