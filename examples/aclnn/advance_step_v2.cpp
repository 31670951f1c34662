/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aclnnAdvanceStepV2, the CANN sample program (speculative mode), built unchanged against
 * the llmk aclnn layer (docs/aclnn.md):
 *   g++ advance_step_v2.cpp -I $P/include -I $P/include/aclnn -I $P/include/aclnnop \
 *       -L $P/lib64 -lopapi_math -lopapi_transformer -lascendcl -lnnopbase -lc_sec
 * 8 sequences, one draft token each (T = 2), blockSize 8: inputTokens, inputPositions,
 * seqLens, slotMapping [16] = 0..7, 0..7; sampledTokenIds [8, 2] the same data;
 * blockTables [8, 1000] all 7; specToken [8, 1] = 0..7; acceptedNum [8] = 0..7. Results:
 * tokens 1 0 3 1 5 2 7 3 1 4 3 5 5 6 7 7, positions 1 2 4 5 7 8 10 11 5 6 8 9 11 12 14
 * 15, seqLens = positions + 1, slots 57 58 60 61 63 56 58 59 61 62 56 57 59 60 62 63.
 *
 * As CANN's sample does, it reuses device-pointer variables: specToken's and
 * acceptedNum's blocks land in the variables of slotMapping and blockTables (whose blocks
 * are then never freed), and input7/input8DeviceAddr stay NULL. So it prints inputTokens
 * (16 lines), sampledTokenIds unchanged (16), then fails to copy 8000 elements out of
 * inputPositions' 16-element block ("copy result from device to host failed. ERROR:
 * 107000", nothing over-read), prints the first 8 seqLens (2 3 5 6 8 9 11 12) and
 * specToken (0..7), and ends with aclrtFree(NULL) twice, which fail cleanly (100000,
 * ignored).
 */
#include <iostream>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_advance_step_v2.h"

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

  // 2. The eight tensors: all INT64.
  std::vector<int64_t> input1Shape = {16};
  std::vector<int64_t> input2Shape = {8, 2};
  std::vector<int64_t> input3Shape = {8, 1000};
  std::vector<int64_t> input4Shape = {8, 1};
  std::vector<int64_t> input5Shape = {8};
  std::vector<int64_t> input1HostData = {0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<int64_t> input2HostData = {0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<int64_t> input3HostData(8000, 7);
  std::vector<int64_t> input4HostData = {0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<int64_t> input5HostData = {0, 1, 2, 3, 4, 5, 6, 7};
  void* input1DeviceAddr = nullptr;
  void* input2DeviceAddr = nullptr;
  void* input3DeviceAddr = nullptr;
  void* input4DeviceAddr = nullptr;
  void* input5DeviceAddr = nullptr;
  void* input6DeviceAddr = nullptr;
  void* input7DeviceAddr = nullptr;
  void* input8DeviceAddr = nullptr;
  aclTensor* input1 = nullptr;  // inputTokens
  aclTensor* input2 = nullptr;  // sampledTokenIds
  aclTensor* input3 = nullptr;  // inputPositions
  aclTensor* input4 = nullptr;  // seqLens
  aclTensor* input5 = nullptr;  // slotMapping
  aclTensor* input6 = nullptr;  // blockTables
  aclTensor* input7 = nullptr;  // specToken
  aclTensor* input8 = nullptr;  // acceptedNum
  ret = CreateAclTensor(input1HostData, input1Shape, &input1DeviceAddr,
                        aclDataType::ACL_INT64, &input1);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(input2HostData, input2Shape, &input2DeviceAddr,
                        aclDataType::ACL_INT64, &input2);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(input1HostData, input1Shape, &input3DeviceAddr,
                        aclDataType::ACL_INT64, &input3);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(input1HostData, input1Shape, &input4DeviceAddr,
                        aclDataType::ACL_INT64, &input4);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(input1HostData, input1Shape, &input5DeviceAddr,
                        aclDataType::ACL_INT64, &input5);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(input3HostData, input3Shape, &input6DeviceAddr,
                        aclDataType::ACL_INT64, &input6);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  // As in CANN's sample: these two reuse the variables of slotMapping and blockTables.
  ret = CreateAclTensor(input4HostData, input4Shape, &input5DeviceAddr,
                        aclDataType::ACL_INT64, &input7);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(input5HostData, input5Shape, &input6DeviceAddr,
                        aclDataType::ACL_INT64, &input8);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  int64_t numseq = 8;
  int64_t blocksize = 8;

  // 3. The operator: phase 1 (workspace size and executor), workspace, phase 2.
  uint64_t workspaceSize = 16 * 1024 * 1024;
  aclOpExecutor* executor;
  ret = aclnnAdvanceStepV2GetWorkspaceSize(input1, input2, input3, input4, input5, input6,
                                           input7, input8, numseq, numseq, blocksize,
                                           &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnAdvanceStepV2GetWorkspaceSize failed. ERROR: %d\n", ret);
            return ret);
  void* workspaceAddr = nullptr;
  if (workspaceSize > 0) {
    ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS,
              LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret);
              return ret);
  }
  ret = aclnnAdvanceStepV2(workspaceAddr, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnAdvanceStepV2 failed. ERROR: %d\n", ret);
            return ret);

  // 4. Wait for the stream.
  ret = aclrtSynchronizeStream(stream);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret);
            return ret);

  // 5. Results back to the host (shapes and pointers exactly as CANN's sample pairs
  // them).
  PrintOutResult(input1Shape, &input1DeviceAddr);
  PrintOutResult(input2Shape, &input2DeviceAddr);
  PrintOutResult(input3Shape, &input3DeviceAddr);
  PrintOutResult(input4Shape, &input4DeviceAddr);
  PrintOutResult(input5Shape, &input5DeviceAddr);

  // 6. Tensors.
  aclDestroyTensor(input1);
  aclDestroyTensor(input2);
  aclDestroyTensor(input3);
  aclDestroyTensor(input4);
  aclDestroyTensor(input5);
  aclDestroyTensor(input6);
  aclDestroyTensor(input7);
  aclDestroyTensor(input8);

  // 7. Device memory, stream, device, library.
  aclrtFree(input1DeviceAddr);
  aclrtFree(input2DeviceAddr);
  aclrtFree(input3DeviceAddr);
  aclrtFree(input4DeviceAddr);
  aclrtFree(input5DeviceAddr);
  aclrtFree(input6DeviceAddr);
  aclrtFree(input7DeviceAddr);
  aclrtFree(input8DeviceAddr);
  if (workspaceSize > 0) {
    aclrtFree(workspaceAddr);
  }
  aclrtDestroyStream(stream);
  aclrtResetDevice(deviceId);
  aclFinalize();

  return 0;
}
