/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aclnnApplyTopKTopP, the CANN sample program: a host program written for Ascend,
 * built unchanged against the llmk aclnn layer (docs/aclnn.md):
 *   g++ apply_top_k_top_p.cpp -I $P/include -I $P/include/aclnnop -I $P/include/aclnn \
 *       -L $P/lib64 -lopapi_nn -lopapi_math -lascendcl -lnnopbase
 * logits [3, 4] = 1..12, p = {0.2, 0.4, 0.6}, k = {1, 2, 3}: every result is -inf except
 * result[3] = 4, result[7] = 8 and result[11] = 12.
 */
#include <iostream>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_apply_top_k_top_p.h"

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

template <typename T>
int CreateAclTensor(const std::vector<T>& hostData, const std::vector<int64_t>& shape,
                    void** deviceAddr, aclDataType dataType, aclTensor** tensor) {
  auto size = GetShapeSize(shape) * sizeof(T);
  // Device memory, then the host data copied into it.
  auto ret = aclrtMalloc(deviceAddr, size, ACL_MEM_MALLOC_HUGE_FIRST);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret);
            return ret);
  ret = aclrtMemcpy(*deviceAddr, size, hostData.data(), size, ACL_MEMCPY_HOST_TO_DEVICE);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMemcpy failed. ERROR: %d\n", ret);
            return ret);

  // Contiguous strides.
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
  // 1. Device and stream.
  int32_t deviceId = 0;
  aclrtStream stream;
  auto ret = Init(deviceId, &stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret);
            return ret);

  // 2. Inputs and output.
  std::vector<int64_t> logitsShape = {3, 4};
  std::vector<int64_t> pShape = {3};
  std::vector<int64_t> kShape = {3};
  std::vector<int64_t> outShape = {3, 4};
  void* logitsDeviceAddr = nullptr;
  void* pDeviceAddr = nullptr;
  void* kDeviceAddr = nullptr;
  void* outDeviceAddr = nullptr;
  aclTensor* logits = nullptr;
  aclTensor* p = nullptr;
  aclTensor* k = nullptr;
  aclTensor* out = nullptr;
  std::vector<float> logitsHostData = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  std::vector<float> pHostData = {0.2, 0.4, 0.6};
  std::vector<int32_t> kHostData = {1, 2, 3};
  std::vector<float> outHostData(12, 0);
  ret = CreateAclTensor(logitsHostData, logitsShape, &logitsDeviceAddr,
                        aclDataType::ACL_FLOAT, &logits);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(pHostData, pShape, &pDeviceAddr, aclDataType::ACL_FLOAT, &p);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(kHostData, kShape, &kDeviceAddr, aclDataType::ACL_INT32, &k);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(outHostData, outShape, &outDeviceAddr, aclDataType::ACL_FLOAT,
                        &out);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  // 3. The operator: phase 1 (workspace size and executor), workspace, phase 2.
  uint64_t workspaceSize = 0;
  aclOpExecutor* executor;
  ret = aclnnApplyTopKTopPGetWorkspaceSize(logits, p, k, out, &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnApplyTopKTopPGetWorkspaceSize failed. ERROR: %d\n", ret);
            return ret);
  void* workspaceAddr = nullptr;
  if (workspaceSize > 0) {
    ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS,
              LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret);
              return ret);
  }
  ret = aclnnApplyTopKTopP(workspaceAddr, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnApplyTopKTopP failed. ERROR: %d\n", ret);
            return ret);

  // 4. Wait for the stream.
  ret = aclrtSynchronizeStream(stream);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret);
            return ret);

  // 5. Copy the result back to the host and print it.
  auto size = GetShapeSize(outShape);
  std::vector<float> resultData(size, 0);
  ret =
      aclrtMemcpy(resultData.data(), resultData.size() * sizeof(resultData[0]),
                  outDeviceAddr, size * sizeof(resultData[0]), ACL_MEMCPY_DEVICE_TO_HOST);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret);
            return ret);
  for (int64_t i = 0; i < size; i++) {
    LOG_PRINT("result[%ld] is: %f\n", i, resultData[i]);
  }

  // 6. Tensors.
  aclDestroyTensor(logits);
  aclDestroyTensor(p);
  aclDestroyTensor(k);
  aclDestroyTensor(out);

  // 7. Device memory, stream, device, library.
  aclrtFree(logitsDeviceAddr);
  aclrtFree(pDeviceAddr);
  aclrtFree(kDeviceAddr);
  aclrtFree(outDeviceAddr);
  if (workspaceSize > 0) {
    aclrtFree(workspaceAddr);
  }
  aclrtDestroyStream(stream);
  aclrtResetDevice(deviceId);
  aclFinalize();

  return 0;
}
