/* SPDX-License-Identifier: Apache-2.0 */
/* CPU feature detection (once) and the ISA in force. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* sched_getaffinity */
#endif
#include <pthread.h>
#if defined(__linux__)
#include <sched.h>
#endif
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"
#include "dispatch/dispatch.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define LLMK__X86 1
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#define LLMK__ARM64_LINUX 1
/* The kernel's HWCAP bits (asm/hwcap.h), spelled out: older sysroots lack the newer ones.
 */
#define LLMK__HWCAP_ASIMD (1UL << 1)
#define LLMK__HWCAP_ASIMDHP (1UL << 10)
#define LLMK__HWCAP_SVE (1UL << 22)
#define LLMK__HWCAP2_BF16 (1UL << 14)
#endif

static llmk__cpu_info cpu;
static llmk_isa native_isa = LLMK_ISA_SCALAR;
#define LLMK__NO_CAP (-1)
static _Atomic int max_isa = LLMK__NO_CAP;
static pthread_once_t detect_once = PTHREAD_ONCE_INIT;
static char feature_string[160];

#ifdef LLMK__X86
static uint64_t xgetbv0(void) {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}
#endif

static void add_feature(bool present, const char *name) {
  if (!present) return;
  size_t len = strlen(feature_string);
  if (len + strlen(name) + 2 >= sizeof feature_string) return;
  if (len) feature_string[len++] = ' ';
  strcpy(feature_string + len, name);
}

static void detect(void) {
#ifdef LLMK__X86
  unsigned a, b, c, d;
  if (__get_cpuid(1, &a, &b, &c, &d)) {
    bool osxsave = (c >> 27) & 1;
    uint64_t xcr0 = osxsave ? xgetbv0() : 0;
    bool ymm = (xcr0 & 0x6) == 0x6;          /* SSE + AVX state */
    bool zmm = ymm && (xcr0 & 0xe0) == 0xe0; /* opmask + ZMM state */
    cpu.fma = ymm && ((c >> 12) & 1);
    cpu.f16c = ymm && ((c >> 29) & 1);
    bool avx = ymm && ((c >> 28) & 1);
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
      cpu.avx2 = avx && ((b >> 5) & 1);
      cpu.avx512f = zmm && ((b >> 16) & 1);
      cpu.avx512dq = zmm && ((b >> 17) & 1);
      cpu.avx512bw = zmm && ((b >> 30) & 1);
      cpu.avx512vl = zmm && ((b >> 31) & 1);
      cpu.avx512fp16 = zmm && ((d >> 23) & 1);
      unsigned a1, b1, c1, d1;
      if (__get_cpuid_count(7, 1, &a1, &b1, &c1, &d1))
        cpu.avx512bf16 = zmm && ((a1 >> 5) & 1);
    }
  }
#endif
#ifdef LLMK__ARM64_LINUX
  unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
  cpu.asimd = (hwcap & LLMK__HWCAP_ASIMD) != 0;
  cpu.asimdhp = (hwcap & LLMK__HWCAP_ASIMDHP) != 0;
  cpu.sve = (hwcap & LLMK__HWCAP_SVE) != 0;
  cpu.bf16 = (hwcap2 & LLMK__HWCAP2_BF16) != 0;
#endif
  add_feature(cpu.asimd, "asimd");
  add_feature(cpu.asimdhp, "fp16");
  add_feature(cpu.bf16, "bf16");
  add_feature(cpu.sve, "sve");
  add_feature(cpu.avx2, "avx2");
  add_feature(cpu.fma, "fma");
  add_feature(cpu.f16c, "f16c");
  add_feature(cpu.avx512f, "avx512f");
  add_feature(cpu.avx512bw, "avx512bw");
  add_feature(cpu.avx512vl, "avx512vl");
  add_feature(cpu.avx512dq, "avx512dq");
  add_feature(cpu.avx512bf16, "avx512bf16");
  add_feature(cpu.avx512fp16, "avx512fp16");

  native_isa = LLMK_ISA_SCALAR;
#if defined(LLMK_HAVE_AVX2)
  if (cpu.avx2 && cpu.fma && cpu.f16c) native_isa = LLMK_ISA_AVX2;
#endif
#if defined(LLMK_HAVE_AVX512)
  if (native_isa == LLMK_ISA_AVX2 && cpu.avx512f && cpu.avx512bw && cpu.avx512vl &&
      cpu.avx512dq)
    native_isa = LLMK_ISA_AVX512;
#endif
#if defined(LLMK_HAVE_NEON)
  if (cpu.asimd) native_isa = LLMK_ISA_NEON;
#endif
  const char *env = getenv("LLMK_ISA");
  if (env && *env) {
    if (!strcmp(env, "scalar"))
      max_isa = LLMK_ISA_SCALAR;
    else if (!strcmp(env, "avx2"))
      max_isa = LLMK_ISA_AVX2;
    else if (!strcmp(env, "avx512"))
      max_isa = LLMK_ISA_AVX512;
    else if (!strcmp(env, "neon"))
      max_isa = LLMK_ISA_NEON;
  }
}

/* An ISA's place in this architecture's order (scalar 0); -1 for another
 * architecture's ISA. */
static int isa_rank(int isa) {
  switch (isa) {
    case LLMK_ISA_SCALAR:
      return 0;
#if defined(__aarch64__)
    case LLMK_ISA_NEON:
      return 1;
#else
    case LLMK_ISA_AVX2:
      return 1;
    case LLMK_ISA_AVX512:
      return 2;
#endif
    default:
      return -1;
  }
}

const llmk__cpu_info *llmk__cpu(void) {
  pthread_once(&detect_once, detect);
  return &cpu;
}

llmk_isa llmk_get_native_isa(void) {
  pthread_once(&detect_once, detect);
  return native_isa;
}

llmk_isa llmk_get_isa(void) {
  pthread_once(&detect_once, detect);
  int m = atomic_load(&max_isa);
  if (m == LLMK__NO_CAP) return native_isa;
  int r = isa_rank(m);
  if (r < 0) return LLMK_ISA_SCALAR;
  /* each architecture's order is cumulative: an ISA below the native one runs too */
  return r < isa_rank((int)native_isa) ? (llmk_isa)m : native_isa;
}

llmk_isa llmk_set_max_isa(llmk_isa isa) {
  pthread_once(&detect_once, detect);
  int v = (int)isa;
  if (v < LLMK_ISA_SCALAR) v = LLMK_ISA_SCALAR;
  if (v > LLMK_ISA_NEON) v = LLMK_ISA_NEON;
  atomic_store(&max_isa, v);
  return llmk_get_isa();
}

const char *llmk_isa_name(llmk_isa isa) {
  switch (isa) {
    case LLMK_ISA_SCALAR:
      return "scalar";
    case LLMK_ISA_AVX2:
      return "avx2";
    case LLMK_ISA_AVX512:
      return "avx512";
    case LLMK_ISA_NEON:
      return "neon";
  }
  return "unknown";
}

const char *llmk_cpu_features(void) {
  pthread_once(&detect_once, detect);
  return feature_string;
}

/* The size of the last cache level that cpu0 sees, as Linux describes it in sysfs (0 if
 * it does not). glibc's sysconf reads CPUID, which in a VM may describe the host's whole
 * L3 (256 MiB here, against the 32 MiB that the guest's CPUs share). */
static size_t sysfs_last_cache_bytes(void) {
  size_t best = 0;
  int best_level = 0;
  for (int i = 0; i < 8; i++) {
    char path[64];
    int level = 0;
    unsigned long size = 0;
    char unit = 0;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    FILE *f = fopen(path, "r");
    if (!f) break;
    int ok = fscanf(f, "%d", &level) == 1;
    fclose(f);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    f = fopen(path, "r");
    if (!f) continue;
    ok = ok && fscanf(f, "%lu%c", &size, &unit) >= 1;
    fclose(f);
    if (!ok || level < best_level) continue;
    size_t bytes = unit == 'K'   ? (size_t)size << 10
                   : unit == 'M' ? (size_t)size << 20
                                 : size;
    if (level > best_level || bytes > best) best = bytes;
    best_level = level;
  }
  return best;
}

/* The last cache level's size, found once: plans are made on every call. */
size_t llmk__last_cache_bytes(void) {
  static _Atomic size_t cached;
  size_t c = atomic_load_explicit(&cached, memory_order_relaxed);
  if (c) return c;
  c = sysfs_last_cache_bytes();
#ifdef _SC_LEVEL3_CACHE_SIZE
  if (!c) {
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (l3 > 0) c = (size_t)l3;
  }
#endif
  if (!c) c = (size_t)32 << 20;
  atomic_store_explicit(&cached, c, memory_order_relaxed);
  return c;
}

int llmk__cpu_count(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : (n > INT32_MAX ? INT32_MAX : (int)n);
}

/* The CPUs this process may run on (taskset, cgroup cpusets, an engine's pinning);
 * the online count where the platform cannot say. */
int llmk__cpu_allowed(void) {
#if defined(__linux__)
  for (int ncpu = 1024; ncpu <= (1 << 20); ncpu *= 4) {
    cpu_set_t *set = CPU_ALLOC((size_t)ncpu);
    if (!set) break;
    size_t sz = CPU_ALLOC_SIZE((size_t)ncpu);
    CPU_ZERO_S(sz, set);
    int r = sched_getaffinity(0, sz, set);
    int n = r == 0 ? CPU_COUNT_S(sz, set) : 0;
    CPU_FREE(set);
    if (r == 0) return n > 0 ? n : 1;
  }
#endif
  return llmk__cpu_count();
}

int llmk__plan_tasks(void) {
  int n = llmk__cpu_allowed();
  return n > LLMK__MAX_TASKS ? LLMK__MAX_TASKS : n;
}
