/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aclnnGatherPaKvCache, the CANN sample program (cacheMode "Norm"): a host program
 * written for Ascend, built unchanged against the llmk aclnn layer (docs/aclnn.md):
 *   g++ gather_pa_kv_cache.cpp -I $P/include -I $P/include/aclnn -I $P/include/aclnnop \
 *       -L $P/lib64 -lopapi_math -lopapi_transformer -lascendcl -lnnopbase -lc_sec
 * keyCache [2, 2, 32, 2] and valueCache [2, 2, 32, 4] f16, every element the bits
 * 0x0001 (2 blocks of 2 slots, 32 heads); blockTables [4, 6] all 1; seqLens [4] all 3
 * (not cumulative, so 12 tokens); seqOffset [4] all 2 (each sequence starts at
 * block-table column 2 / 2 = 1); key [12, 32, 2] and value [12, 32, 4] zeros. Every
 * token is read from block 1, so key and value become all 1; the program prints the
 * first 256 raw int16 values of key.
 */
#include <iostream>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_gather_pa_kv_cache.h"

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

  std::vector<int64_t> keyCacheShape = {2, 2, 32, 2};
  std::vector<int64_t> valueCacheShape = {2, 2, 32, 4};
  std::vector<int64_t> blockTablesShape = {4, 6};
  std::vector<int64_t> seqLensShape = {4};
  std::vector<int64_t> keyShape = {12, 32, 2};
  std::vector<int64_t> valueShape = {12, 32, 4};
  std::vector<int64_t> seqOffsetShape = {4};

  void* keyCacheDeviceAddr = nullptr;
  void* valueCacheDeviceAddr = nullptr;
  void* blockTablesDeviceAddr = nullptr;
  void* seqLensDeviceAddr = nullptr;
  void* keyDeviceAddr = nullptr;
  void* valueDeviceAddr = nullptr;
  void* seqOffsetDeviceAddr = nullptr;
  aclTensor* keyCache = nullptr;
  aclTensor* valueCache = nullptr;
  aclTensor* blockTables = nullptr;
  aclTensor* seqLens = nullptr;
  aclTensor* key = nullptr;
  aclTensor* value = nullptr;
  aclTensor* seqOffset = nullptr;

  std::vector<uint16_t> hostKeyCache(256, 1);
  std::vector<uint16_t> hostValueCache(512, 1);
  std::vector<int32_t> hostBlockTables(24, 1);
  std::vector<int32_t> hostSeqLens(4, 3);
  std::vector<uint16_t> hostKey(768, 0);
  std::vector<uint16_t> hostValue(1536, 0);
  std::vector<int32_t> hostSeqOffset(4, 2);
  char cacheMode[] = "Norm";
  const bool isSeqLensCumsum = false;

  ret = CreateAclTensor(hostKeyCache, keyCacheShape, &keyCacheDeviceAddr,
                        aclDataType::ACL_FLOAT16, &keyCache);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(hostValueCache, valueCacheShape, &valueCacheDeviceAddr,
                        aclDataType::ACL_FLOAT16, &valueCache);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(hostBlockTables, blockTablesShape, &blockTablesDeviceAddr,
                        aclDataType::ACL_INT32, &blockTables);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(hostSeqLens, seqLensShape, &seqLensDeviceAddr,
                        aclDataType::ACL_INT32, &seqLens);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret =
      CreateAclTensor(hostKey, keyShape, &keyDeviceAddr, aclDataType::ACL_FLOAT16, &key);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(hostValue, valueShape, &valueDeviceAddr, aclDataType::ACL_FLOAT16,
                        &value);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(hostSeqOffset, seqOffsetShape, &seqOffsetDeviceAddr,
                        aclDataType::ACL_INT32, &seqOffset);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  // Phase 1: checks and the workspace size; phase 2: the gather on the stream.
  uint64_t workspaceSize = 0;
  aclOpExecutor* executor;
  ret = aclnnGatherPaKvCacheGetWorkspaceSize(keyCache, valueCache, blockTables, seqLens,
                                             key, value, seqOffset, cacheMode,
                                             isSeqLensCumsum, &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnGatherPaKvCacheGetWorkspaceSize failed. ERROR: %d\n", ret);
            return ret);
  void* workspaceAddr = nullptr;
  if (workspaceSize > 0) {
    ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS,
              LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret);
              return ret);
  }
  ret = aclnnGatherPaKvCache(workspaceAddr, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnGatherPaKvCache failed. ERROR: %d\n", ret);
            return ret);
  ret = aclrtSynchronizeStream(stream);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret);
            return ret);

  // The first 256 elements of key, as raw 16-bit values.
  auto size = 256;
  std::vector<uint16_t> result(size, 0);
  ret = aclrtMemcpy(result.data(), result.size() * sizeof(result[0]), keyDeviceAddr,
                    size * sizeof(result[0]), ACL_MEMCPY_DEVICE_TO_HOST);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret);
            return ret);
  for (int64_t i = 0; i < size; i++) {
    LOG_PRINT("result[%ld] is: %d\n", i, result[i]);
  }

  aclDestroyTensor(keyCache);
  aclDestroyTensor(valueCache);
  aclDestroyTensor(blockTables);
  aclDestroyTensor(seqLens);
  aclDestroyTensor(key);
  aclDestroyTensor(value);
  aclDestroyTensor(seqOffset);
  aclrtFree(keyCacheDeviceAddr);
  aclrtFree(valueCacheDeviceAddr);
  aclrtFree(blockTablesDeviceAddr);
  aclrtFree(seqLensDeviceAddr);
  aclrtFree(keyDeviceAddr);
  aclrtFree(valueDeviceAddr);
  aclrtFree(seqOffsetDeviceAddr);
  if (workspaceSize > 0) {
    aclrtFree(workspaceAddr);
  }
  aclrtDestroyStream(stream);
  aclrtResetDevice(deviceId);
  aclFinalize();
  return 0;
}
