#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The whole-call cost of llmk's per-step Python functions on small inputs, through the C
module (llmk._fast) and through ctypes (as LLMK_PY_FAST=0), beside an empty Python
function taking the same arguments and torch's own equivalent where there is one; min
over 30 repeats of 1000 calls (the machine may be shared: minimums).
    LLMK_LIBRARY=build/libllmk.so PYTHONPATH=python \\
    LLMK_PY_FAST_MODULE=build/python/llmk/_fast.cpython-311-x86_64-linux-gnu.so \\
    /usr/bin/python3 bench/python_calls.py
(an installed package finds its own llmk._fast; without it only the ctypes column)."""

import timeit

import torch

import llmk
from llmk import _ops

fast = _ops._fast
torch.manual_seed(0)


def us(stmt, g):
    return min(timeit.repeat(stmt, globals=g, number=1000, repeat=30)) * 1e3


def empty(*args, **kw):
    pass


k = torch.randn(1, 8, 128).bfloat16()
v = torch.randn(1, 8, 128).bfloat16()
kc = torch.zeros(1024, 16, 8, 128, dtype=torch.bfloat16)
vc = torch.zeros_like(kc)
kv = kc.view(-1, 8, 128)
slot = torch.tensor([37])
n = 8
tok, pos, sl, sm = (torch.zeros(n, dtype=torch.int64) for _ in range(4))
samp = torch.randint(0, 1000, (n, 1))
bt = torch.arange(n * 128).view(n, 128) % 1024  # room for 128 x 1024 steps
logits = torch.randn(1, 1000)
out = torch.empty_like(logits)
pk = torch.tensor([0.9])
kk = torch.tensor([50])
x = torch.randn(1, 1, 1024)
w = torch.randn(4, 1024)
states = torch.randn(4, 3, 1024)
ci = torch.tensor([2])
lens = torch.tensor([17], dtype=torch.int32)
btg = torch.tensor([[3, 9]], dtype=torch.int32)
ko = torch.empty(17, 8, 128, dtype=torch.bfloat16)
vo = torch.empty_like(ko)
g = dict(globals())
rows = [
    ("scatter_pa_kv_cache T=1 H=8 D=128 bf16", "llmk.scatter_pa_kv_cache(k, v, kc, vc, slot)",
     "empty(k, v, kc, vc, slot)", "kv.index_copy_(0, slot, k)"),
    ("advance_step 8 seqs", "llmk.advance_step(tok, samp, pos, sl, sm, bt, block_size=1024)",
     "empty(tok, samp, pos, sl, sm, bt, block_size=1024)", None),
    ("gather_pa_kv_cache 17 tokens", "llmk.gather_pa_kv_cache(kc, vc, btg, lens, key_out=ko, "
     "value_out=vo)", "empty(kc, vc, btg, lens, key_out=ko, value_out=vo)", None),
    ("apply_top_k_top_p B=1 V=1000", "llmk.apply_top_k_top_p(logits, p=pk, k=kk, out=out)",
     "empty(logits, p=pk, k=kk, out=out)", None),
    ("fused_causal_conv1d decode dim=1024", "llmk.fused_causal_conv1d(x, w, states, "
     "cache_indices=ci, activation='silu')", "empty(x, w, states, cache_indices=ci, "
     "activation='silu')", None),
]
print("us per call (min of 30 x 1000); torch %s, %d torch threads" % (torch.__version__,
                                                                    torch.get_num_threads()))
print("%-38s %8s %8s %8s %8s" % ("call", "fast", "ctypes", "empty", "torch"))
for name, call, emp, ref in rows:
    f = us(call, g) if fast is not None else float("nan")
    _ops._fast = None
    c = us(call, g)
    _ops._fast = fast
    e = us(emp, g)
    t = us(ref, g) if ref else float("nan")
    print("%-38s %8.2f %8.2f %8.2f %8.2f" % (name, f, c, e, t))
