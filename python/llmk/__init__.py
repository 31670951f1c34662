# SPDX-License-Identifier: Apache-2.0
"""llmk from Python: ctypes over libllmk.so, zero copy, on torch tensors or NumPy arrays.

    import torch, llmk
    out = llmk.apply_top_k_top_p(logits, p=0.9, k=50)          # new tensor
    llmk.apply_top_k_top_p(logits, p=p, k=k, out=logits)        # in place
    llmk.scatter_pa_kv_cache(key, value, key_cache, value_cache, slot_mapping)
    llmk.advance_step(tokens, sampled, positions, seq_lens, slots, block_tables, block_size=16)
    llmk.fused_causal_conv1d(x, weight, conv_states, query_start_loc=qsl,
                             cache_indices=lines, activation="silu")

One function per operator of the C API (the name without the ``llmk_`` prefix), taking the
C header's parameters by the same names (see include/llmk/<op>.h, docs/ops/<op>.md).
Tensors are passed by descriptor over their own memory: torch tensors (CPU, any strides
the op allows; dtype f32/f16/bf16/i8/u8/i32/i64, fp8 where torch has it) or NumPy arrays
(strides in bytes are converted to elements; NumPy has no bf16 / fp8: pass a uint16 /
uint8 array through ``llmk.view(array, 'bf16')``; the same wrapper gives a uint8 torch
tensor the fp8 dtype of a KV cache). In/out arguments are written in place. Per-row
scalars (p, k, min_p, temperature, seed, offset, scales) may also be Python numbers.

Threads: ``ctx=None`` runs with torch.get_num_threads() threads once torch is imported
(else on the calling thread, as ctx=NULL in C), unless set_num_threads(n) was called;
``ctx=n`` uses a cached context of n threads; ``ctx=llmk.Context(n)`` an explicit one.
Results are the same bits for any thread count. A failed call raises ``llmk.Error`` (a RuntimeError) carrying the status name and
llmk_last_error()'s message; phase 2 errors leave every output unchanged.

With torch installed, ``import llmk`` also registers every op with the torch dispatcher
as ``torch.ops.llmk.<op>`` (CPU and Meta kernels; see llmk/_torch_ops.py for the schemas),
so that torch.jit.trace records them; LLMK_NO_TORCH_OPS=1 skips that (and torch's import).

Per-step calls on plain CPU torch tensors (scatter_pa_kv_cache, advance_step, ...) go
through the optional C module llmk._fast where it was built (~2 us a call instead of ~10 us
through ctypes; the same results and errors); LLMK_PY_FAST=0 turns it off (python/README.md).

The library is found through the LLMK_LIBRARY environment variable (a path to
libllmk.so), else ``build/libllmk.so`` of the source tree around this package, else
ctypes.util.find_library('llmk') / the dynamic loader's path.
"""

import os

from ._core import (DTYPES, STATUS_NAMES, Context, Error, default_num_threads,
                    library_path, load_library, set_num_threads, view)
from ._ops import (advance_step, apply_top_k_top_p, apply_top_k_top_p_min_p,
                   apply_top_k_top_p_with_sorted, fused_causal_conv1d, gather_pa_kv_cache,
                   sample_top_k_top_p, scatter_pa_kv_cache)
from . import _core


def _register_torch_ops():
    # torch.ops.llmk.<op>: only where torch is installed; llmk itself does not need it.
    import importlib.util
    if os.environ.get("LLMK_NO_TORCH_OPS") or importlib.util.find_spec("torch") is None:
        return None
    from . import _torch_ops
    return _torch_ops.register()


_torch_library = _register_torch_ops()

__all__ = [
    "Error", "Context", "view", "set_num_threads", "default_num_threads", "library_path",
    "load_library",
    "version", "isa", "native_isa", "set_max_isa", "threading_runtime", "cpu_features",
    "DTYPES", "STATUS_NAMES",
    "advance_step", "scatter_pa_kv_cache", "gather_pa_kv_cache", "apply_top_k_top_p",
    "apply_top_k_top_p_min_p", "apply_top_k_top_p_with_sorted", "sample_top_k_top_p",
    "fused_causal_conv1d",
]


def __getattr__(name):
    # __version__ is the loaded library's (one source: the project's VERSION file), read
    # on first use so that importing the package does not load the library.
    if name == "__version__":
        return version()
    raise AttributeError("module 'llmk' has no attribute %r" % name)


_ISAS = {"scalar": 0, "avx2": 1, "avx512": 2, "neon": 3}


def version():
    """The linked library's version string (llmk_version_string())."""
    return _core.lib().llmk_version_string().decode()


def isa():
    """The kernel ISA in force: 'scalar', 'avx2' or 'avx512'."""
    L = _core.lib()
    return L.llmk_isa_name(L.llmk_get_isa()).decode()


def native_isa():
    L = _core.lib()
    return L.llmk_isa_name(L.llmk_get_native_isa()).decode()


def set_max_isa(name):
    """Caps the ISA of plans made from now on (process-wide); returns the ISA in force."""
    L = _core.lib()
    v = _ISAS[name] if isinstance(name, str) else int(name)
    return L.llmk_isa_name(L.llmk_set_max_isa(v)).decode()


def threading_runtime():
    return _core.lib().llmk_threading_runtime().decode()


def cpu_features():
    return _core.lib().llmk_cpu_features().decode()
