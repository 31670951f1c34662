/* SPDX-License-Identifier: Apache-2.0 */
/* The AscendCL runtime subset on the CPU: init, devices, contexts, synchronous
 * streams, events, memory with a registry of blocks, error messages, dtype helpers. */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acl_internal.h"

/* ------------------------------------------------------------------- errors */

static _Thread_local char err_msg[1024];

int acl__fail(int code, const char *where, const char *fmt, ...) {
  int n = snprintf(err_msg, sizeof err_msg, "%s: ", where);
  if (n < 0 || (size_t)n >= sizeof err_msg) n = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err_msg + n, sizeof err_msg - (size_t)n, fmt, ap);
  va_end(ap);
  return code;
}

int acl__fail_native(int code) {
  snprintf(err_msg, sizeof err_msg, "%s", llmk_last_error());
  return code;
}

const char *aclGetRecentErrMsg(void) {
  return err_msg;
}

/* ------------------------------------------------------------ dtype helpers */

size_t aclDataTypeSize(aclDataType dataType) {
  switch (dataType) {
    case ACL_INT8:
    case ACL_UINT8:
    case ACL_BOOL:
    case ACL_HIFLOAT8:
    case ACL_FLOAT8_E5M2:
    case ACL_FLOAT8_E4M3FN:
    case ACL_FLOAT8_E8M0:
      return 1;
    case ACL_FLOAT16:
    case ACL_BF16:
    case ACL_INT16:
    case ACL_UINT16:
      return 2;
    case ACL_FLOAT:
    case ACL_INT32:
    case ACL_UINT32:
    case ACL_COMPLEX32:
      return 4;
    case ACL_INT64:
    case ACL_UINT64:
    case ACL_DOUBLE:
    case ACL_COMPLEX64:
      return 8;
    case ACL_COMPLEX128:
      return 16;
    default:
      return 0;
  }
}

float aclFloat16ToFloat(aclFloat16 value) {
  return llmk_f16_to_f32(value);
}
aclFloat16 aclFloatToFloat16(float value) {
  return llmk_f32_to_f16(value);
}

llmk_dtype acl__native_dtype(aclDataType dtype) {
  switch (dtype) {
    case ACL_FLOAT:
      return LLMK_F32;
    case ACL_FLOAT16:
      return LLMK_F16;
    case ACL_BF16:
      return LLMK_BF16;
    case ACL_INT8:
      return LLMK_I8;
    case ACL_UINT8:
      return LLMK_U8;
    case ACL_INT32:
      return LLMK_I32;
    case ACL_INT64:
      return LLMK_I64;
    case ACL_FLOAT8_E4M3FN:
      return LLMK_FP8_E4M3FN;
    case ACL_FLOAT8_E5M2:
      return LLMK_FP8_E5M2;
    default:
      return LLMK_DTYPE_INVALID;
  }
}

bool acl__format_is_nd(aclFormat format) {
  switch (format) {
    case ACL_FORMAT_ND:
    case ACL_FORMAT_NCHW:
    case ACL_FORMAT_NHWC:
    case ACL_FORMAT_NCDHW:
    case ACL_FORMAT_NDHWC:
    case ACL_FORMAT_HWCN:
    case ACL_FORMAT_NC:
    case ACL_FORMAT_NCL:
      return true;
    default:
      return false;
  }
}

/* -------------------------------------------------- init, devices, contexts */

#define HANDLE_CONTEXT 0x78744361u
#define HANDLE_STREAM 0x6d725453u
#define HANDLE_EVENT 0x74764541u

typedef struct rt_context {
  uint32_t magic;
  int32_t device;
} rt_context;

typedef struct rt_stream {
  uint32_t magic;
  pthread_mutex_t run_lock; /* one run at a time per stream: stream order */
  llmk_context *ctx;
  bool ctx_tried;
} rt_stream;

typedef struct rt_event {
  uint32_t magic;
  bool recorded;
  struct timespec when;
} rt_event;

static pthread_mutex_t rt_lock = PTHREAD_MUTEX_INITIALIZER;
static enum { RT_NEVER, RT_INITIALIZED, RT_FINALIZED } rt_state = RT_NEVER;
static llmk__ptrset contexts, streams, events;
static rt_context default_context = {HANDLE_CONTEXT, 0};
static rt_stream default_stream = {HANDLE_STREAM, PTHREAD_MUTEX_INITIALIZER, NULL, false};
static _Thread_local int32_t current_device = -1;
static _Thread_local rt_context *current_context;

aclError aclInit(const char *configPath) {
  (void)configPath;
  pthread_mutex_lock(&rt_lock);
  bool again = rt_state == RT_INITIALIZED;
  rt_state = RT_INITIALIZED;
  pthread_mutex_unlock(&rt_lock);
  if (again)
    return acl__fail(ACL_ERROR_REPEAT_INITIALIZE, "aclInit", "already initialized");
  return ACL_SUCCESS;
}

aclError aclFinalize(void) {
  pthread_mutex_lock(&rt_lock);
  int state = rt_state;
  if (state == RT_INITIALIZED) rt_state = RT_FINALIZED;
  pthread_mutex_unlock(&rt_lock);
  if (state == RT_FINALIZED)
    return acl__fail(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize", "already finalized");
  if (state == RT_NEVER)
    return acl__fail(ACL_ERROR_UNINITIALIZE, "aclFinalize", "aclInit was not called");
  /* The default stream's worker threads go; a later run makes them again. */
  pthread_mutex_lock(&default_stream.run_lock);
  llmk_context_destroy(default_stream.ctx);
  default_stream.ctx = NULL;
  default_stream.ctx_tried = false;
  pthread_mutex_unlock(&default_stream.run_lock);
  return ACL_SUCCESS;
}

static aclError check_device(const char *where, int32_t deviceId) {
  if (deviceId != 0)
    return acl__fail(ACL_ERROR_RT_INVALID_DEVICEID, where,
                     "deviceId=%d: the only device is 0", (int)deviceId);
  return ACL_SUCCESS;
}

aclError aclrtSetDevice(int32_t deviceId) {
  aclError e = check_device("aclrtSetDevice", deviceId);
  if (e) return e;
  current_device = deviceId;
  if (!current_context) current_context = &default_context;
  return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId) {
  aclError e = check_device("aclrtResetDevice", deviceId);
  if (e) return e;
  current_device = -1;
  if (current_context == &default_context) current_context = NULL;
  return ACL_SUCCESS;
}

aclError aclrtGetDevice(int32_t *deviceId) {
  if (!deviceId)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice", "deviceId is NULL");
  if (current_device < 0 && !current_context)
    return acl__fail(ACL_ERROR_RT_CONTEXT_NULL, "aclrtGetDevice",
                     "no device set on this thread (aclrtSetDevice)");
  *deviceId = 0;
  return ACL_SUCCESS;
}

aclError aclrtGetDeviceCount(uint32_t *count) {
  if (!count)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount", "count is NULL");
  *count = 1;
  return ACL_SUCCESS;
}

aclError aclrtGetRunMode(aclrtRunMode *runMode) {
  if (!runMode)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtGetRunMode", "runMode is NULL");
  *runMode = ACL_HOST;
  return ACL_SUCCESS;
}

aclError aclrtSynchronizeDevice(void) {
  return ACL_SUCCESS;
}

const char *aclrtGetSocName(void) {
  return "Ascend910B4";
}

aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion,
                         int32_t *patchVersion) {
  if (!majorVersion || !minorVersion || !patchVersion)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtGetVersion",
                     "an output pointer is NULL");
  *majorVersion = ACL_MAJOR_VERSION;
  *minorVersion = ACL_MINOR_VERSION;
  *patchVersion = ACL_PATCH_VERSION;
  return ACL_SUCCESS;
}

aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId) {
  if (!context)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateContext", "context is NULL");
  aclError e = check_device("aclrtCreateContext", deviceId);
  if (e) return e;
  rt_context *c = malloc(sizeof *c);
  if (!c) return acl__fail(ACL_ERROR_BAD_ALLOC, "aclrtCreateContext", "out of memory");
  c->magic = HANDLE_CONTEXT;
  c->device = deviceId;
  pthread_mutex_lock(&rt_lock);
  bool ok = llmk__ptrset_insert(&contexts, c);
  pthread_mutex_unlock(&rt_lock);
  if (!ok) {
    free(c);
    return acl__fail(ACL_ERROR_BAD_ALLOC, "aclrtCreateContext", "out of memory");
  }
  *context = c;
  current_context = c; /* a new context becomes the thread's current one */
  current_device = deviceId;
  return ACL_SUCCESS;
}

aclError aclrtDestroyContext(aclrtContext context) {
  if (!context)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyContext", "context is NULL");
  pthread_mutex_lock(&rt_lock);
  bool found = llmk__ptrset_remove(&contexts, context);
  if (!contexts.live) llmk__ptrset_clear(&contexts);
  pthread_mutex_unlock(&rt_lock);
  if (!found)
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, "aclrtDestroyContext",
                     "%p is not a live context", context);
  if (current_context == context) current_context = NULL;
  free(context);
  return ACL_SUCCESS;
}

static bool context_is_live(const void *c) {
  if (c == &default_context) return true;
  pthread_mutex_lock(&rt_lock);
  bool found = llmk__ptrset_contains(&contexts, c);
  pthread_mutex_unlock(&rt_lock);
  return found;
}

aclError aclrtSetCurrentContext(aclrtContext context) {
  if (!context)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtSetCurrentContext",
                     "context is NULL");
  if (!context_is_live(context))
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, "aclrtSetCurrentContext",
                     "%p is not a live context", context);
  current_context = context;
  current_device = 0;
  return ACL_SUCCESS;
}

aclError aclrtGetCurrentContext(aclrtContext *context) {
  if (!context)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtGetCurrentContext",
                     "context is NULL");
  if (!current_context)
    return acl__fail(ACL_ERROR_RT_CONTEXT_NULL, "aclrtGetCurrentContext",
                     "no current context on this thread");
  *context = current_context;
  return ACL_SUCCESS;
}

/* -------------------------------------------------------------------- streams */

aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority,
                                     uint32_t flag) {
  (void)priority;
  (void)flag;
  if (!stream)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateStream", "stream is NULL");
  rt_stream *s = calloc(1, sizeof *s);
  if (!s) return acl__fail(ACL_ERROR_BAD_ALLOC, "aclrtCreateStream", "out of memory");
  s->magic = HANDLE_STREAM;
  if (pthread_mutex_init(&s->run_lock, NULL) != 0) {
    free(s);
    return acl__fail(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, "aclrtCreateStream", "no mutex");
  }
  pthread_mutex_lock(&rt_lock);
  bool ok = llmk__ptrset_insert(&streams, s);
  pthread_mutex_unlock(&rt_lock);
  if (!ok) {
    pthread_mutex_destroy(&s->run_lock);
    free(s);
    return acl__fail(ACL_ERROR_BAD_ALLOC, "aclrtCreateStream", "out of memory");
  }
  *stream = s;
  return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream *stream) {
  return aclrtCreateStreamWithConfig(stream, 0, 0);
}

aclError aclrtDestroyStream(aclrtStream stream) {
  if (!stream)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyStream", "stream is NULL");
  pthread_mutex_lock(&rt_lock);
  bool found = llmk__ptrset_remove(&streams, stream);
  if (!streams.live) llmk__ptrset_clear(&streams);
  pthread_mutex_unlock(&rt_lock);
  if (!found)
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, "aclrtDestroyStream",
                     "%p is not a live stream", stream);
  rt_stream *s = stream;
  pthread_mutex_lock(&s->run_lock); /* waits for a run in progress */
  pthread_mutex_unlock(&s->run_lock);
  llmk_context_destroy(s->ctx);
  pthread_mutex_destroy(&s->run_lock);
  s->magic = 0;
  free(s);
  return ACL_SUCCESS;
}

static rt_stream *find_stream(aclrtStream stream) {
  if (!stream) return &default_stream;
  pthread_mutex_lock(&rt_lock);
  bool found = llmk__ptrset_contains(&streams, stream);
  pthread_mutex_unlock(&rt_lock);
  return found ? stream : NULL;
}

static aclError check_stream(const char *where, aclrtStream stream) {
  if (!find_stream(stream))
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, where, "%p is not a live stream",
                     stream);
  return ACL_SUCCESS;
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
  return check_stream("aclrtSynchronizeStream", stream);
}

aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout) {
  (void)timeout;
  return check_stream("aclrtSynchronizeStreamWithTimeout", stream);
}

aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status) {
  if (!status)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtStreamQuery", "status is NULL");
  aclError e = check_stream("aclrtStreamQuery", stream);
  if (e) return e;
  *status = ACL_STREAM_STATUS_COMPLETE;
  return ACL_SUCCESS;
}

aclError acl__stream_acquire(aclrtStream stream, llmk_context **ctx, void **token) {
  rt_stream *s = find_stream(stream);
  if (!s) return ACL_ERROR_RT_INVALID_HANDLE;
  pthread_mutex_lock(&s->run_lock);
  if (!s->ctx && !s->ctx_tried) {
    s->ctx_tried = true;
    /* out of memory: this run is serial, the next one tries again */
    if (llmk_context_create(0, &s->ctx) != LLMK_SUCCESS)
      s->ctx = NULL, s->ctx_tried = false;
  }
  *ctx = s->ctx;
  *token = s;
  return ACL_SUCCESS;
}

void acl__stream_release(void *token) {
  rt_stream *s = token;
  pthread_mutex_unlock(&s->run_lock);
}

/* --------------------------------------------------------------------- events */

aclError aclrtCreateEvent(aclrtEvent *event) {
  if (!event)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateEvent", "event is NULL");
  rt_event *ev = calloc(1, sizeof *ev);
  if (!ev) return acl__fail(ACL_ERROR_BAD_ALLOC, "aclrtCreateEvent", "out of memory");
  ev->magic = HANDLE_EVENT;
  pthread_mutex_lock(&rt_lock);
  bool ok = llmk__ptrset_insert(&events, ev);
  pthread_mutex_unlock(&rt_lock);
  if (!ok) {
    free(ev);
    return acl__fail(ACL_ERROR_BAD_ALLOC, "aclrtCreateEvent", "out of memory");
  }
  *event = ev;
  return ACL_SUCCESS;
}

aclError aclrtDestroyEvent(aclrtEvent event) {
  if (!event)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyEvent", "event is NULL");
  pthread_mutex_lock(&rt_lock);
  bool found = llmk__ptrset_remove(&events, event);
  if (!events.live) llmk__ptrset_clear(&events);
  pthread_mutex_unlock(&rt_lock);
  if (!found)
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, "aclrtDestroyEvent",
                     "%p is not a live event", event);
  free(event);
  return ACL_SUCCESS;
}

/* The live event `event`; caller holds rt_lock (events have no lock of their own). */
static aclError with_event(const char *where, aclrtEvent event, rt_event **out) {
  if (!event) return acl__fail(ACL_ERROR_INVALID_PARAM, where, "event is NULL");
  if (!llmk__ptrset_contains(&events, event))
    return acl__fail(ACL_ERROR_RT_INVALID_HANDLE, where, "%p is not a live event", event);
  *out = event;
  return ACL_SUCCESS;
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
  aclError e = check_stream("aclrtRecordEvent", stream);
  if (e) return e;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  rt_event *ev = NULL;
  pthread_mutex_lock(&rt_lock);
  e = with_event("aclrtRecordEvent", event, &ev);
  if (!e) {
    ev->recorded = true;
    ev->when = now;
  }
  pthread_mutex_unlock(&rt_lock);
  return e;
}

aclError aclrtSynchronizeEvent(aclrtEvent event) {
  rt_event *ev = NULL;
  pthread_mutex_lock(&rt_lock);
  aclError e = with_event("aclrtSynchronizeEvent", event, &ev);
  pthread_mutex_unlock(&rt_lock);
  return e;
}

aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent, aclrtEvent endEvent) {
  static const char *W = "aclrtEventElapsedTime";
  if (!ms) return acl__fail(ACL_ERROR_INVALID_PARAM, W, "ms is NULL");
  rt_event *a = NULL, *b = NULL;
  pthread_mutex_lock(&rt_lock);
  aclError e = with_event(W, startEvent, &a);
  if (!e) e = with_event(W, endEvent, &b);
  double d = 0;
  if (!e && (!a->recorded || !b->recorded))
    e = acl__fail(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, W, "an event was never recorded");
  if (!e) {
    d = (double)(b->when.tv_sec - a->when.tv_sec) * 1e3 +
        (double)(b->when.tv_nsec - a->when.tv_nsec) * 1e-6;
    if (d < 0)
      e = acl__fail(ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL, W, "end before start");
  }
  pthread_mutex_unlock(&rt_lock);
  if (!e) *ms = (float)d;
  return e;
}

/* --------------------------------------------------------------------- memory */

/* Live blocks sorted by base address, so that any pointer can be placed. */
typedef struct block {
  uintptr_t base;
  size_t size;
  bool host;
} block;

static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
static block *blocks;
static size_t num_blocks, cap_blocks;

/* Index of the last block with base <= p, or -1. Caller holds mem_lock. */
static ptrdiff_t block_at_or_below(uintptr_t p) {
  size_t lo = 0, hi = num_blocks;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (blocks[mid].base <= p)
      lo = mid + 1;
    else
      hi = mid;
  }
  return (ptrdiff_t)lo - 1;
}

/* The block containing p, or NULL. Caller holds mem_lock. */
static const block *block_containing(const void *p) {
  ptrdiff_t i = block_at_or_below((uintptr_t)p);
  if (i < 0) return NULL;
  const block *b = &blocks[i];
  return (uintptr_t)p - b->base < b->size ? b : NULL;
}

bool acl__mem_room(const void *p, size_t *room) {
  pthread_mutex_lock(&mem_lock);
  const block *b = block_containing(p);
  if (b) *room = b->size - ((uintptr_t)p - b->base);
  pthread_mutex_unlock(&mem_lock);
  return b != NULL;
}

static aclError mem_alloc(const char *where, void **ptr, size_t size, bool host) {
  if (!ptr)
    return acl__fail(ACL_ERROR_INVALID_PARAM, where, "the output pointer is NULL");
  *ptr = NULL;
  if (size == 0)
    return acl__fail(ACL_ERROR_INVALID_PARAM, where, "size must be greater than 0");
  if (size > SIZE_MAX - 64)
    return acl__fail(ACL_ERROR_BAD_ALLOC, where, "size=%zu is too large", size);
  size_t rounded = (size + 63) / 64 * 64;
  void *p = aligned_alloc(64, rounded);
  if (!p) return acl__fail(ACL_ERROR_BAD_ALLOC, where, "cannot allocate %zu bytes", size);
  pthread_mutex_lock(&mem_lock);
  bool ok = true;
  if (num_blocks == cap_blocks) {
    size_t cap = cap_blocks ? cap_blocks * 2 : 64;
    block *nb = realloc(blocks, cap * sizeof *nb);
    if (nb) {
      blocks = nb;
      cap_blocks = cap;
    } else {
      ok = false;
    }
  }
  if (ok) {
    size_t i = (size_t)(block_at_or_below((uintptr_t)p) + 1);
    memmove(blocks + i + 1, blocks + i, (num_blocks - i) * sizeof *blocks);
    blocks[i] = (block){(uintptr_t)p, size, host};
    num_blocks++;
  }
  pthread_mutex_unlock(&mem_lock);
  if (!ok) {
    free(p);
    return acl__fail(ACL_ERROR_BAD_ALLOC, where, "cannot register the block");
  }
  *ptr = p;
  return ACL_SUCCESS;
}

static aclError mem_free(const char *where, void *ptr, bool host) {
  if (!ptr) return acl__fail(ACL_ERROR_INVALID_PARAM, where, "the pointer is NULL");
  pthread_mutex_lock(&mem_lock);
  ptrdiff_t i = block_at_or_below((uintptr_t)ptr);
  bool found = i >= 0 && blocks[i].base == (uintptr_t)ptr && blocks[i].host == host;
  if (found) {
    memmove(blocks + i, blocks + i + 1, (num_blocks - (size_t)i - 1) * sizeof *blocks);
    num_blocks--;
    if (!num_blocks) {
      free(blocks);
      blocks = NULL;
      cap_blocks = 0;
    }
  }
  pthread_mutex_unlock(&mem_lock);
  if (!found)
    return acl__fail(ACL_ERROR_RT_MEMORY_FREE, where,
                     "%p is not the start of a live block from %s (freed twice?)", ptr,
                     host ? "aclrtMallocHost" : "aclrtMalloc");
  free(ptr);
  return ACL_SUCCESS;
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
  (void)policy;
  return mem_alloc("aclrtMalloc", devPtr, size, false);
}
aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
  (void)policy;
  return mem_alloc("aclrtMallocAlign32", devPtr, size, false);
}
aclError aclrtMallocCached(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
  (void)policy;
  return mem_alloc("aclrtMallocCached", devPtr, size, false);
}
aclError aclrtFree(void *devPtr) {
  return mem_free("aclrtFree", devPtr, false);
}
aclError aclrtMallocHost(void **hostPtr, size_t size) {
  return mem_alloc("aclrtMallocHost", hostPtr, size, true);
}
aclError aclrtFreeHost(void *hostPtr) {
  return mem_free("aclrtFreeHost", hostPtr, true);
}

/* count bytes from p must stay inside the block p starts in (if any). */
static aclError check_range(const char *where, const char *name, const void *p,
                            size_t count) {
  size_t room;
  if (acl__mem_room(p, &room) && count > room)
    return acl__fail(
        ACL_ERROR_RT_PARAM_INVALID, where,
        "%s=%p has %zu bytes left in its allocation, count=%zu would leave it", name, p,
        room, count);
  return ACL_SUCCESS;
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                     aclrtMemcpyKind kind) {
  static const char *W = "aclrtMemcpy";
  if (!dst || !src)
    return acl__fail(ACL_ERROR_INVALID_PARAM, W, "%s is NULL", !dst ? "dst" : "src");
  if ((int)kind < ACL_MEMCPY_HOST_TO_HOST ||
      (int)kind > ACL_MEMCPY_INTER_DEVICE_TO_DEVICE)
    return acl__fail(ACL_ERROR_INVALID_PARAM, W, "kind=%d is not an aclrtMemcpyKind",
                     (int)kind);
  if (count > destMax)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, W, "count=%zu exceeds destMax=%zu",
                     count, destMax);
  aclError e = check_range(W, "dst", dst, count);
  if (!e) e = check_range(W, "src", src, count);
  if (e) return e;
  if (count) memmove(dst, src, count);
  return ACL_SUCCESS;
}

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
                          aclrtMemcpyKind kind, aclrtStream stream) {
  aclError e = check_stream("aclrtMemcpyAsync", stream);
  return e ? e : aclrtMemcpy(dst, destMax, src, count, kind);
}

aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count) {
  static const char *W = "aclrtMemset";
  if (!devPtr) return acl__fail(ACL_ERROR_INVALID_PARAM, W, "devPtr is NULL");
  if (count > maxCount)
    return acl__fail(ACL_ERROR_RT_PARAM_INVALID, W, "count=%zu exceeds maxCount=%zu",
                     count, maxCount);
  aclError e = check_range(W, "devPtr", devPtr, count);
  if (e) return e;
  if (count) memset(devPtr, (unsigned char)value, count);
  return ACL_SUCCESS;
}

aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
                          aclrtStream stream) {
  aclError e = check_stream("aclrtMemsetAsync", stream);
  return e ? e : aclrtMemset(devPtr, maxCount, value, count);
}

aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free_bytes, size_t *total) {
  (void)attr;
  if (!free_bytes || !total)
    return acl__fail(ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo",
                     "an output pointer is NULL");
  long page = sysconf(_SC_PAGESIZE), all = sysconf(_SC_PHYS_PAGES),
       avail = sysconf(_SC_AVPHYS_PAGES);
  if (page <= 0 || all <= 0 || avail < 0)
    return acl__fail(ACL_ERROR_RT_INTERNAL_ERROR, "aclrtGetMemInfo", "sysconf failed");
  *total = (size_t)all * (size_t)page;
  *free_bytes = (size_t)avail * (size_t)page;
  return ACL_SUCCESS;
}
