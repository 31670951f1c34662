/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aclnnAdvanceStep, the CANN sample program: a host program written for Ascend, built
 * unchanged against the llmk aclnn layer (docs/aclnn.md):
 *   g++ advance_step.cpp -I $P/include -I $P/include/aclnnop -I $P/include/aclnn \
 *       -L $P/lib64 -lopapi_nn -lopapi_math -lascendcl -lnnopbase
 * numSeqs 8, numQueries 4, blockSize 2; inputTokens, inputPositions, seqLens, slotMapping
 * and blockTables are [8, 1] = 0..7, sampledTokenIds [4, 1] = 0..3. With CANN's formula
 * slot = (flat[pos / 2] + 1 * q) * 2 + pos % 2 it prints 32 lines "mean result[i] is: v":
 * tokens 0 1 2 3 0 0 0 0, positions 0 1 2 3 0 0 0 0, seqLens 1 2 3 4 4 5 6 7,
 * slots 0 3 6 9 -1 -1 -1 -1 (the NPU's kernel leaves some padding rows unwritten).
 */
#include <iostream>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_advance_step.h"

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

void PrintOutResult(std::vector<int64_t>& shape, void** deviceAddr) {
  auto size = GetShapeSize(shape);
  std::vector<int64_t> resultData(size, 0);
  auto ret =
      aclrtMemcpy(resultData.data(), resultData.size() * sizeof(resultData[0]),
                  *deviceAddr, size * sizeof(resultData[0]), ACL_MEMCPY_DEVICE_TO_HOST);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret);
            return );
  for (int64_t i = 0; i < size; i++) {
    LOG_PRINT("mean result[%ld] is: %ld\n", i, resultData[i]);
  }
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

  // 2. The six tensors: all INT64, updated in place.
  std::vector<int64_t> inputShape = {8, 1};
  std::vector<int64_t> input2Shape = {4, 1};
  std::vector<int64_t> inputHostData = {0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<int64_t> input2HostData = {0, 1, 2, 3};
  void* input1DeviceAddr = nullptr;  // inputTokens
  void* input2DeviceAddr = nullptr;  // sampledTokenIds
  void* input3DeviceAddr = nullptr;  // inputPositions
  void* input4DeviceAddr = nullptr;  // seqLens
  void* input5DeviceAddr = nullptr;  // slotMapping
  void* input6DeviceAddr = nullptr;  // blockTables
  aclTensor* input1 = nullptr;
  aclTensor* input2 = nullptr;
  aclTensor* input3 = nullptr;
  aclTensor* input4 = nullptr;
  aclTensor* input5 = nullptr;
  aclTensor* input6 = nullptr;
  ret = CreateAclTensor(inputHostData, inputShape, &input1DeviceAddr,
                        aclDataType::ACL_INT64, &input1);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(input2HostData, input2Shape, &input2DeviceAddr,
                        aclDataType::ACL_INT64, &input2);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(inputHostData, inputShape, &input3DeviceAddr,
                        aclDataType::ACL_INT64, &input3);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(inputHostData, inputShape, &input4DeviceAddr,
                        aclDataType::ACL_INT64, &input4);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(inputHostData, inputShape, &input5DeviceAddr,
                        aclDataType::ACL_INT64, &input5);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(inputHostData, inputShape, &input6DeviceAddr,
                        aclDataType::ACL_INT64, &input6);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  int64_t numseq = 8;
  int64_t numqueries = 4;
  int64_t blocksize = 2;

  // 3. The operator: phase 1 (workspace size and executor), workspace, phase 2.
  uint64_t workspaceSize = 16 * 1024 * 1024;
  aclOpExecutor* executor;
  ret = aclnnAdvanceStepGetWorkspaceSize(input1, input2, input3, input4, input5, input6,
                                         numseq, numqueries, blocksize, &workspaceSize,
                                         &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnAdvanceStepGetWorkspaceSize failed. ERROR: %d\n", ret);
            return ret);
  void* workspaceAddr = nullptr;
  if (workspaceSize > 0) {
    ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS,
              LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret);
              return ret);
  }
  ret = aclnnAdvanceStep(workspaceAddr, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnAdvanceStep failed. ERROR: %d\n", ret);
            return ret);

  // 4. Wait for the stream.
  ret = aclrtSynchronizeStream(stream);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret);
            return ret);

  // 5. inputTokens, inputPositions, seqLens, slotMapping back to the host.
  PrintOutResult(inputShape, &input1DeviceAddr);
  PrintOutResult(inputShape, &input3DeviceAddr);
  PrintOutResult(inputShape, &input4DeviceAddr);
  PrintOutResult(inputShape, &input5DeviceAddr);

  // 6. Tensors.
  aclDestroyTensor(input1);
  aclDestroyTensor(input2);
  aclDestroyTensor(input3);
  aclDestroyTensor(input4);
  aclDestroyTensor(input5);
  aclDestroyTensor(input6);

  // 7. Device memory, stream, device, library.
  aclrtFree(input1DeviceAddr);
  aclrtFree(input2DeviceAddr);
  aclrtFree(input3DeviceAddr);
  aclrtFree(input4DeviceAddr);
  aclrtFree(input5DeviceAddr);
  aclrtFree(input6DeviceAddr);
  if (workspaceSize > 0) {
    aclrtFree(workspaceAddr);
  }
  aclrtDestroyStream(stream);
  aclrtResetDevice(deviceId);
  aclFinalize();

  return 0;
}
