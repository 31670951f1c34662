/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aclnnFusedCausalConv1d, CANN's current sample program (22-argument first phase),
 * retold: a host program written for Ascend, built unchanged against the llmk aclnn
 * layer (docs/aclnn.md):
 *   g++ fused_causal_conv1d.cpp -I $P/include -I $P/include/aclnnop -I $P/include/aclnn \
 *       -L $P/lib64 -lopapi_nn -lopapi_math -lascendcl -lnnopbase
 * Prefill: K = 3, dim = 128, 4 sequences of 5, 3, 7, 4 tokens (maxQueryLen = cuSeqLen =
 * 19), x all 1.0 (f16), weight 1.0 on tap 0 and 0 on taps 1 and 2, 8 zero cache lines
 * of K-1 = 2 rows, cacheIndices 0, 3, 1, 5, no residual, no prefix caching (blockSize 0,
 * the four APC tensors NULL), convMode 0. Output row i of a sequence is padded row i:
 * the zero history for i < 2, then x (1.0). The program prints y's first ten values
 * (row 0: 0) and convStates' first ten (line 0 holds sequence 0's last two tokens: 1).
 */
#include <cmath>
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_fused_causal_conv1d.h"

#define CHECK_RET(cond, return_expr) \
  do {                               \
    if (!(cond)) {                   \
      return_expr;                   \
    }                                \
  } while (0)

#define LOG_PRINT(message, ...)     \
  do {                              \
    printf(message, ##__VA_ARGS__); \
  } while (0)

static int64_t Elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// IEEE binary16 bits to float.
static float HalfBitsToFloat(uint16_t bits) {
  int sign = bits >> 15, exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    magnitude = mantissa ? NAN : INFINITY;
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  }
  return sign ? -magnitude : magnitude;
}

// A device copy of host data, described as a contiguous ND tensor.
struct DeviceTensor {
  void* addr = nullptr;
  aclTensor* tensor = nullptr;
};

template <typename T>
static int Upload(const std::vector<T>& host, const std::vector<int64_t>& shape,
                  aclDataType type, DeviceTensor* out) {
  size_t bytes = static_cast<size_t>(Elements(shape)) * sizeof(T);
  auto ret = aclrtMalloc(&out->addr, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret);
            return ret);
  ret = aclrtMemcpy(out->addr, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMemcpy failed. ERROR: %d\n", ret);
            return ret);
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size() - 1; i > 0; i--) strides[i - 1] = strides[i] * shape[i];
  out->tensor = aclCreateTensor(shape.data(), shape.size(), type, strides.data(), 0,
                                ACL_FORMAT_ND, shape.data(), shape.size(), out->addr);
  return out->tensor ? 0 : 1;
}

static void Release(DeviceTensor* t) {
  if (t->tensor) aclDestroyTensor(t->tensor);
  if (t->addr) aclrtFree(t->addr);
}

template <typename T>
static int Download(const DeviceTensor& t, std::vector<T>* host) {
  size_t bytes = host->size() * sizeof(T);
  auto ret = aclrtMemcpy(host->data(), bytes, t.addr, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy to host failed. ERROR: %d\n", ret);
            return ret);
  return 0;
}

int main() {
  int32_t deviceId = 0;
  aclrtStream stream = nullptr;
  auto ret = aclInit(nullptr);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclInit failed. ERROR: %d\n", ret);
            return ret);
  ret = aclrtSetDevice(deviceId);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSetDevice failed. ERROR: %d\n", ret);
            return ret);
  ret = aclrtCreateStream(&stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtCreateStream failed. ERROR: %d\n", ret);
            return ret);

  const int64_t K = 3, dim = 128, batch = 4, lines = 8, stateLen = K - 1, cuSeqLen = 19;
  const uint16_t one = 0x3C00;  // 1.0 in binary16

  std::vector<int64_t> xShape = {cuSeqLen, dim}, wShape = {K, dim},
                       csShape = {lines, stateLen, dim}, perSeq = {batch},
                       qslShape = {batch + 1}, biasShape = {dim};
  std::vector<uint16_t> x(Elements(xShape), one), w(Elements(wShape), 0),
      cs(Elements(csShape), 0), bias(dim, 0), y(Elements(xShape), 0);
  for (int64_t d = 0; d < dim; d++) w[d] = one;  // tap 0 only
  std::vector<int32_t> qsl = {0, 5, 8, 15, 19}, cacheIndices = {0, 3, 1, 5},
                       initialStateMode = {1, 0, 2, 1}, accepted(batch, 0);

  DeviceTensor tx, tw, tcs, tqsl, tci, tism, tbias, tacc, ty;
  CHECK_RET(Upload(x, xShape, ACL_FLOAT16, &tx) == 0, return 1);
  CHECK_RET(Upload(w, wShape, ACL_FLOAT16, &tw) == 0, return 1);
  CHECK_RET(Upload(cs, csShape, ACL_FLOAT16, &tcs) == 0, return 1);
  CHECK_RET(Upload(qsl, qslShape, ACL_INT32, &tqsl) == 0, return 1);
  CHECK_RET(Upload(cacheIndices, perSeq, ACL_INT32, &tci) == 0, return 1);
  CHECK_RET(Upload(initialStateMode, perSeq, ACL_INT32, &tism) == 0, return 1);
  CHECK_RET(Upload(bias, biasShape, ACL_FLOAT16, &tbias) == 0, return 1);
  CHECK_RET(Upload(accepted, perSeq, ACL_INT32, &tacc) == 0, return 1);
  CHECK_RET(Upload(y, xShape, ACL_FLOAT16, &ty) == 0, return 1);

  int64_t activationMode = 0, padSlotId = -1, runMode = 0, maxQueryLen = cuSeqLen,
          residualConnection = 0, blockSize = 0, convMode = 0;
  uint64_t workspaceSize = 0;
  aclOpExecutor* executor = nullptr;
  // numComputedTokens and the three block-index tensors: absent (no prefix caching).
  ret = aclnnFusedCausalConv1dGetWorkspaceSize(
      tx.tensor, tw.tensor, tcs.tensor, tqsl.tensor, tci.tensor, tism.tensor,
      tbias.tensor, tacc.tensor, nullptr, nullptr, nullptr, nullptr, activationMode,
      padSlotId, runMode, maxQueryLen, residualConnection, blockSize, convMode, ty.tensor,
      &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnFusedCausalConv1dGetWorkspaceSize failed. ERROR: %d\n", ret);
            return ret);
  void* workspace = nullptr;
  if (workspaceSize > 0) {
    ret = aclrtMalloc(&workspace, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS,
              LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret);
              return ret);
  }
  ret = aclnnFusedCausalConv1d(workspace, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnFusedCausalConv1d failed. ERROR: %d\n", ret);
            return ret);
  ret = aclrtSynchronizeStream(stream);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret);
            return ret);

  CHECK_RET(Download(ty, &y) == 0, return 1);
  CHECK_RET(Download(tcs, &cs) == 0, return 1);
  LOG_PRINT("=== y output (first 10 elements) ===\n");
  for (int64_t i = 0; i < 10; i++)
    LOG_PRINT("  y[%lld] = %f\n", (long long)i, (double)HalfBitsToFloat(y[i]));
  LOG_PRINT("  ...\n");
  LOG_PRINT("=== convStates output (first 10 elements) ===\n");
  for (int64_t i = 0; i < 10; i++)
    LOG_PRINT("  convStates[%lld] = %f\n", (long long)i, (double)HalfBitsToFloat(cs[i]));
  LOG_PRINT("  ...\n");

  DeviceTensor* all[] = {&tx, &tw, &tcs, &tqsl, &tci, &tism, &tbias, &tacc, &ty};
  for (DeviceTensor* t : all) Release(t);
  if (workspace) aclrtFree(workspace);
  aclrtDestroyStream(stream);
  aclrtResetDevice(deviceId);
  aclFinalize();
  LOG_PRINT("Test completed successfully!\n");
  return 0;
}
