# SPDX-License-Identifier: Apache-2.0
"""Loading libllmk, tensor descriptors, errors, contexts and workspaces (ctypes only)."""

import ctypes
import ctypes.util
import os
import sys
import threading

__all__ = [
    "Error", "Context", "view", "library_path", "load_library",
    "DTYPES", "STATUS_NAMES",
]

# ----------------------------------------------------------------------------- constants

# llmk_dtype values (include/llmk/types.h); stable, only appended.
F32, F16, BF16, I8, U8, I32, I64, FP8_E4M3FN, FP8_E5M2 = range(1, 10)
DTYPES = {
    "f32": F32, "f16": F16, "bf16": BF16, "i8": I8, "u8": U8, "i32": I32, "i64": I64,
    "fp8_e4m3fn": FP8_E4M3FN, "fp8_e5m2": FP8_E5M2,
}
_DTYPE_NAME = {v: k for k, v in DTYPES.items()}
_DTYPE_SIZE = {F32: 4, F16: 2, BF16: 2, I8: 1, U8: 1, I32: 4, I64: 8,
               FP8_E4M3FN: 1, FP8_E5M2: 1}
# Aliases accepted by view() and the dtype= arguments.
_DTYPE_ALIASES = {
    "float32": F32, "float": F32, "float16": F16, "half": F16, "bfloat16": BF16,
    "int8": I8, "uint8": U8, "int32": I32, "int": I32, "int64": I64, "long": I64,
    "float8_e4m3fn": FP8_E4M3FN, "e4m3fn": FP8_E4M3FN, "float8_e5m2": FP8_E5M2,
    "e5m2": FP8_E5M2,
}

STATUS_NAMES = {
    0: "LLMK_SUCCESS", 1: "LLMK_ERROR_NULL_POINTER", 2: "LLMK_ERROR_INVALID_DTYPE",
    3: "LLMK_ERROR_INVALID_SHAPE", 4: "LLMK_ERROR_INVALID_ATTRIBUTE",
    5: "LLMK_ERROR_INVALID_VALUE", 6: "LLMK_ERROR_WORKSPACE_TOO_SMALL",
    7: "LLMK_ERROR_INVALID_PLAN", 8: "LLMK_ERROR_OUT_OF_MEMORY",
    9: "LLMK_ERROR_UNSUPPORTED", 10: "LLMK_ERROR_INTERNAL", 11: "LLMK_ERROR_OVERLAP",
}

MAX_RANK = 8


class Error(RuntimeError):
    """A failed llmk call. ``status`` is the numeric llmk_status, ``status_name`` its
    name (e.g. ``"LLMK_ERROR_INVALID_VALUE"``), ``message`` the text of
    llmk_last_error() (it names the op, the argument and the values)."""

    def __init__(self, status, message):
        self.status = int(status)
        self.status_name = STATUS_NAMES.get(self.status, "LLMK_STATUS_%d" % self.status)
        self.message = message
        super().__init__("%s: %s" % (self.status_name, message))


# ----------------------------------------------------------------------------- structs

class _Tensor(ctypes.Structure):
    """struct llmk_tensor."""
    _fields_ = [
        ("dtype", ctypes.c_int),
        ("rank", ctypes.c_int32),
        ("shape", ctypes.c_int64 * MAX_RANK),
        ("strides", ctypes.c_int64 * MAX_RANK),
        ("data", ctypes.c_void_p),
    ]


class ConvOptions(ctypes.Structure):
    """struct llmk_causal_conv1d_options."""
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("state_align", ctypes.c_int),
        ("has_initial_state", ctypes.POINTER(_Tensor)),
        ("cache_seqlens", ctypes.POINTER(_Tensor)),
        ("y", ctypes.POINTER(_Tensor)),
    ]


_TP = ctypes.POINTER(_Tensor)
_PLANP = ctypes.c_void_p
_SIZEP = ctypes.POINTER(ctypes.c_size_t)

# ----------------------------------------------------------------------------- library

_lib = None
_lib_path = None
_lib_lock = threading.Lock()


def _candidates():
    env = os.environ.get("LLMK_LIBRARY")
    if env:
        yield env
        return  # an explicit choice: nothing else is tried
    here = os.path.dirname(os.path.abspath(__file__))
    # the copy pip install / pip wheel put inside the package (setup.py)
    yield os.path.join(here, "libllmk.so")
    # python/llmk/ inside the source tree: the usual build folders of the checkout.
    root = os.path.dirname(os.path.dirname(here))
    for build in ("build", "build-release", "_build", "build/python-cmake"):
        yield os.path.join(root, build, "libllmk.so")
    # ldconfig's cache: finds a runtime-only install (libllmk.so.MAJOR.MINOR, no dev link)
    found = ctypes.util.find_library("llmk")
    if found:
        yield found
    yield "libllmk.so"


def _declare(lib):
    c = ctypes
    i64, sz = c.c_int64, c.c_size_t

    def fn(name, restype, *args):
        f = getattr(lib, name)
        f.restype = restype
        f.argtypes = list(args)

    fn("llmk_status_string", c.c_char_p, c.c_int)
    fn("llmk_last_error", c.c_char_p)
    fn("llmk_dtype_size", sz, c.c_int)
    fn("llmk_dtype_name", c.c_char_p, c.c_int)
    fn("llmk_context_create", c.c_int, c.c_int, c.POINTER(c.c_void_p))
    fn("llmk_context_destroy", None, c.c_void_p)
    fn("llmk_context_num_threads", c.c_int, c.c_void_p)
    fn("llmk_threading_runtime", c.c_char_p)
    fn("llmk_plan_set_repeatable", c.c_int, c.c_void_p)
    fn("llmk_plan_destroy", c.c_int, c.c_void_p)
    fn("llmk_version", c.c_uint)
    fn("llmk_version_string", c.c_char_p)
    fn("llmk_get_isa", c.c_int)
    fn("llmk_get_native_isa", c.c_int)
    fn("llmk_set_max_isa", c.c_int, c.c_int)
    fn("llmk_isa_name", c.c_char_p, c.c_int)
    fn("llmk_cpu_features", c.c_char_p)
    run = (c.c_void_p, sz, c.c_void_p, c.c_void_p)
    pp = c.POINTER(c.c_void_p)
    fn("llmk_advance_step_get_workspace_size", c.c_int, _TP, _TP, _TP, _TP, _TP, _TP, _TP,
       _TP, i64, i64, i64, _SIZEP, pp)
    fn("llmk_advance_step", c.c_int, *run)
    fn("llmk_scatter_pa_kv_cache_get_workspace_size", c.c_int, _TP, _TP, _TP, _TP, _TP, _TP,
       _TP, c.c_int, _SIZEP, pp)
    fn("llmk_scatter_pa_kv_cache", c.c_int, *run)
    fn("llmk_gather_pa_kv_cache_get_workspace_size", c.c_int, _TP, _TP, _TP, _TP, _TP, _TP,
       _TP, _TP, c.c_int, _SIZEP, pp)
    fn("llmk_gather_pa_kv_cache", c.c_int, *run)
    fn("llmk_apply_top_k_top_p_get_workspace_size", c.c_int, _TP, _TP, _TP, _TP, _SIZEP, pp)
    fn("llmk_apply_top_k_top_p_min_p_get_workspace_size", c.c_int, _TP, _TP, _TP, _TP, _TP,
       _TP, _SIZEP, pp)
    fn("llmk_apply_top_k_top_p_with_sorted_get_workspace_size", c.c_int, _TP, _TP, _TP, _TP,
       _TP, _TP, _SIZEP, pp)
    fn("llmk_sample_top_k_top_p_get_workspace_size", c.c_int, _TP, _TP, _TP, _TP, _TP, _TP,
       _TP, _TP, _SIZEP, pp)
    fn("llmk_apply_top_k_top_p", c.c_int, *run)
    fn("llmk_fused_causal_conv1d_get_workspace_size", c.c_int, _TP, _TP, _TP, _TP, _TP, _TP,
       _TP, _TP, _TP, _TP, _TP, i64, i64, i64, i64, i64, c.c_int, _SIZEP, pp)
    fn("llmk_fused_causal_conv1d_v2_get_workspace_size", c.c_int, _TP, _TP, _TP, _TP, _TP,
       _TP, _TP, _TP, _TP, _TP, _TP, i64, i64, i64, i64, i64, c.c_int,
       c.POINTER(ConvOptions), _SIZEP, pp)
    fn("llmk_fused_causal_conv1d", c.c_int, *run)


def load_library(path=None):
    """Loads libllmk (once) and returns the ctypes.CDLL. Search order: ``path``, the
    environment variable LLMK_LIBRARY, the package's own libllmk.so (pip install),
    ``build/libllmk.so`` of the source tree this package sits in,
    ``ctypes.util.find_library('llmk')``, then ``libllmk.so`` on the dynamic loader's
    path."""
    global _lib, _lib_path
    if _lib is not None and path is None:
        return _lib
    with _lib_lock:
        if _lib is not None and path is None:
            return _lib
        tried = []
        for cand in ([path] if path else _candidates()):
            if os.sep in cand and not os.path.exists(cand):
                tried.append("%s (not found)" % cand)
                continue
            try:
                lib = ctypes.CDLL(cand)
            except OSError as e:
                tried.append("%s (%s)" % (cand, e))
                continue
            _declare(lib)
            _lib, _lib_path = lib, cand
            if sys.modules.get(__package__ + "._fast") is not None:
                _bind_fast(lib)  # load_library(path) again: the C module follows
            return lib
        raise OSError("llmk: cannot load libllmk.so; set LLMK_LIBRARY to its path. Tried: "
                      + "; ".join(tried))


def library_path():
    """The path libllmk was loaded from (loading it if needed)."""
    load_library()
    return _lib_path


def lib():
    return _lib if _lib is not None else load_library()


def _check(st):
    if st != 0:
        raise Error(st, (lib().llmk_last_error() or b"").decode("utf-8", "replace"))


# ----------------------------------------------------------------------------- tensors

class _View:
    """An array with an explicit llmk dtype (made by view())."""
    __slots__ = ("obj", "dtype")

    def __init__(self, obj, dtype):
        self.obj = obj
        self.dtype = dtype


def _dtype_code(dtype):
    if isinstance(dtype, int):
        if dtype not in _DTYPE_SIZE:
            raise ValueError("llmk: unknown dtype %r" % (dtype,))
        return dtype
    name = str(dtype)
    for prefix in ("torch.", "numpy.", "np."):
        if name.startswith(prefix):
            name = name[len(prefix):]
    code = DTYPES.get(name) or _DTYPE_ALIASES.get(name)
    if code is None:
        raise ValueError("llmk: unknown dtype %r" % (dtype,))
    return code


def view(array, dtype):
    """Passes ``array`` (torch tensor or NumPy array) to llmk as ``dtype`` ("bf16",
    "fp8_e4m3fn", "fp8_e5m2", ... or an LLMK_* value) without copying. The element size
    must match: a uint16 array as bf16, a uint8 tensor as an fp8 cache."""
    code = _dtype_code(dtype)
    _, esz = _probe(array)
    if esz != _DTYPE_SIZE[code]:
        raise ValueError("llmk.view: a %d-byte element cannot be viewed as %s"
                         % (esz, _DTYPE_NAME[code]))
    return _View(array, code)


_TORCH_DTYPES = None


def _torch_dtypes():
    global _TORCH_DTYPES
    if _TORCH_DTYPES is None:
        import torch
        m = {torch.float32: F32, torch.float16: F16, torch.bfloat16: BF16, torch.int8: I8,
             torch.uint8: U8, torch.int32: I32, torch.int64: I64}
        for name, code in (("float8_e4m3fn", FP8_E4M3FN), ("float8_e5m2", FP8_E5M2)):
            if hasattr(torch, name):
                m[getattr(torch, name)] = code
        _TORCH_DTYPES = m
    return _TORCH_DTYPES


_NUMPY_DTYPES = {"float32": F32, "float16": F16, "int8": I8, "uint8": U8, "int32": I32,
                 "int64": I64, "bfloat16": BF16,  # ml_dtypes, if a caller has it
                 "float8_e4m3fn": FP8_E4M3FN, "float8_e5m2": FP8_E5M2}


def _kind(obj):
    t = sys.modules.get("torch")
    if t is not None and isinstance(obj, t.Tensor):
        return "torch"
    n = sys.modules.get("numpy")
    if n is not None and isinstance(obj, n.ndarray):
        return "numpy"
    return None


def _probe(obj):
    k = _kind(obj)
    if k == "torch":
        return k, obj.element_size()
    if k == "numpy":
        return k, obj.itemsize
    raise TypeError("llmk: expected a torch tensor or a NumPy array, got %s" % type(obj).__name__)


def _fill(t, code, shape, strides, ptr, what):
    rank = len(shape)
    if rank > MAX_RANK:
        raise ValueError("llmk: %s has rank %d > %d" % (what, rank, MAX_RANK))
    t.dtype = code
    t.rank = rank
    t.shape[:rank] = shape
    t.strides[:rank] = strides
    t.data = ptr


def tensor(obj, what="tensor", writable=False, dtype=None):
    """An llmk_tensor descriptor over obj's memory (no copy); None stays None."""
    if obj is None:
        return None
    if isinstance(obj, _View):
        dtype, obj = obj.dtype, obj.obj
    k = _kind(obj)
    t = _Tensor()
    if k == "torch":
        if obj.device.type != "cpu":
            raise ValueError("llmk: %s is on %s; llmk runs on CPU tensors" % (what, obj.device))
        if obj.layout is not sys.modules["torch"].strided:
            raise ValueError("llmk: %s is not a strided (dense) tensor" % what)
        if dtype is None:
            code = _torch_dtypes().get(obj.dtype)
            if code is None:
                raise TypeError("llmk: %s has dtype %s, which llmk does not take"
                                % (what, obj.dtype))
        else:
            code = dtype
        _fill(t, code, tuple(obj.shape), obj.stride(), obj.data_ptr() or None, what)
        return t
    if k == "numpy":
        if writable and not obj.flags.writeable:
            raise ValueError("llmk: %s is a read-only NumPy array" % what)
        if dtype is None:
            code = _NUMPY_DTYPES.get(obj.dtype.name)
            if code is None or not obj.dtype.isnative:
                raise TypeError("llmk: %s has dtype %s, which llmk does not take "
                                "(bf16 / fp8: pass llmk.view(array, 'bf16'))" % (what, obj.dtype))
        else:
            code = dtype
        isz = obj.itemsize
        strides = []
        for s in obj.strides:
            if s < 0:
                raise ValueError("llmk: %s has a negative stride; llmk takes non-negative "
                                 "strides" % what)
            if s % isz:
                raise ValueError("llmk: %s has a stride of %d bytes, not a multiple of its "
                                 "%d-byte element" % (what, s, isz))
            strides.append(s // isz)
        _fill(t, code, obj.shape, strides, obj.ctypes.data or None, what)
        return t
    raise TypeError("llmk: %s must be a torch tensor or a NumPy array, got %s"
                    % (what, type(obj).__name__))


_CT = {F32: ctypes.c_float, I32: ctypes.c_int32, I64: ctypes.c_int64}


class _Owned:
    """A small llmk-owned [n] vector (from a Python number or sequence)."""
    __slots__ = ("buf", "t")

    def __init__(self, values, code):
        n = len(values)
        self.buf = (_CT[code] * max(n, 1))(*values)
        self.t = _Tensor()
        _fill(self.t, code, (n,), (1,), ctypes.addressof(self.buf), "vector")


def vector(obj, n, code, what):
    """A [n] tensor argument: an array (as tensor()), or a Python number (repeated n
    times) or sequence, converted to `code`. Returns (descriptor, keep-alive)."""
    if obj is None:
        return None, None
    if _kind(obj) is not None or isinstance(obj, _View):
        return tensor(obj, what), None
    if isinstance(obj, (int, float)):
        vals = [obj] * n
    else:
        vals = list(obj)
    if code != F32:
        vals = [int(v) for v in vals]
    o = _Owned(vals, code)
    return o.t, o


def ref(t):
    return ctypes.byref(t) if t is not None else None


def like(obj, shape=None, dtype=None):
    """A new uninitialised array of obj's library, obj's shape (or `shape`) and dtype."""
    k = _kind(obj.obj if isinstance(obj, _View) else obj)
    base = obj.obj if isinstance(obj, _View) else obj
    if k == "torch":
        import torch
        if shape is None and dtype is None:
            return torch.empty_like(base, memory_format=torch.contiguous_format)
        return torch.empty(tuple(shape if shape is not None else base.shape),
                           dtype=dtype if dtype is not None else base.dtype)
    import numpy as np
    if shape is None and dtype is None:
        out = np.empty(base.shape, dtype=base.dtype)
    else:
        out = np.empty(tuple(shape if shape is not None else base.shape),
                       dtype=dtype if dtype is not None else base.dtype)
    return view(out, obj.dtype) if isinstance(obj, _View) else out


def int_dtype_of(obj):
    """torch.int64 / numpy.int64 for obj's library."""
    base = obj.obj if isinstance(obj, _View) else obj
    if _kind(base) == "torch":
        import torch
        return torch.int64
    import numpy as np
    return np.int64


def shape_of(obj):
    base = obj.obj if isinstance(obj, _View) else obj
    return tuple(base.shape)


def unwrap(obj):
    return obj.obj if isinstance(obj, _View) else obj


# ----------------------------------------------------------------------------- contexts

class Context:
    """An llmk_context: how many threads a run may use (num_threads <= 0: the
    LLMK_NUM_THREADS variable, else every online CPU). Pass it as ``ctx=`` to any op,
    or pass ``ctx=<int>`` for a per-Python-thread cached context of that many threads.
    A context serves one run at a time."""

    def __init__(self, num_threads=0):
        p = ctypes.c_void_p()
        _check(lib().llmk_context_create(int(num_threads), ctypes.byref(p)))
        self._ptr = p

    @property
    def num_threads(self):
        return lib().llmk_context_num_threads(self._ptr)

    @property
    def handle(self):
        return self._ptr

    def close(self):
        if self._ptr:
            lib().llmk_context_destroy(self._ptr)
            self._ptr = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class _Local(threading.local):
    def __init__(self):
        self.contexts = {}
        self.ws = None
        self.ws_size = 0


_local = _Local()
_default_threads = None


def set_num_threads(n):
    """Default for ``ctx=None``: a thread count (a context of n threads, cached per
    Python thread; 1 = the calling thread only, as ctx=NULL in C), or None to go back to
    the default: torch.get_num_threads() once torch is imported, else the calling
    thread only."""
    global _default_threads
    _default_threads = None if n is None else int(n)


def default_num_threads():
    """The thread count ``ctx=None`` runs with now."""
    if _default_threads is not None:
        return _default_threads
    t = sys.modules.get("torch")
    if t is not None:
        try:
            return max(1, int(t.get_num_threads()))
        except Exception:
            return 1
    return 1


def context_handle(ctx):
    if ctx is None:
        ctx = default_num_threads()
    if isinstance(ctx, Context):
        return ctx.handle
    if isinstance(ctx, int):
        if ctx == 1:
            return None
        c = _local.contexts.get(ctx)
        if c is None:
            c = _local.contexts[ctx] = Context(ctx)
        return c.handle
    raise TypeError("llmk: ctx must be a Context, a thread count or None")


def workspace(size):
    """Per-Python-thread scratch buffer of at least `size` bytes (reused across calls)."""
    if size == 0:
        return None
    if _local.ws_size < size:
        n = max(size, 2 * _local.ws_size) + 64
        _local.ws = (ctypes.c_char * n)()
        _local.ws_size = n
    return ctypes.addressof(_local.ws)


def run(phase1, args, runner, ctx):
    """Phase 1 with args, then the run with a workspace; raises Error on failure."""
    ws = ctypes.c_size_t(0)
    plan = ctypes.c_void_p()
    _check(phase1(*args, ctypes.byref(ws), ctypes.byref(plan)))
    h = context_handle(ctx)
    try:
        buf = workspace(ws.value)
    except BaseException:
        lib().llmk_plan_destroy(plan)
        raise
    _check(runner(buf, ws.value, plan, h))  # the run consumes the plan, whatever it returns


# ----------------------------------------------------------------------------- llmk._fast

_FAST_FUNCTIONS = ("llmk_plan_destroy", "llmk_last_error",
                   "llmk_scatter_pa_kv_cache_get_workspace_size", "llmk_scatter_pa_kv_cache",
                   "llmk_advance_step_get_workspace_size", "llmk_advance_step",
                   "llmk_gather_pa_kv_cache_get_workspace_size", "llmk_gather_pa_kv_cache",
                   "llmk_apply_top_k_top_p_get_workspace_size", "llmk_apply_top_k_top_p",
                   "llmk_fused_causal_conv1d_get_workspace_size", "llmk_fused_causal_conv1d")


def _bind_fast(L=None):
    """Gives llmk._fast the addresses of the loaded ctypes library's entry points (on its
    first call, and when load_library() loads another): the C module calls the very
    library this module loaded."""
    L = L if L is not None else lib()
    _fast = sys.modules[__package__ + "._fast"]  # as fast_module() loaded it
    _fast.bind({n: ctypes.cast(getattr(L, n), ctypes.c_void_p).value for n in _FAST_FUNCTIONS})


def fast_module():
    """llmk._fast (the C module of the per-step calls), or None: not built, or turned off
    with LLMK_PY_FAST=0 (everything through ctypes)."""
    if os.environ.get("LLMK_PY_FAST", "1") == "0":
        return None
    path = os.environ.get("LLMK_PY_FAST_MODULE")  # a build folder's (tests/CMakeLists.txt)
    if path:
        import importlib.util
        spec = importlib.util.spec_from_file_location(__package__ + "._fast", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sys.modules[spec.name] = mod
        return mod
    try:
        from . import _fast
    except ImportError:
        return None
    return _fast
