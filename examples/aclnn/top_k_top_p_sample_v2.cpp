/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aclnnTopKTopPSampleV2, the CANN sample program: a host program written for Ascend,
 * built unchanged against the llmk aclnn layer (docs/aclnn.md):
 *   g++ top_k_top_p_sample_v2.cpp -I $P/include -I $P/include/aclnnop \
 *       -I $P/include/aclnn -L $P/lib64 -lopapi_nn -lopapi_math -lascendcl -lnnopbase
 * logits [48, 131072] BFLOAT16, every element the bits 0x0001 (all equal, tiny and
 * positive); topK [48] all 128; topP and minPs [48] BFLOAT16 the bits 0x0001 (a tiny
 * positive p and min-p); q [48, 131072] all 1.0; eps 1e-8, isNeedLogits 0,
 * topKGuess 32, ksMax 1024, inputIsLogits true, isNeedSampleResult false. Each row
 * keeps its first 128 entries (equal values: the lower indices first), each with
 * probability 1/128; the running sum reaches the tiny p at the first, so one entry is
 * left, min-p keeps it, and the program prints index 0 for each of the 48 rows.
 * As in CANN's copy, the attributes are passed from variables of other types (a float
 * eps, an int64_t isNeedLogits, int32_t topKGuess and ksMax), and minPs, logitsIdx,
 * logitsSortMasked and their device blocks are left to aclFinalize.
 */
#include <iostream>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_top_k_top_p_sample_v2.h"

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
  int64_t count = 1;
  for (auto dim : shape) {
    count *= dim;
  }
  return count;
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

// A device copy of hostData and a contiguous ND aclTensor over it.
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
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = shape.size() - 2; i >= 0; i--) {
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

  // Shapes: the vocabulary rows and the per-row parameters.
  std::vector<int64_t> logitsShape = {48, 131072};
  std::vector<int64_t> rowShape = {48};

  void* logitsDeviceAddr = nullptr;
  void* topKDeviceAddr = nullptr;
  void* topPDeviceAddr = nullptr;
  void* qDeviceAddr = nullptr;
  void* minPsDeviceAddr = nullptr;
  void* selectIdxDeviceAddr = nullptr;
  void* selectLogitsDeviceAddr = nullptr;
  void* keptIdxDeviceAddr = nullptr;
  void* keptProbsDeviceAddr = nullptr;
  aclTensor* logits = nullptr;
  aclTensor* topK = nullptr;
  aclTensor* topP = nullptr;
  aclTensor* q = nullptr;
  aclTensor* minPs = nullptr;
  aclTensor* selectIdx = nullptr;
  aclTensor* selectLogits = nullptr;
  aclTensor* keptIdx = nullptr;
  aclTensor* keptProbs = nullptr;

  std::vector<int16_t> hostLogits(48 * 131072, 1);
  std::vector<int32_t> hostTopK(48, 128);
  std::vector<int16_t> hostTopP(48, 1);
  std::vector<float> hostQ(48 * 131072, 1.0f);
  std::vector<int16_t> hostMinPs(48, 1);
  std::vector<int64_t> hostSelectIdx(48, 0);
  std::vector<float> hostSelectLogits(48 * 131072, 0);
  std::vector<int64_t> hostKeptIdx(48 * 131072, 0);
  std::vector<float> hostKeptProbs(48 * 131072, 0);
  float eps = 1e-8;
  int64_t isNeedLogits = 0;
  int32_t topKGuess = 32;
  int32_t ksMax = 1024;
  bool inputIsLogits = true;
  bool isNeedSampleResult = false;

  ret = CreateAclTensor(hostLogits, logitsShape, &logitsDeviceAddr, aclDataType::ACL_BF16,
                        &logits);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret =
      CreateAclTensor(hostTopK, rowShape, &topKDeviceAddr, aclDataType::ACL_INT32, &topK);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret =
      CreateAclTensor(hostTopP, rowShape, &topPDeviceAddr, aclDataType::ACL_BF16, &topP);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(hostQ, logitsShape, &qDeviceAddr, aclDataType::ACL_FLOAT, &q);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(hostMinPs, rowShape, &minPsDeviceAddr, aclDataType::ACL_BF16,
                        &minPs);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(hostSelectIdx, rowShape, &selectIdxDeviceAddr,
                        aclDataType::ACL_INT64, &selectIdx);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(hostSelectLogits, logitsShape, &selectLogitsDeviceAddr,
                        aclDataType::ACL_FLOAT, &selectLogits);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(hostKeptIdx, logitsShape, &keptIdxDeviceAddr,
                        aclDataType::ACL_INT64, &keptIdx);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(hostKeptProbs, logitsShape, &keptProbsDeviceAddr,
                        aclDataType::ACL_FLOAT, &keptProbs);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  // Phase 1: checks and the workspace size; phase 2: the sampling on the stream.
  uint64_t workspaceSize = 0;
  aclOpExecutor* executor;
  ret = aclnnTopKTopPSampleV2GetWorkspaceSize(
      logits, topK, topP, q, minPs, eps, isNeedLogits, topKGuess, ksMax, inputIsLogits,
      isNeedSampleResult, selectIdx, selectLogits, keptIdx, keptProbs, &workspaceSize,
      &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnTopKTopPSampleV2GetWorkspaceSize failed. ERROR: %d\n", ret);
            return ret);
  void* workspaceAddr = nullptr;
  if (workspaceSize > 0) {
    ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS,
              LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret);
              return ret);
  }
  ret = aclnnTopKTopPSampleV2(workspaceAddr, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnTopKTopPSampleV2 failed. ERROR: %d\n", ret);
            return ret);
  ret = aclrtSynchronizeStream(stream);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret);
            return ret);

  // The selected index of each row.
  auto size = GetShapeSize(rowShape);
  std::vector<int64_t> result(size, 0);
  ret = aclrtMemcpy(result.data(), result.size() * sizeof(result[0]), selectIdxDeviceAddr,
                    size * sizeof(result[0]), ACL_MEMCPY_DEVICE_TO_HOST);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret);
            return ret);
  for (int64_t i = 0; i < size; i++) {
    LOG_PRINT("result[%ld] is: %ld\n", (long)i, (long)result[i]);
  }

  aclDestroyTensor(logits);
  aclDestroyTensor(topK);
  aclDestroyTensor(topP);
  aclDestroyTensor(q);
  aclDestroyTensor(selectIdx);
  aclDestroyTensor(selectLogits);
  aclrtFree(logitsDeviceAddr);
  aclrtFree(topKDeviceAddr);
  aclrtFree(topPDeviceAddr);
  aclrtFree(qDeviceAddr);
  aclrtFree(selectIdxDeviceAddr);
  aclrtFree(selectLogitsDeviceAddr);
  if (workspaceSize > 0) {
    aclrtFree(workspaceAddr);
  }
  aclrtDestroyStream(stream);
  aclrtResetDevice(deviceId);
  aclFinalize();
  return 0;
}
