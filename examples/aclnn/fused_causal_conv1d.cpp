/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aclnnFusedCausalConv1d, CANN's sample program for the entry with a separate output y,
 * retold: a host program written for Ascend, built unchanged against the llmk aclnn
 * layer (docs/aclnn.md):
 *   g++ fused_causal_conv1d.cpp -I $P/include -I $P/include/aclnnop -I $P/include/aclnn \
 *       -L $P/lib64 -lopapi_nn -lopapi_math -lascendcl -lnnopbase
 * Prefill (runMode 0): K = 3, dim = 128, 4 sequences of 5, 3, 7, 4 tokens, x and weight
 * all 1.0 (f16), 8 zero cache lines of K-1 = 2 rows, cacheIndices 0, 3, 1, 5,
 * residualConnection 1. Token i of a sequence sees the zero history and 1 + min(i, 2)
 * ones, plus the residual: y = 2, 3, 4, 4, ...; the sample prints the first ten values
 * of y (row 0): 2 each. x is not written.
 */
#include <cmath>
#include <iostream>
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

template <typename T>
int MakeTensor(const std::vector<T>& hostData, const std::vector<int64_t>& shape,
               void** deviceAddr, aclDataType dataType, aclTensor** tensor) {
  auto size = GetShapeSize(shape) * sizeof(T);
  auto ret = aclrtMalloc(deviceAddr, size, ACL_MEM_MALLOC_HUGE_FIRST);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret);
            return ret);
  ret = aclrtMemcpy(*deviceAddr, size, hostData.data(), size, ACL_MEMCPY_HOST_TO_DEVICE);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMemcpy failed. ERROR: %d\n", ret);
            return ret);
  std::vector<int64_t> strides(shape.size(), 1);  // row-major, contiguous
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

  const int64_t K = 3, dim = 128, batch = 4, numLines = 8;
  const int64_t stateLen = K - 1;  // prefill: exactly K-1 rows per line
  const int64_t cuSeqLen = 19;     // 5 + 3 + 7 + 4

  std::vector<int64_t> xShape = {cuSeqLen, dim}, yShape = {cuSeqLen, dim};
  std::vector<int64_t> weightShape = {K, dim};
  std::vector<int64_t> convStatesShape = {numLines, stateLen, dim};
  std::vector<int64_t> batchPlusOneShape = {batch + 1}, batchShape = {batch};
  std::vector<int64_t> biasShape = {dim};

  std::vector<uint16_t> hostX(cuSeqLen * dim, 0x3C00);  // 1.0
  std::vector<uint16_t> hostWeight(K * dim, 0x3C00);    // every tap 1.0
  std::vector<uint16_t> hostConvStates(numLines * stateLen * dim, 0);
  std::vector<int32_t> hostQueryStartLoc = {0, 5, 8, 15, 19};  // cumulative offsets
  std::vector<int32_t> hostCacheIndices = {0, 3, 1, 5};
  std::vector<int32_t> hostInitialStateMode = {1, 0, 2, 1};
  std::vector<uint16_t> hostBias(dim, 0);
  std::vector<int32_t> hostNumAcceptedTokens(batch, 0);
  std::vector<uint16_t> hostY(cuSeqLen * dim, 0);

  const int kTensors = 9;
  std::vector<void*> addrs(kTensors, nullptr);
  std::vector<aclTensor*> tensors(kTensors, nullptr);
  enum { X, W, CS, QSL, CI, ISM, BIAS, NACC, Y };
  ret = MakeTensor(hostX, xShape, &addrs[X], aclDataType::ACL_FLOAT16, &tensors[X]);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = MakeTensor(hostWeight, weightShape, &addrs[W], aclDataType::ACL_FLOAT16,
                   &tensors[W]);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = MakeTensor(hostConvStates, convStatesShape, &addrs[CS], aclDataType::ACL_FLOAT16,
                   &tensors[CS]);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = MakeTensor(hostQueryStartLoc, batchPlusOneShape, &addrs[QSL],
                   aclDataType::ACL_INT32, &tensors[QSL]);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = MakeTensor(hostCacheIndices, batchShape, &addrs[CI], aclDataType::ACL_INT32,
                   &tensors[CI]);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = MakeTensor(hostInitialStateMode, batchShape, &addrs[ISM], aclDataType::ACL_INT32,
                   &tensors[ISM]);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = MakeTensor(hostBias, biasShape, &addrs[BIAS], aclDataType::ACL_FLOAT16,
                   &tensors[BIAS]);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = MakeTensor(hostNumAcceptedTokens, batchShape, &addrs[NACC],
                   aclDataType::ACL_INT32, &tensors[NACC]);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = MakeTensor(hostY, yShape, &addrs[Y], aclDataType::ACL_FLOAT16, &tensors[Y]);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  int64_t activationMode = 0;      // none
  int64_t padSlotId = -1;          // no sequence skipped
  int64_t runMode = 0;             // prefill
  int64_t residualConnection = 1;  // y = x + conv

  uint64_t workspaceSize = 0;
  aclOpExecutor* executor = nullptr;
  ret = aclnnFusedCausalConv1dGetWorkspaceSize(
      tensors[X], tensors[W], tensors[CS], tensors[QSL], tensors[CI], tensors[ISM],
      tensors[BIAS], tensors[NACC], activationMode, padSlotId, runMode,
      residualConnection, tensors[Y], &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnFusedCausalConv1dGetWorkspaceSize failed. ERROR: %d\n", ret);
            return ret);
  void* workspaceAddr = nullptr;
  if (workspaceSize > 0) {
    ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS,
              LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret);
              return ret);
  }
  ret = aclnnFusedCausalConv1d(workspaceAddr, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnFusedCausalConv1d failed. ERROR: %d\n", ret);
            return ret);
  ret = aclrtSynchronizeStream(stream);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret);
            return ret);

  auto ySize = GetShapeSize(yShape);
  std::vector<uint16_t> yResult(ySize, 0);
  ret = aclrtMemcpy(yResult.data(), ySize * sizeof(uint16_t), addrs[Y],
                    ySize * sizeof(uint16_t), ACL_MEMCPY_DEVICE_TO_HOST);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("copy y from device to host failed. ERROR: %d\n", ret);
            return ret);
  LOG_PRINT("First 10 output values:\n");
  for (int64_t i = 0; i < 10; i++) {
    std::cout << "index: " << i << ": " << HalfToFloat(yResult[i]) << std::endl;
  }

  for (int i = 0; i < kTensors; i++) {
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
