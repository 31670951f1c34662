/* SPDX-License-Identifier: Apache-2.0 */
/* Core API: status strings, dtype table, tensors, contexts, the parallel-for, plans
 * and ISA control. */
#include <stdatomic.h>
#include <string.h>

#include "core/internal.h"
#include "llmk/llmk.h"
#include "test_util.h"

static void test_status(void) {
  TU_CHECK(!strcmp(llmk_status_string(LLMK_SUCCESS), "success"), "%s", "success");
  TU_CHECK(!strcmp(llmk_status_string((llmk_status)999), "unknown status"), "%s", "999");
  for (int s = 1; s <= LLMK_ERROR_OVERLAP; s++) {
    const char *txt = llmk_status_string((llmk_status)s);
    TU_CHECK(txt && strlen(txt) > 3 && strcmp(txt, "unknown status"), "status %d", s);
  }
  TU_CHECK(llmk_version() == LLMK_VERSION, "%u", llmk_version());
  TU_CHECK(!strcmp(llmk_version_string(), LLMK_VERSION_STRING), "%s",
           llmk_version_string());
}

static void test_dtypes(void) {
  static const struct {
    llmk_dtype d;
    size_t size;
    const char *name;
  } table[] = {
      {LLMK_F32, 4, "f32"},
      {LLMK_F16, 2, "f16"},
      {LLMK_BF16, 2, "bf16"},
      {LLMK_I8, 1, "i8"},
      {LLMK_U8, 1, "u8"},
      {LLMK_I32, 4, "i32"},
      {LLMK_I64, 8, "i64"},
      {LLMK_FP8_E4M3FN, 1, "fp8_e4m3fn"},
      {LLMK_FP8_E5M2, 1, "fp8_e5m2"},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    TU_CHECK(llmk_dtype_size(table[i].d) == table[i].size, "%s", table[i].name);
    TU_CHECK(!strcmp(llmk_dtype_name(table[i].d), table[i].name), "%s", table[i].name);
  }
  TU_CHECK(llmk_dtype_size(LLMK_DTYPE_INVALID) == 0, "%s", "invalid");
  TU_CHECK(llmk_dtype_size((llmk_dtype)77) == 0, "%s", "77");
  TU_CHECK(!strcmp(llmk_dtype_name((llmk_dtype)-3), "invalid"), "%s", "-3");
}

static void test_tensors(void) {
  llmk_tensor t;
  float buf[24];
  int64_t shape[3] = {2, 3, 4};
  TU_CHECK(llmk_tensor_init(&t, LLMK_F32, 3, shape, NULL, buf) == LLMK_SUCCESS, "%s",
           llmk_last_error());
  TU_CHECK(t.strides[0] == 12 && t.strides[1] == 4 && t.strides[2] == 1, "%lld %lld %lld",
           (long long)t.strides[0], (long long)t.strides[1], (long long)t.strides[2]);
  TU_CHECK(t.shape[3] == 0 && t.strides[7] == 0, "%s", "trailing zeroed");
  TU_CHECK(llmk_tensor_numel(&t) == 24, "%lld", (long long)llmk_tensor_numel(&t));
  int64_t strides[3] = {1, 2, 6};
  TU_CHECK(llmk_tensor_init(&t, LLMK_F32, 3, shape, strides, buf) == LLMK_SUCCESS, "%s",
           "strided");
  TU_CHECK(t.strides[2] == 6, "%lld", (long long)t.strides[2]);
  TU_CHECK(llmk_tensor_init(&t, LLMK_F32, 0, NULL, NULL, buf) == LLMK_SUCCESS, "%s",
           "rank 0");
  TU_CHECK(llmk_tensor_numel(&t) == 1, "%s", "rank 0 numel");
  TU_CHECK(
      llmk_tensor_init(NULL, LLMK_F32, 3, shape, NULL, buf) == LLMK_ERROR_NULL_POINTER,
      "%s", "NULL t");
  TU_CHECK(llmk_tensor_init(&t, LLMK_F32, 2, NULL, NULL, buf) == LLMK_ERROR_NULL_POINTER,
           "%s", "NULL shape");
  TU_CHECK(
      llmk_tensor_init(&t, LLMK_F32, 9, shape, NULL, buf) == LLMK_ERROR_INVALID_SHAPE,
      "%s", "rank 9");
  TU_CHECK(
      llmk_tensor_init(&t, LLMK_F32, -1, shape, NULL, buf) == LLMK_ERROR_INVALID_SHAPE,
      "%s", "rank -1");
  TU_CHECK(llmk_tensor_init(&t, (llmk_dtype)42, 3, shape, NULL, buf) ==
               LLMK_ERROR_INVALID_DTYPE,
           "%s", "dtype 42");
  TU_CHECK(strstr(llmk_last_error(), "dtype") != NULL, "%s", llmk_last_error());
  int64_t neg[2] = {2, -1};
  TU_CHECK(llmk_tensor_init(&t, LLMK_F32, 2, neg, NULL, buf) == LLMK_ERROR_INVALID_SHAPE,
           "%s", "negative extent");
  int64_t negs[2] = {1, -1};
  TU_CHECK(
      llmk_tensor_init(&t, LLMK_F32, 2, shape, negs, buf) == LLMK_ERROR_INVALID_SHAPE,
      "%s", "negative stride");
  TU_CHECK(strstr(llmk_last_error(), "strides[1]=-1") != NULL, "%s", llmk_last_error());

  /* the ops' common check */
  llmk_tensor_init(&t, LLMK_F32, 3, shape, NULL, buf);
  TU_CHECK(llmk__check_tensor("op", "x", &t) == LLMK_SUCCESS, "%s", llmk_last_error());
  TU_CHECK(llmk__tensor_span_bytes(&t) == 96, "%zu", llmk__tensor_span_bytes(&t));
  t.data = NULL;
  TU_CHECK(llmk__check_tensor("op", "x", &t) == LLMK_ERROR_NULL_POINTER, "%s",
           "data NULL");
  TU_CHECK(!strcmp(llmk_last_error(), "op: x.data is NULL"), "%s", llmk_last_error());
  t.shape[1] = 0;
  TU_CHECK(llmk__check_tensor("op", "x", &t) == LLMK_SUCCESS, "%s",
           "empty, data NULL ok");
  t.data = buf;
  t.shape[1] = 3;
  t.strides[0] = INT64_MAX / 2;
  TU_CHECK(llmk__check_tensor("op", "x", &t) == LLMK_ERROR_INVALID_SHAPE, "%s",
           "overflow");
  TU_CHECK(llmk__check_tensor("op", "x", NULL) == LLMK_ERROR_NULL_POINTER, "%s", "NULL");
}

static atomic_int visits[10000];
static void mark(void *arg, int64_t b, int64_t e) {
  (void)arg;
  for (int64_t i = b; i < e; i++) atomic_fetch_add(&visits[i], 1);
}

static void test_contexts(void) {
  llmk_context_destroy(NULL);
  TU_CHECK(llmk_context_num_threads(NULL) == 1, "%s", "NULL ctx");
  TU_CHECK(llmk_context_create(1, NULL) == LLMK_ERROR_NULL_POINTER, "%s", "NULL out");
  TU_CHECK(!strcmp(llmk_threading_runtime(), "openmp") ||
               !strcmp(llmk_threading_runtime(), "pthreads"),
           "%s", llmk_threading_runtime());
  llmk_context *dflt;
  TU_CHECK(llmk_context_create(0, &dflt) == LLMK_SUCCESS, "%s", "default");
  TU_CHECK(llmk_context_num_threads(dflt) >= 1, "%d", llmk_context_num_threads(dflt));
  llmk_context_destroy(dflt);

  static const int64_t sizes[] = {0, 1, 2, 3, 7, 64, 1000, 9999};
  static const int64_t grains[] = {1, 3, 64, 100000};
  for (int threads = 1; threads <= 4; threads++) {
    llmk_context *ctx;
    TU_CHECK(llmk_context_create(threads, &ctx) == LLMK_SUCCESS, "%d", threads);
    TU_CHECK(llmk_context_num_threads(ctx) == threads, "%d",
             llmk_context_num_threads(ctx));
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (size_t g = 0; g < sizeof grains / sizeof grains[0]; g++)
        for (int rep = 0; rep < 3; rep++) {
          int64_t n = sizes[s];
          for (int64_t i = 0; i < n; i++) atomic_store(&visits[i], 0);
          llmk__parallel_for(rep == 2 ? NULL : ctx, n, grains[g], mark, NULL);
          int64_t bad = 0;
          for (int64_t i = 0; i < n; i++) bad += atomic_load(&visits[i]) != 1;
          TU_CHECK(bad == 0, "threads=%d n=%lld grain=%lld: %lld items not visited once",
                   threads, (long long)n, (long long)grains[g], (long long)bad);
        }
    llmk_context_destroy(ctx);
  }
  /* the split is a fixed function of (n, parts) and covers [0, n) in order */
  for (int parts = 1; parts <= 5; parts++)
    for (int64_t n = 0; n < 40; n++) {
      int64_t expect = 0;
      for (int i = 0; i < parts; i++) {
        int64_t b, e;
        llmk__split(n, parts, i, &b, &e);
        TU_CHECK(b == expect && e >= b && e - b <= n / parts + 1, "n=%lld parts=%d",
                 (long long)n, parts);
        expect = e;
      }
      TU_CHECK(expect == n, "n=%lld parts=%d", (long long)n, parts);
    }
}

static void test_plans(void) {
  llmk_plan *p;
  TU_CHECK(llmk_plan_destroy(NULL) == LLMK_SUCCESS, "%s", "destroy NULL");
  TU_CHECK(llmk_plan_set_repeatable(NULL) == LLMK_ERROR_INVALID_PLAN, "%s", "rep NULL");
  TU_CHECK(llmk__plan_create("op", LLMK__OP_ADVANCE_STEP, 16, 100, &p) == LLMK_SUCCESS,
           "%s", "create");
  bool live;
  TU_CHECK(llmk__plan_begin_run("op", LLMK__OP_ADVANCE_STEP, p, NULL, 99, &live) ==
                   LLMK_ERROR_WORKSPACE_TOO_SMALL &&
               live,
           "%s", llmk_last_error());
  llmk__plan_end_run(p); /* consumed */
  TU_CHECK(llmk__plan_begin_run("op", LLMK__OP_ADVANCE_STEP, p, NULL, 100, &live) ==
                   LLMK_ERROR_INVALID_PLAN &&
               !live,
           "%s", "consumed");
  TU_CHECK(llmk_plan_destroy(p) == LLMK_ERROR_INVALID_PLAN, "%s", "destroy consumed");
  TU_CHECK(llmk_plan_set_repeatable(p) == LLMK_ERROR_INVALID_PLAN, "%s", "rep consumed");

  char ws[100];
  TU_CHECK(llmk__plan_create("op", LLMK__OP_ADVANCE_STEP, 0, 100, &p) == LLMK_SUCCESS,
           "%s", "strided");
  TU_CHECK(llmk_plan_set_repeatable(p) == LLMK_SUCCESS, "%s", "rep");
  for (int i = 0; i < 3; i++) {
    TU_CHECK(llmk__plan_begin_run("op", LLMK__OP_ADVANCE_STEP, p, NULL, 100, &live) ==
                 LLMK_ERROR_NULL_POINTER,
             "%s", "workspace NULL");
    llmk__plan_end_run(p);
    TU_CHECK(llmk__plan_begin_run("op", LLMK__OP_ADVANCE_STEP, p, ws, 100, &live) ==
                 LLMK_SUCCESS,
             "run %d: %s", i, llmk_last_error());
    llmk__plan_end_run(p);
  }
  TU_CHECK(llmk__plan_begin_run("op", (llmk__op)99, p, ws, 100, &live) ==
               LLMK_ERROR_INVALID_PLAN,
           "%s", "other op");
  llmk__plan_end_run(p);
  TU_CHECK(llmk_plan_destroy(p) == LLMK_SUCCESS, "%s", "destroy");
  TU_CHECK(llmk_plan_destroy(p) == LLMK_ERROR_INVALID_PLAN, "%s", "double destroy");

  /* many live plans at once (registry growth), destroyed in another order */
  enum { N = 1000 };
  static llmk_plan *many[N];
  for (int i = 0; i < N; i++)
    TU_CHECK(
        llmk__plan_create("op", LLMK__OP_ADVANCE_STEP, 8, 0, &many[i]) == LLMK_SUCCESS,
        "%d", i);
  for (int i = 0; i < N; i += 2)
    TU_CHECK(llmk_plan_destroy(many[i]) == LLMK_SUCCESS, "%d", i);
  for (int i = 1; i < N; i += 2) {
    TU_CHECK(llmk__plan_begin_run("op", LLMK__OP_ADVANCE_STEP, many[i], NULL, 0, &live) ==
                 LLMK_SUCCESS,
             "%d", i);
    llmk__plan_end_run(many[i]);
  }
  for (int i = 0; i < N; i++)
    TU_CHECK(llmk_plan_destroy(many[i]) == LLMK_ERROR_INVALID_PLAN, "%d", i);
}

static void test_isa(void) {
  llmk_isa native = llmk_get_native_isa();
  printf("native ISA %s, features: %s, runtime %s\n", llmk_isa_name(native),
         llmk_cpu_features(), llmk_threading_runtime());
#if defined(__aarch64__) && defined(__linux__)
  /* Advanced SIMD is part of every aarch64 CPU: its absence means the auxv was misread.
   */
  TU_CHECK(!strncmp(llmk_cpu_features(), "asimd", 5), "features \"%s\"",
           llmk_cpu_features());
#endif
  llmk_isa saved = llmk_get_isa();
  /* Each architecture's ISAs in order; a cap of the other architecture's is scalar. */
#if defined(__aarch64__)
  const int mine[] = {LLMK_ISA_SCALAR, LLMK_ISA_NEON},
            other[] = {LLMK_ISA_AVX2, LLMK_ISA_AVX512};
#else
  const int mine[] = {LLMK_ISA_SCALAR, LLMK_ISA_AVX2, LLMK_ISA_AVX512},
            other[] = {LLMK_ISA_NEON};
#endif
  int rank_native = 0;
  for (int i = 0; i < (int)(sizeof mine / sizeof mine[0]); i++)
    if (mine[i] == (int)native) rank_native = i;
  for (int i = 0; i < (int)(sizeof mine / sizeof mine[0]); i++) {
    llmk_isa got = llmk_set_max_isa((llmk_isa)mine[i]);
    llmk_isa want = i < rank_native ? (llmk_isa)mine[i] : native;
    TU_CHECK(got == want && llmk_get_isa() == want, "max %d: got %d", mine[i], (int)got);
  }
  for (int i = 0; i < (int)(sizeof other / sizeof other[0]); i++)
    TU_CHECK(llmk_set_max_isa((llmk_isa)other[i]) == LLMK_ISA_SCALAR, "other %d",
             other[i]);
  TU_CHECK(llmk_set_max_isa((llmk_isa)99) == llmk_set_max_isa(LLMK_ISA_NEON), "%s",
           "above");
  TU_CHECK(llmk_set_max_isa((llmk_isa)-5) == LLMK_ISA_SCALAR, "%s", "below");
  llmk_set_max_isa(saved);
  TU_CHECK(!strcmp(llmk_isa_name(LLMK_ISA_AVX2), "avx2"), "%s", "name");
  TU_CHECK(!strcmp(llmk_isa_name(LLMK_ISA_NEON), "neon"), "%s", "name");
}

/* A data pointer not aligned to its element size, and a span that wraps the address
 * space: refused by the tensor checks every op runs. */
static void test_alignment(void) {
  static int64_t buf[8];
  int64_t n[1] = {4};
  llmk_tensor t;
  llmk_tensor_init(&t, LLMK_F32, 1, n, NULL, (char *)buf + 2);
  TU_CHECK(llmk__check_tensor("t", "x", &t) == LLMK_ERROR_INVALID_SHAPE &&
               strstr(llmk_last_error(), "aligned"),
           "misaligned f32: %s", llmk_last_error());
  llmk_tensor_init(&t, LLMK_F16, 1, n, NULL, (char *)buf + 2);
  TU_CHECK(llmk__check_tensor("t", "x", &t) == LLMK_SUCCESS, "f16 at 2: %s",
           llmk_last_error());
  llmk_tensor_init(&t, LLMK_I64, 1, n, NULL, (char *)buf + 4);
  TU_CHECK(llmk__check_tensor("t", "x", &t) == LLMK_ERROR_INVALID_SHAPE, "i64 at 4: %s",
           llmk_last_error());
  int64_t big[1] = {(int64_t)1 << 40};
  llmk_tensor_init(&t, LLMK_U8, 1, big, NULL, (void *)(UINTPTR_MAX - 4096));
  TU_CHECK(llmk__check_tensor("t", "x", &t) == LLMK_ERROR_INVALID_SHAPE &&
               strstr(llmk_last_error(), "wraps"),
           "wrapping span: %s", llmk_last_error());
}

int main(void) {
  test_status();
  test_alignment();
  test_dtypes();
  test_tensors();
  test_contexts();
  test_plans();
  test_isa();
  return tu_finish("test_core");
}
