/* SPDX-License-Identifier: Apache-2.0 */
/*
 * llmk aclnn layer: the AscendCL runtime subset that host programs use, on the CPU.
 *
 * One device, id 0. "Device memory" is host memory; streams run synchronously, so work
 * is complete when the call that enqueued it returns, and synchronizing only checks the
 * handle. Every allocation made here is registered: copies and memsets that exceed
 * destMax, or that would leave an allocation they start in, fail with
 * ACL_ERROR_RT_PARAM_INVALID and touch nothing. Every failure leaves a message for
 * aclGetRecentErrMsg(). Details and differences from the NPU: docs/aclnn.md.
 * Valid C and C++.
 */
#ifndef LLMK_ACL_ACL_RT_H
#define LLMK_ACL_ACL_RT_H

#include "acl_base.h"
#include "acl_rt_allocator.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { ACL_DEVICE = 0, ACL_HOST = 1 } aclrtRunMode;

typedef enum {
  ACL_MEMCPY_HOST_TO_HOST = 0,
  ACL_MEMCPY_HOST_TO_DEVICE = 1,
  ACL_MEMCPY_DEVICE_TO_HOST = 2,
  ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
  ACL_MEMCPY_DEFAULT = 4,
  ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE = 5,
  ACL_MEMCPY_INNER_DEVICE_TO_DEVICE = 6,
  ACL_MEMCPY_INTER_DEVICE_TO_DEVICE = 7
} aclrtMemcpyKind;

typedef enum {
  ACL_MEM_MALLOC_HUGE_FIRST = 0,
  ACL_MEM_MALLOC_HUGE_ONLY = 1,
  ACL_MEM_MALLOC_NORMAL_ONLY = 2,
  ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3,
  ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4,
  ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5,
  ACL_MEM_MALLOC_HUGE1G_ONLY = 6,
  ACL_MEM_MALLOC_HUGE1G_ONLY_P2P = 7,
  ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x0100,
  ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000,
  ACL_MEM_ACCESS_USER_SPACE_READONLY = 0x100000
} aclrtMemMallocPolicy;

typedef enum {
  ACL_DDR_MEM = 0,
  ACL_HBM_MEM = 1,
  ACL_DDR_MEM_HUGE = 2,
  ACL_DDR_MEM_NORMAL = 3,
  ACL_HBM_MEM_HUGE = 4,
  ACL_HBM_MEM_NORMAL = 5,
  ACL_DDR_MEM_P2P_HUGE = 6,
  ACL_DDR_MEM_P2P_NORMAL = 7,
  ACL_HBM_MEM_P2P_HUGE = 8,
  ACL_HBM_MEM_P2P_NORMAL = 9
} aclrtMemAttr;

typedef enum {
  ACL_STREAM_STATUS_COMPLETE = 0,
  ACL_STREAM_STATUS_NOT_READY = 1,
  ACL_STREAM_STATUS_RESERVED = 0xFFFF
} aclrtStreamStatus;

/* ------------------------------------------------------------- init, finalize */
/* configPath may be NULL (its content is ignored). A second aclInit without
 * aclFinalize gives ACL_ERROR_REPEAT_INITIALIZE (harmless); aclFinalize after
 * aclFinalize gives ACL_ERROR_REPEAT_FINALIZE, and before any aclInit
 * ACL_ERROR_UNINITIALIZE. aclInit after aclFinalize is allowed. */
ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath);
ACL_FUNC_VISIBILITY aclError aclFinalize(void);

/* -------------------------------------------------------------------- devices */
/* Only device 0 exists: other ids give ACL_ERROR_RT_INVALID_DEVICEID. */
ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtResetDevice(int32_t deviceId);
/* ACL_ERROR_RT_CONTEXT_NULL when this thread has set no device. */
ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t *deviceId);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCount(uint32_t *count);
/* ACL_HOST: the host program drives the (CPU) device. */
ACL_FUNC_VISIBILITY aclError aclrtGetRunMode(aclrtRunMode *runMode);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDevice(void);
/* "Ascend910B4": the SoC the operators' CANN limits are those of. */
ACL_FUNC_VISIBILITY const char *aclrtGetSocName(void);
ACL_FUNC_VISIBILITY aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion,
                                             int32_t *patchVersion);

/* ------------------------------------------------------------------- contexts */
ACL_FUNC_VISIBILITY aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtDestroyContext(aclrtContext context);
ACL_FUNC_VISIBILITY aclError aclrtSetCurrentContext(aclrtContext context);
/* ACL_ERROR_RT_CONTEXT_NULL when this thread has no current context. */
ACL_FUNC_VISIBILITY aclError aclrtGetCurrentContext(aclrtContext *context);

/* -------------------------------------------------------------------- streams */
/* A stream owns the worker threads its operators run on (LLMK_NUM_THREADS, else all
 * online CPUs); the NULL stream is the default stream. Work is done synchronously. */
ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream *stream);
ACL_FUNC_VISIBILITY aclError aclrtCreateStreamWithConfig(aclrtStream *stream,
                                                         uint32_t priority,
                                                         uint32_t flag);
ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream,
                                                               int32_t timeout);
/* Always ACL_STREAM_STATUS_COMPLETE for a valid stream. */
ACL_FUNC_VISIBILITY aclError aclrtStreamQuery(aclrtStream stream,
                                              aclrtStreamStatus *status);

/* --------------------------------------------------------------------- events */
ACL_FUNC_VISIBILITY aclError aclrtCreateEvent(aclrtEvent *event);
ACL_FUNC_VISIBILITY aclError aclrtDestroyEvent(aclrtEvent event);
/* Records the current time (the stream's earlier work is already done). */
ACL_FUNC_VISIBILITY aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEvent(aclrtEvent event);
/* Milliseconds from start's record to end's; both must have been recorded. */
ACL_FUNC_VISIBILITY aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent,
                                                   aclrtEvent endEvent);

/* --------------------------------------------------------------------- memory */
/* size 0 gives ACL_ERROR_INVALID_PARAM; the policy is ignored. Memory is 64-byte
 * aligned and uninitialized. */
ACL_FUNC_VISIBILITY aclError aclrtMalloc(void **devPtr, size_t size,
                                         aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtMallocAlign32(void **devPtr, size_t size,
                                                aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtMallocCached(void **devPtr, size_t size,
                                               aclrtMemMallocPolicy policy);
/* NULL, or a pointer that is not the start of a live aclrtMalloc block, gives
 * ACL_ERROR_INVALID_PARAM and frees nothing. */
ACL_FUNC_VISIBILITY aclError aclrtFree(void *devPtr);
ACL_FUNC_VISIBILITY aclError aclrtMallocHost(void **hostPtr, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtFreeHost(void *hostPtr);

/* Synchronous; `kind` is checked to be a valid value and otherwise ignored.
 * ACL_ERROR_INVALID_PARAM for NULL dst or src; ACL_ERROR_RT_PARAM_INVALID when
 * count > destMax, or when dst or src lies in a block allocated here and the copy would
 * leave it. Overlapping buffers are allowed (memmove). count 0 is a no-op. */
ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void *dst, size_t destMax, const void *src,
                                         size_t count, aclrtMemcpyKind kind);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src,
                                              size_t count, aclrtMemcpyKind kind,
                                              aclrtStream stream);
/* Sets count bytes to (unsigned char)value, with the checks of aclrtMemcpy. */
ACL_FUNC_VISIBILITY aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value,
                                         size_t count);
ACL_FUNC_VISIBILITY aclError aclrtMemsetAsync(void *devPtr, size_t maxCount,
                                              int32_t value, size_t count,
                                              aclrtStream stream);
/* The host's available and total physical memory, for every attr. */
ACL_FUNC_VISIBILITY aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free,
                                             size_t *total);

#ifdef __cplusplus
}
#endif

#endif
