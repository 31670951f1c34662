#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The installed package (scripts/pip_check.sh): run from outside the source tree with no
LLMK_LIBRARY or PYTHONPATH. Checks that llmk imports from the environment given as
argv[1] and loads its own libllmk.so, that torch.ops.llmk holds every op, that an op
called through the dispatcher gives the Python function's bits, that torch.jit.trace
keeps the op in its graph (and the traced function the same result), and that a meta
tensor gets its shape, and that llmk._fast (the C module of the per-step calls) is installed
and used where Python.h is. Exit 0: passed; 1: a check failed."""

import os
import sys

fails = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)


def main():
    prefix = os.path.realpath(sys.argv[1]) if len(sys.argv) > 1 else None
    import llmk
    where = os.path.realpath(os.path.dirname(llmk.__file__))
    check(prefix is None or where.startswith(prefix + os.sep),
          "llmk imported from the environment: %s" % where)
    lib = os.path.realpath(llmk.library_path())
    check(lib == os.path.join(where, "libllmk.so"),
          "libllmk.so loaded from the package: %s" % lib)
    print("llmk %s, isa %s, %s" % (llmk.version(), llmk.isa(), llmk.threading_runtime()))
    try:
        import torch
    except Exception as e:
        print("SKIP torch.ops.llmk: torch not importable (%s)" % e)
        return 1 if fails else 0
    from llmk import _torch_ops
    print(torch.ops.llmk)
    for name in _torch_ops.OPS:
        check(hasattr(torch.ops.llmk, name), "torch.ops.llmk.%s registered" % name)
    g = torch.Generator().manual_seed(7)
    logits = torch.randn(4, 3000, generator=g)
    p = torch.tensor([0.9, 0.5, 1.0, 0.7])
    k = torch.tensor([50, 3000, 7, 1], dtype=torch.int32)

    def f(x, p, k):
        return torch.ops.llmk.apply_top_k_top_p(x, p, k)

    direct = llmk.apply_top_k_top_p(logits, p=p, k=k)
    via_op = f(logits, p, k)
    check(torch.equal(via_op.view(torch.int32), direct.view(torch.int32)),
          "torch.ops.llmk.apply_top_k_top_p gives llmk.apply_top_k_top_p's bits")
    traced = torch.jit.trace(f, (logits, p, k))
    graph = str(traced.graph)
    check("llmk::apply_top_k_top_p" in graph, "torch.jit.trace keeps llmk::apply_top_k_top_p")
    other = torch.randn(4, 3000, generator=g)
    check(torch.equal(traced(other, p, k).view(torch.int32),
                      llmk.apply_top_k_top_p(other, p=p, k=k).view(torch.int32)),
          "the traced function gives the op's result on new logits")
    m = torch.ops.llmk.apply_top_k_top_p(torch.empty(5, 17, device="meta"), None, None)
    check(m.device.type == "meta" and tuple(m.shape) == (5, 17),
          "meta tensor: shape (5, 17) inferred")
    check_fast(llmk, torch, where)
    print("%d failed" % len(fails))
    return 1 if fails else 0


def check_fast(llmk, torch, where):
    """The C module (setup.py's optional extension) is installed in the package and takes
    scatter_pa_kv_cache's plain calls; built wherever this Python's Python.h is."""
    import sysconfig
    from llmk import _ops
    has_h = os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))
    fast = _ops._fast
    if fast is None:
        check(not has_h, "llmk._fast installed (Python.h is there, so setup.py builds it)")
        if not has_h:
            print("SKIP llmk._fast: no Python.h (python3-dev): the package is ctypes only")
        return
    check(os.path.realpath(os.path.dirname(fast.__file__)) == where,
          "llmk._fast loaded from the package: %s" % fast.__file__)
    kc = torch.zeros(8, 16, 2, 64, dtype=torch.bfloat16)
    key = torch.randn(1, 2, 64).to(torch.bfloat16)
    slot = torch.tensor([21])
    check(fast.scatter_pa_kv_cache(key, None, kc, None, slot, None, None, "blocks", None)
          is True, "llmk._fast takes a plain scatter_pa_kv_cache call")
    check(torch.equal(kc.view(-1, 2, 64)[21].view(torch.int16), key[0].view(torch.int16)),
          "llmk._fast wrote slot 21")


if __name__ == "__main__":
    sys.exit(main())
