/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aclnnInplaceFusedCausalConv1d, the CANN sample program (its newest version): a host
 * program written for Ascend, built unchanged against the llmk aclnn layer
 * (docs/aclnn.md):
 *   g++ causal_conv1d.cpp -I $P/include -I $P/include/aclnnop -I $P/include/aclnn \
 *       -L $P/lib64 -lopapi_nn -lopapi_math -lascendcl -lnnopbase
 * K = 3, dim = 128, 4 sequences of 5, 3, 7, 4 tokens, x all 1.0 (f16), w[0] = 1 and
 * w[1] = w[2] = 0, 8 zero cache lines of C = 8 rows, cacheIndices 0, 3, 1, 5,
 * numAcceptedTokens all 0, maxQueryLen 7. Each sequence's rows become 0, 0, 1, 1, ...;
 * sequence 0 has 2 + 5 rows of padded input, so rows 1..7 of line 0 get 0, 0, 1, 1, 1,
 * 1, 1 and row 0 is not written: the first ten elements of x and of convStates print
 * 0.000000. (The older sample, C = 2 and maxQueryLen = cuSeqLen, prints x 0.000000 and
 * convStates 1.000000.)
 */
#include <cmath>
#include <iostream>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_inplace_fused_causal_conv1d.h"

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

int64_t GetShapeSize(const std::vector<int64_t>& shape) {
  int64_t shapeSize = 1;
  for (auto dim : shape) {
    shapeSize *= dim;
  }
  return shapeSize;
}

int Init(int32_t deviceId, aclrtStream* stream) {
  // Runtime set-up: library, device, stream.
  auto ret = aclInit(nullptr);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclInit failed. ERROR: %d\n", ret);
            return ret);
  ret = aclrtSetDevice(deviceId);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSetDevice failed. ERROR: %d\n", ret);
            return ret);
  ret = aclrtCreateStream(stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtCreateStream failed. ERROR: %d\n", ret);
            return ret);
  return 0;
}

// IEEE binary16 bits to float.
float HalfToFloat(uint16_t bits) {
  int sign = (bits >> 15) & 1, exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
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

template <typename T>
int CreateAclTensor(const std::vector<T>& hostData, const std::vector<int64_t>& shape,
                    void** deviceAddr, aclDataType dataType, aclTensor** tensor) {
  auto size = GetShapeSize(shape) * sizeof(T);
  auto ret = aclrtMalloc(deviceAddr, size, ACL_MEM_MALLOC_HUGE_FIRST);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret);
            return ret);
  ret = aclrtMemcpy(*deviceAddr, size, hostData.data(), size, ACL_MEMCPY_HOST_TO_DEVICE);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMemcpy failed. ERROR: %d\n", ret);
            return ret);
  // Row-major strides of a contiguous tensor.
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; i--) {
    strides[i] = shape[i + 1] * strides[i + 1];
  }
  *tensor =
      aclCreateTensor(shape.data(), shape.size(), dataType, strides.data(), 0,
                      aclFormat::ACL_FORMAT_ND, shape.data(), shape.size(), *deviceAddr);
  return 0;
}

int main() {
  int32_t deviceId = 0;
  aclrtStream stream;
  auto ret = Init(deviceId, &stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret);
            return ret);

  int64_t K = 3;          // kernel width (CANN: 3 only)
  int64_t dim = 128;      // channels
  int64_t batch = 4;      // sequences
  int64_t numLines = 8;   // cache lines
  int64_t stateLen = 8;   // rows of state per line (C)
  int64_t cuSeqLen = 19;  // 5 + 3 + 7 + 4 tokens

  std::vector<int64_t> xShape = {cuSeqLen, dim};
  std::vector<int64_t> weightShape = {K, dim};
  std::vector<int64_t> convStatesShape = {numLines, stateLen, dim};
  std::vector<int64_t> batchPlusOneShape = {batch + 1};
  std::vector<int64_t> batchShape = {batch};
  std::vector<int64_t> biasShape = {dim};

  std::vector<uint16_t> hostX(cuSeqLen * dim, 0x3C00);  // 1.0
  std::vector<uint16_t> hostWeight(K * dim, 0);
  for (int64_t d = 0; d < dim; d++) {
    hostWeight[d] = 0x3C00;  // w[0] = 1: y[i] is the oldest token of the window
  }
  std::vector<uint16_t> hostConvStates(numLines * stateLen * dim, 0);
  std::vector<int32_t> hostQueryStartLoc = {0, 5, 8, 15, 19};
  std::vector<int32_t> hostCacheIndices = {0, 3, 1, 5};
  std::vector<int32_t> hostInitialStateMode = {1, 0, 2, 1};  // ignored
  std::vector<uint16_t> hostBias(dim, 0);                    // ignored
  std::vector<int32_t> hostNumAcceptedTokens(batch, 0);

  void *xAddr = nullptr, *weightAddr = nullptr, *convStatesAddr = nullptr;
  void *queryStartLocAddr = nullptr, *cacheIndicesAddr = nullptr,
       *initialStateModeAddr = nullptr;
  void *biasAddr = nullptr, *numAcceptedTokensAddr = nullptr;
  aclTensor *x = nullptr, *weight = nullptr, *convStates = nullptr,
            *queryStartLoc = nullptr;
  aclTensor *cacheIndices = nullptr, *initialStateMode = nullptr, *bias = nullptr;
  aclTensor* numAcceptedTokens = nullptr;

  ret = CreateAclTensor(hostX, xShape, &xAddr, aclDataType::ACL_FLOAT16, &x);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(hostWeight, weightShape, &weightAddr, aclDataType::ACL_FLOAT16,
                        &weight);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(hostConvStates, convStatesShape, &convStatesAddr,
                        aclDataType::ACL_FLOAT16, &convStates);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(hostQueryStartLoc, batchPlusOneShape, &queryStartLocAddr,
                        aclDataType::ACL_INT32, &queryStartLoc);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(hostCacheIndices, batchShape, &cacheIndicesAddr,
                        aclDataType::ACL_INT32, &cacheIndices);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(hostInitialStateMode, batchShape, &initialStateModeAddr,
                        aclDataType::ACL_INT32, &initialStateMode);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(hostBias, biasShape, &biasAddr, aclDataType::ACL_FLOAT16, &bias);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(hostNumAcceptedTokens, batchShape, &numAcceptedTokensAddr,
                        aclDataType::ACL_INT32, &numAcceptedTokens);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  int64_t activationMode = 0;
  int64_t padSlotId = -1;
  int64_t runMode = 0;
  int64_t maxQueryLen = 7;
  int64_t residualConnection = 0;
  int64_t blockSize = 0;  // no APC
  int64_t convMode = 0;

  uint64_t workspaceSize = 0;
  aclOpExecutor* executor = nullptr;
  ret = aclnnInplaceFusedCausalConv1dGetWorkspaceSize(
      x, weight, convStates, queryStartLoc, cacheIndices, initialStateMode, bias,
      numAcceptedTokens, nullptr, nullptr, nullptr, nullptr, activationMode, padSlotId,
      runMode, maxQueryLen, residualConnection, blockSize, convMode, &workspaceSize,
      &executor);
  CHECK_RET(
      ret == ACL_SUCCESS,
      LOG_PRINT("aclnnInplaceFusedCausalConv1dGetWorkspaceSize failed. ERROR: %d\n", ret);
      return ret);
  void* workspaceAddr = nullptr;
  if (workspaceSize > 0) {
    ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS,
              LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret);
              return ret);
  }
  ret = aclnnInplaceFusedCausalConv1d(workspaceAddr, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnInplaceFusedCausalConv1d failed. ERROR: %d\n", ret);
            return ret);
  ret = aclrtSynchronizeStream(stream);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret);
            return ret);

  auto xSize = GetShapeSize(xShape);
  std::vector<uint16_t> xResult(xSize, 0);
  ret = aclrtMemcpy(xResult.data(), xSize * sizeof(uint16_t), xAddr,
                    xSize * sizeof(uint16_t), ACL_MEMCPY_DEVICE_TO_HOST);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("copy x from device to host failed. ERROR: %d\n", ret);
            return ret);
  auto csSize = GetShapeSize(convStatesShape);
  std::vector<uint16_t> csResult(csSize, 0);
  ret = aclrtMemcpy(csResult.data(), csSize * sizeof(uint16_t), convStatesAddr,
                    csSize * sizeof(uint16_t), ACL_MEMCPY_DEVICE_TO_HOST);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("copy convStates from device to host failed. ERROR: %d\n", ret);
            return ret);

  LOG_PRINT("=== x output (inplace, first 10 elements) ===\n");
  for (int64_t i = 0; i < 10 && i < xSize; i++) {
    LOG_PRINT("  x[%lld] = %f\n", (long long)i, (double)HalfToFloat(xResult[i]));
  }
  LOG_PRINT("  ...\n");
  LOG_PRINT("=== convStates output (first 10 elements) ===\n");
  for (int64_t i = 0; i < 10 && i < csSize; i++) {
    LOG_PRINT("  convStates[%lld] = %f\n", (long long)i,
              (double)HalfToFloat(csResult[i]));
  }

  aclTensor* tensors[] = {
      x,    weight,           convStates, queryStartLoc, cacheIndices, initialStateMode,
      bias, numAcceptedTokens};
  void* addrs[] = {xAddr,
                   weightAddr,
                   convStatesAddr,
                   queryStartLocAddr,
                   cacheIndicesAddr,
                   initialStateModeAddr,
                   biasAddr,
                   numAcceptedTokensAddr};
  for (int i = 0; i < 8; i++) {
    aclDestroyTensor(tensors[i]);
    aclrtFree(addrs[i]);
  }
  if (workspaceSize > 0) {
    aclrtFree(workspaceAddr);
  }
  aclrtDestroyStream(stream);
  aclrtResetDevice(deviceId);
  aclFinalize();
  LOG_PRINT("Test completed successfully!\n");
  return 0;
}
