/* SPDX-License-Identifier: Apache-2.0 */
/*
 * aclnnScatterPaKvCache, the CANN sample program (the PA_NZ example): a host program
 * written for Ascend, built unchanged against the llmk aclnn layer (docs/aclnn.md):
 *   g++ scatter_pa_kv_cache.cpp -I $P/include -I $P/include/aclnn -I $P/include/aclnnop \
 *       -L $P/lib64 -lopapi_math -lopapi_transformer -lascendcl -lnnopbase -lc_sec
 * key and value [2, 2, 32] f16 zeros, caches [1, 4, 32, 16] (NZ: 64 channels in 4 groups
 * of ld = 16, block size 32) filled with the bits 0x0001, slots 0 and 1: in each cache,
 * for each group c in 0..3, elements c*512 + 0..31 (rows 0 and 1) become 0 and the
 * other 1920 stay 1. It prints the 2048 raw int16 values of each cache.
 */
#include <iostream>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_scatter_pa_kv_cache.h"

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
                    void** deviceAddr, aclDataType dataType, aclTensor** tensor,
                    aclFormat format) {
  auto size = GetShapeSize(shape) * sizeof(T);
  auto ret = aclrtMalloc(deviceAddr, size, ACL_MEM_MALLOC_HUGE_FIRST);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret);
            return ret);
  ret = aclrtMemcpy(*deviceAddr, size, hostData.data(), size, ACL_MEMCPY_HOST_TO_DEVICE);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMemcpy failed. ERROR: %d\n", ret);
            return ret);
  // Row-major strides of a contiguous tensor.
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = shape.size() - 2; i >= 0; i--) {
    strides[i] = shape[i + 1] * strides[i + 1];
  }
  *tensor = aclCreateTensor(shape.data(), shape.size(), dataType, strides.data(), 0,
                            format, shape.data(), shape.size(), *deviceAddr);
  return 0;
}

int main() {
  int32_t deviceId = 0;
  aclrtStream stream;
  auto ret = Init(deviceId, &stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret);
            return ret);

  std::vector<int64_t> keyShape = {2, 2, 32};
  std::vector<int64_t> keyCacheShape = {1, 4, 32, 16};
  std::vector<int64_t> slotMappingShape = {2};
  std::vector<int64_t> valueShape = {2, 2, 32};
  std::vector<int64_t> valueCacheShape = {1, 4, 32, 16};

  void* keyDeviceAddr = nullptr;
  void* valueDeviceAddr = nullptr;
  void* slotMappingDeviceAddr = nullptr;
  void* keyCacheDeviceAddr = nullptr;
  void* valueCacheDeviceAddr = nullptr;
  aclTensor* key = nullptr;
  aclTensor* value = nullptr;
  aclTensor* slotMapping = nullptr;
  aclTensor* keyCache = nullptr;
  aclTensor* valueCache = nullptr;
  aclTensor* compressLens = nullptr;
  aclTensor* compressSeqOffset = nullptr;
  aclTensor* seqLens = nullptr;
  char* cacheMode = "PA_NZ";
  char* scatterMode = "None";

  std::vector<int16_t> hostKey(128, 0);
  std::vector<int16_t> hostValue(128, 0);
  std::vector<int32_t> hostSlotMapping = {0, 1};
  std::vector<int16_t> hostKeyCacheRef(2048, 1);
  std::vector<int16_t> hostValueCacheRef(2048, 1);
  std::vector<int64_t> hostStrides(2, 1);
  std::vector<int64_t> hostOffsets(2, 0);

  ret = CreateAclTensor(hostKey, keyShape, &keyDeviceAddr, aclDataType::ACL_FLOAT16, &key,
                        aclFormat::ACL_FORMAT_ND);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(hostValue, valueShape, &valueDeviceAddr, aclDataType::ACL_FLOAT16,
                        &value, aclFormat::ACL_FORMAT_ND);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(hostSlotMapping, slotMappingShape, &slotMappingDeviceAddr,
                        aclDataType::ACL_INT32, &slotMapping, aclFormat::ACL_FORMAT_ND);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(hostKeyCacheRef, keyCacheShape, &keyCacheDeviceAddr,
                        aclDataType::ACL_FLOAT16, &keyCache, aclFormat::ACL_FORMAT_ND);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(hostValueCacheRef, valueCacheShape, &valueCacheDeviceAddr,
                        aclDataType::ACL_FLOAT16, &valueCache, aclFormat::ACL_FORMAT_ND);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  aclIntArray* strides = aclCreateIntArray(hostStrides.data(), 2);
  CHECK_RET(strides != nullptr, return ACL_ERROR_INTERNAL_ERROR);
  aclIntArray* offsets = aclCreateIntArray(hostOffsets.data(), 2);
  CHECK_RET(offsets != nullptr, return ACL_ERROR_INTERNAL_ERROR);

  uint64_t workspaceSize = 0;
  aclOpExecutor* executor;
  ret = aclnnScatterPaKvCacheGetWorkspaceSize(
      key, keyCache, slotMapping, value, valueCache, compressLens, compressSeqOffset,
      seqLens, cacheMode, scatterMode, strides, offsets, &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnScatterPaKvCacheGetWorkspaceSize failed. ERROR: %d\n", ret);
            return ret);
  void* workspaceAddr = nullptr;
  if (workspaceSize > 0) {
    ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS,
              LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret);
              return ret);
  }
  ret = aclnnScatterPaKvCache(workspaceAddr, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnScatterPaKvCache failed. ERROR: %d\n", ret);
            return ret);
  ret = aclrtSynchronizeStream(stream);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret);
            return ret);

  auto size = GetShapeSize(keyCacheShape);
  std::vector<int16_t> keyResult(size, 0);
  ret = aclrtMemcpy(keyResult.data(), keyResult.size() * sizeof(keyResult[0]),
                    keyCacheDeviceAddr, size * sizeof(keyResult[0]),
                    ACL_MEMCPY_DEVICE_TO_HOST);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret);
            return ret);
  for (int64_t i = 0; i < size; i++) {
    LOG_PRINT("keyCache[%ld] is: %d\n", i, keyResult[i]);
  }
  std::vector<int16_t> valueResult(size, 0);
  ret = aclrtMemcpy(valueResult.data(), valueResult.size() * sizeof(valueResult[0]),
                    valueCacheDeviceAddr, size * sizeof(valueResult[0]),
                    ACL_MEMCPY_DEVICE_TO_HOST);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret);
            return ret);
  for (int64_t i = 0; i < size; i++) {
    LOG_PRINT("valueCache[%ld] is: %d\n", i, valueResult[i]);
  }

  aclDestroyTensor(key);
  aclDestroyTensor(value);
  aclDestroyTensor(slotMapping);
  aclDestroyTensor(keyCache);
  aclDestroyTensor(valueCache);
  aclDestroyTensor(compressLens);
  aclDestroyTensor(compressSeqOffset);
  aclDestroyTensor(seqLens);
  aclDestroyIntArray(strides);
  aclDestroyIntArray(offsets);
  aclrtFree(keyDeviceAddr);
  aclrtFree(valueDeviceAddr);
  aclrtFree(slotMappingDeviceAddr);
  aclrtFree(keyCacheDeviceAddr);
  aclrtFree(valueCacheDeviceAddr);
  if (workspaceSize > 0) {
    aclrtFree(workspaceAddr);
  }
  aclrtDestroyStream(stream);
  aclrtResetDevice(deviceId);
  aclFinalize();
  return 0;
}
