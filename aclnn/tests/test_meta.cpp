/* SPDX-License-Identifier: Apache-2.0 */
// The aclnn headers from C++, as CANN host programs use them: qualified enumerators,
// constexpr OK, getters whose arrays are freed with delete[].
#include <cstdio>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_apply_top_k_top_p.h"

static int checks, failures;
#define CHECK(cond)                                                            \
  do {                                                                         \
    checks++;                                                                  \
    if (!(cond)) {                                                             \
      failures++;                                                              \
      std::fprintf(stderr, "FAIL %s:%d: %s (%s)\n", __FILE__, __LINE__, #cond, \
                   aclGetRecentErrMsg());                                      \
    }                                                                          \
  } while (0)

static_assert(OK == 0, "OK");
static_assert(sizeof(aclnnStatus) == 4, "aclnnStatus is int32_t");
static_assert(sizeof(aclFloat16) == 2, "aclFloat16");

int main() {
  CHECK(aclDataType::ACL_FLOAT == 0 && aclDataType::ACL_BF16 == 27 &&
        ACL_FLOAT4_E1M2 == 41);
  CHECK(aclFormat::ACL_FORMAT_ND == 2 && ACL_FRACTAL_Z_3D == 33 &&
        ACL_FORMAT_FRACTAL_NZ_C0_8 == 54);
  CHECK(ACL_MEMCPY_INTER_DEVICE_TO_DEVICE == 7 &&
        ACL_MEM_ACCESS_USER_SPACE_READONLY == 0x100000);
  CHECK(ACL_ERROR_REPEAT_FINALIZE == 100037 && ACL_ERROR_RT_FAILURE == 500003);
  CHECK(ACLNN_ERR_INNER_NULLPTR == 561103 && ACLNN_ERR_RUNTIME_ERROR == 361001);

  std::vector<int64_t> shape = {2, 3, 4};
  std::vector<float> data(64);
  // NULL strides: contiguous; offset counts elements.
  aclTensor *t =
      aclCreateTensor(shape.data(), shape.size(), aclDataType::ACL_FLOAT, nullptr, 5,
                      aclFormat::ACL_FORMAT_ND, shape.data(), shape.size(), data.data());
  CHECK(t != nullptr);
  int64_t *dims = nullptr, *strides = nullptr, *storage = nullptr;
  uint64_t n = 0, ns = 0, nst = 0;
  CHECK(aclGetViewShape(t, &dims, &n) == OK);
  CHECK(n == 3 && dims[0] == 2 && dims[1] == 3 && dims[2] == 4);
  CHECK(aclGetViewStrides(t, &strides, &ns) == OK);
  CHECK(ns == 3 && strides[0] == 12 && strides[1] == 4 && strides[2] == 1);
  CHECK(aclGetStorageShape(t, &storage, &nst) == OK);
  CHECK(nst == 3 && storage[2] == 4);
  delete[] dims;
  delete[] strides;
  delete[] storage;
  int64_t offset = 0;
  CHECK(aclGetViewOffset(t, &offset) == OK && offset == 5);
  CHECK(aclGetViewShape(nullptr, &dims, &n) == ACLNN_ERR_PARAM_NULLPTR);
  CHECK(aclGetViewShape(t, nullptr, &n) == ACLNN_ERR_PARAM_NULLPTR);
  CHECK(aclDestroyTensor(t) == OK);

  // Explicit strides are copied; the caller's array may go away.
  {
    std::vector<int64_t> st = {1, 2, 6};
    t = aclCreateTensor(shape.data(), shape.size(), ACL_FLOAT16, st.data(), 0,
                        ACL_FORMAT_NCHW, shape.data(), shape.size(), data.data());
  }
  CHECK(aclGetViewStrides(t, &strides, &ns) == OK);
  CHECK(ns == 3 && strides[0] == 1 && strides[1] == 2 && strides[2] == 6);
  delete[] strides;
  aclDataType dt = ACL_DT_UNDEFINED;
  CHECK(aclGetDataType(t, &dt) == OK && dt == ACL_FLOAT16);
  CHECK(aclDestroyTensor(t) == OK);

  // Rank 0: empty arrays, still allocated with new[].
  t = aclCreateTensor(nullptr, 0, ACL_INT64, nullptr, 0, ACL_FORMAT_ND, nullptr, 0,
                      data.data());
  CHECK(t != nullptr);
  CHECK(aclGetViewShape(t, &dims, &n) == OK && n == 0);
  delete[] dims;
  CHECK(aclDestroyTensor(t) == OK);
  CHECK(aclCreateTensor(nullptr, 1, ACL_INT64, nullptr, 0, ACL_FORMAT_ND, nullptr, 0,
                        data.data()) == nullptr);

  // The sample op through the C++ header, on host data (allowed: device = host here).
  std::vector<float> lg = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, out(12, 0),
                     p = {0.2f, 0.4f, 0.6f};
  std::vector<int32_t> k = {1, 2, 3};
  std::vector<int64_t> s2 = {3, 4}, s1 = {3};
  aclTensor *tl = aclCreateTensor(s2.data(), 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND,
                                  s2.data(), 2, lg.data());
  aclTensor *tp = aclCreateTensor(s1.data(), 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND,
                                  s1.data(), 1, p.data());
  aclTensor *tk = aclCreateTensor(s1.data(), 1, ACL_INT32, nullptr, 0, ACL_FORMAT_ND,
                                  s1.data(), 1, k.data());
  aclTensor *to = aclCreateTensor(s2.data(), 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND,
                                  s2.data(), 2, out.data());
  uint64_t ws = 0;
  aclOpExecutor *ex = nullptr;
  CHECK(aclnnApplyTopKTopPGetWorkspaceSize(tl, tp, tk, to, &ws, &ex) == OK);
  std::vector<char> w(ws ? ws : 1);
  CHECK(aclnnApplyTopKTopP(w.data(), ws, ex, nullptr) == OK);
  CHECK(out[3] == 4 && out[7] == 8 && out[11] == 12 && out[0] < -1e30f);
  aclDestroyTensor(tl);
  aclDestroyTensor(tp);
  aclDestroyTensor(tk);
  aclDestroyTensor(to);

  std::printf("test_aclnn_meta: %d passed, %d failed\n", checks - failures, failures);
  return failures ? 1 : 0;
}
