#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Peer benchmark: llmk from Python against the PyTorch code a vLLM CPU user runs today,
the same shapes in one process, median of several runs each, ratio per case.

    LLMK_LIBRARY=build/libllmk.so PYTHONPATH=python /usr/bin/python3 bench/peers/peer_bench.py \
        [--threads 2] [--quick] [--only top_k|kv|advance|conv]

(LLMK_LIBRARY may be left out when build/libllmk.so exists; PYTHONPATH too, the script
adds python/ of this checkout.) Needs torch (Debian: apt-get install python3-torch).

The PyTorch side (torch.set_num_threads(threads)):
  top-k/top-p   vLLM's apply_top_k_top_p (sampler forward_native): sort, gather the k-th
                value, softmax, cumsum, masks, scatter back; f32 logits
  KV scatter    vLLM's torch path: key_cache.view(-1, H, D).index_copy_(0, slot_mapping,
                key), and the same for value; NHD caches, block_size 16, bf16
  advance_step  the tensor formula (vLLM's Python advance_step): tokens, positions,
                seq_lens += 1, block_tables gather, slot arithmetic
  conv          vLLM's F.conv1d references: causal_conv1d_update_ref for decode (gather
                the state lines, cat, conv, write the lines back) and fused_causal_conv1d_ref per
                sequence for prefill (F.conv1d with padding K-1, final state stored), SiLU,
                bias, bf16, K = 4 (Mamba-2 / Qwen3-Next)
The llmk side: the Python package (ctypes, zero copy), an llmk.Context of `threads`
threads. Ratio = torch time / llmk time (> 1: llmk faster). Each llmk time includes the
Python-side cost of a call (descriptors, phase 1, phase 2), a few microseconds.
"""

import argparse
import os
import statistics
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.join(root, "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import llmk  # noqa: E402

# ----------------------------------------------------------------------------- timing


def bench(fn, min_reps=5, max_reps=2000, budget=0.6):
    """Median seconds per call: one warm-up call, then repetitions until `budget` seconds
    (at least min_reps, at most max_reps)."""
    fn()
    times = []
    t_end = time.perf_counter() + budget
    while len(times) < min_reps or (len(times) < max_reps and time.perf_counter() < t_end):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(times)


ROWS = []


def report(case, t_torch, t_llmk):
    (a, na), (b, nb) = t_torch, t_llmk
    ROWS.append((case, a, b, a / b, na, nb))
    print("  %-46s torch %10.3f ms (%4d)  llmk %9.3f ms (%4d)  ratio %8.1fx"
          % (case, a * 1e3, na, b * 1e3, nb, a / b), flush=True)


# ----------------------------------------------------------------------------- top-k / top-p

def vllm_apply_top_k_top_p(logits, k, p):
    """vLLM's torch-native apply_top_k_top_p (v1 sampler, forward_native)."""
    logits_sort, logits_idx = logits.sort(dim=-1, descending=False)
    if k is not None:
        top_k_mask = logits_sort.size(1) - k.to(torch.long)
        top_k_mask = logits_sort.gather(1, top_k_mask.unsqueeze(dim=1))
        top_k_mask = logits_sort < top_k_mask
        logits_sort.masked_fill_(top_k_mask, -float("inf"))
    if p is not None:
        probs_sort = logits_sort.softmax(dim=-1)
        probs_sum = torch.cumsum(probs_sort, dim=-1, out=probs_sort)
        top_p_mask = probs_sum <= 1 - p.unsqueeze(dim=1)
        top_p_mask[:, -1] = False
        logits_sort.masked_fill_(top_p_mask, -float("inf"))
    return logits_sort.scatter(dim=-1, index=logits_idx, src=logits_sort)


def bench_top_k_top_p(ctx, quick):
    print("top-k / top-p (f32 logits, k = 50, p = 0.9 per row)")
    for B, V in ((64, 151936), (1, 151936), (256, 32000)):
        if quick and B * V > 4_000_000:
            B = max(1, 4_000_000 // V)
        g = torch.Generator().manual_seed(B)
        logits = torch.randn(B, V, generator=g) * 4
        k = torch.full((B,), 50, dtype=torch.int64)
        p = torch.full((B,), 0.9)
        out = torch.empty_like(logits)
        ref = vllm_apply_top_k_top_p(logits, k, p)
        llmk.apply_top_k_top_p(logits, p=p, k=k, out=out, ctx=ctx)
        same = bool(torch.equal(torch.isinf(ref), torch.isinf(out)))
        t_t = bench(lambda: vllm_apply_top_k_top_p(logits, k, p), min_reps=3, budget=2.0)
        t_l = bench(lambda: llmk.apply_top_k_top_p(logits, p=p, k=k, out=out, ctx=ctx))
        report("apply_top_k_top_p B=%d V=%d%s" % (B, V, "" if same else " (masks differ!)"),
               t_t, t_l)


# ----------------------------------------------------------------------------- KV cache

def bench_kv(ctx, quick):
    print("scatter_pa_kv_cache (bf16, H = 8, D = 128, block_size 16, NHD, K and V)")
    H, D, bs = 8, 128, 16
    nb = 2048
    g = torch.Generator().manual_seed(7)
    kc = torch.zeros(nb, bs, H, D, dtype=torch.bfloat16)
    vc = torch.zeros(nb, bs, H, D, dtype=torch.bfloat16)
    kc2, vc2 = kc.clone(), vc.clone()
    for name, T in (("decode", 256), ("prefill", 4096 if quick else 16384)):
        key = torch.randn(T, H, D, generator=g).to(torch.bfloat16)
        value = torch.randn(T, H, D, generator=g).to(torch.bfloat16)
        if name == "decode":   # one new token per sequence, anywhere in the cache
            slots = torch.randperm(nb * bs, generator=g)[:T]
        else:                  # sequences of 1024 tokens in runs of whole blocks
            blocks = torch.randperm(nb, generator=g)[: T // bs]
            slots = (blocks.view(-1, 1) * bs + torch.arange(bs)).view(-1)
        slots = slots.to(torch.int64)

        def torch_path():
            kc.view(-1, H, D).index_copy_(0, slots, key)
            vc.view(-1, H, D).index_copy_(0, slots, value)

        def llmk_path():
            llmk.scatter_pa_kv_cache(key, value, kc2, vc2, slots, ctx=ctx)

        torch_path()
        llmk_path()
        same = bool(torch.equal(kc.view(torch.int16), kc2.view(torch.int16))
                    and torch.equal(vc.view(torch.int16), vc2.view(torch.int16)))
        report("scatter_pa_kv_cache %s T=%d%s" % (name, T, "" if same else " (differ!)"),
               bench(torch_path), bench(llmk_path))


# ----------------------------------------------------------------------------- advance_step

def torch_advance_step(input_tokens, sampled_token_ids, input_positions, seq_lens,
                       slot_mapping, block_tables, num_queries, block_size):
    """The tensor formula (vLLM's Python-side advance_step)."""
    nq = num_queries
    input_tokens[:nq] = sampled_token_ids[:nq, 0]
    pos = seq_lens[:nq].to(torch.long)
    input_positions[:nq] = pos
    seq_lens[:nq] += 1
    blk = block_tables[:nq].gather(1, (pos // block_size).unsqueeze(1)).squeeze(1)
    slot_mapping[:nq] = blk.to(torch.long) * block_size + pos % block_size
    input_tokens[nq:] = 0
    input_positions[nq:] = 0
    slot_mapping[nq:] = -1


def bench_advance(ctx, quick):
    print("advance_step (plain, i64 tokens/positions/slots, i32 seq_lens/block_tables)")
    n, bs, mb = 1024, 16, 512
    g = torch.Generator().manual_seed(3)

    def state():
        return (torch.zeros(n, dtype=torch.int64),
                torch.randint(0, 150000, (n, 1), generator=g),
                torch.zeros(n, dtype=torch.int64),
                torch.randint(100, 2000, (n,), generator=g).to(torch.int32),
                torch.zeros(n, dtype=torch.int64),
                torch.randint(0, 100000, (n, mb), generator=g).to(torch.int32))

    a = state()
    b = tuple(t.clone() for t in a)
    torch_advance_step(*a, n, bs)
    llmk.advance_step(*b, block_size=bs, ctx=ctx)
    same = all(torch.equal(x.long(), y.long()) for x, y in zip(a, b))
    # up to (mb*bs - 2000) calls stay inside the tables; bench() makes at most 2000
    report("advance_step seqs=%d%s" % (n, "" if same else " (differ!)"),
           bench(lambda: torch_advance_step(*a, n, bs), max_reps=1500),
           bench(lambda: llmk.advance_step(*b, block_size=bs, ctx=ctx), max_reps=1500))


# ----------------------------------------------------------------------------- conv

def causal_conv1d_update_ref(x, conv_state, weight, bias, cache_indices):
    """vLLM's causal_conv1d_update reference (decode): x [B, dim], conv_state
    [N, dim, K-1] (vLLM's layout), weight [dim, K]."""
    dim, width = weight.shape
    st = conv_state[cache_indices]
    x_new = torch.cat([st, x.unsqueeze(-1)], dim=-1).to(weight.dtype)
    conv_state[cache_indices] = x_new[:, :, -(width - 1):]
    out = F.conv1d(x_new, weight.unsqueeze(1), bias, padding=0, groups=dim)[:, :, -1:]
    return F.silu(out).squeeze(-1).to(x.dtype)


def causal_conv1d_fn_ref(x, conv_state, weight, bias, query_start_loc, cache_indices):
    """vLLM's causal_conv1d_fn reference for new sequences (prefill): per sequence
    F.conv1d with padding K-1, final state stored. x [dim, T] (vLLM passes x transposed)."""
    dim, width = weight.shape
    out = torch.empty_like(x)
    qsl = query_start_loc.tolist()
    for b in range(len(qsl) - 1):
        xb = x[:, qsl[b]:qsl[b + 1]].unsqueeze(0)
        L = xb.shape[-1]
        y = F.conv1d(xb, weight.unsqueeze(1), bias, padding=width - 1, groups=dim)[..., :L]
        conv_state[cache_indices[b]] = F.pad(xb, (width - 1 - L, 0))[0, :, -(width - 1):]
        out[:, qsl[b]:qsl[b + 1]] = F.silu(y)[0]
    return out


def bench_conv(ctx, quick):
    print("fused_causal_conv1d (bf16, K = 4, dim = 8192, bias, SiLU)")
    K, dim = 4, 8192
    g = torch.Generator().manual_seed(5)
    dt = torch.bfloat16
    w = (torch.randn(K, dim, generator=g) * 0.3).to(dt)       # llmk: [K, dim]
    wt = w.t().contiguous()                                      # vLLM: [dim, K]
    bias = (torch.randn(dim, generator=g) * 0.1).to(dt)
    # decode: B = 256 sequences of one token, 512 lines
    B, N = 256, 512
    lines = torch.randperm(N, generator=g)[:B]
    x = torch.randn(B, dim, generator=g).to(dt)
    st_l = torch.randn(N, K - 1, dim, generator=g).to(dt)       # llmk [N, C, dim]
    st_t = st_l.transpose(1, 2).contiguous()                     # vLLM [N, dim, C]
    x_l = x.clone().view(B, 1, dim)
    ref = causal_conv1d_update_ref(x, st_t.clone(), wt, bias, lines)
    xl1 = x_l.clone()
    llmk.fused_causal_conv1d(xl1, w, st_l.clone(), cache_indices=lines, bias=bias,
                             activation="silu", ctx=ctx)
    dev = (ref.float() - xl1.view(B, dim).float()).abs().max().item()
    report("fused_causal_conv1d decode B=%d (max |diff| %.2g)" % (B, dev),
           bench(lambda: causal_conv1d_update_ref(x, st_t, wt, bias, lines)),
           bench(lambda: llmk.fused_causal_conv1d(x_l, w, st_l, cache_indices=lines, bias=bias,
                                                  activation="silu", ctx=ctx)))
    # prefill: 4 new sequences of 1024 tokens (256 in --quick)
    nseq, L = 4, (256 if quick else 1024)
    T = nseq * L
    qsl = torch.arange(nseq + 1, dtype=torch.int32) * L
    lines = torch.arange(nseq, dtype=torch.int32)
    nct = torch.zeros(nseq, dtype=torch.int32)
    x = torch.randn(T, dim, generator=g).to(dt)
    xt = x.t()                                                   # vLLM: [dim, T] view
    st_l = torch.zeros(nseq, K - 1, dim, dtype=dt)
    st_t = torch.zeros(nseq, dim, K - 1, dtype=dt)
    ref = causal_conv1d_fn_ref(xt, st_t, wt, bias, qsl, lines)
    x1 = x.clone()
    llmk.fused_causal_conv1d(x1, w, st_l, query_start_loc=qsl, cache_indices=lines,
                             num_computed_tokens=nct, bias=bias, activation="silu", ctx=ctx)
    dev = (ref.t().float() - x1.float()).abs().max().item()
    x2 = x.clone()
    report("fused_causal_conv1d prefill %dx%d (max |diff| %.2g)" % (nseq, L, dev),
           bench(lambda: causal_conv1d_fn_ref(xt, st_t, wt, bias, qsl, lines), budget=2.0),
           bench(lambda: llmk.fused_causal_conv1d(x2, w, st_l, query_start_loc=qsl,
                                                  cache_indices=lines, num_computed_tokens=nct,
                                                  bias=bias, activation="silu", ctx=ctx)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="smaller shapes, for a smoke run")
    ap.add_argument("--only", choices=("top_k", "kv", "advance", "conv"))
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    ctx = llmk.Context(a.threads)
    print("peer benchmark: torch %s (%d threads) vs llmk %s (%s, isa %s, %d threads, %s)"
          % (torch.__version__, torch.get_num_threads(), llmk.version(), llmk.library_path(),
             llmk.isa(), ctx.num_threads, llmk.threading_runtime()))
    groups = {"top_k": bench_top_k_top_p, "kv": bench_kv, "advance": bench_advance,
              "conv": bench_conv}
    for name, fn in groups.items():
        if a.only in (None, name):
            fn(ctx, a.quick)
    print()
    print("| case | torch (ms) | llmk (ms) | ratio |")
    print("|---|---:|---:|---:|")
    for case, t, l, r, _, _ in ROWS:
        print("| %s | %.3f | %.3f | %.1fx |" % (case, t * 1e3, l * 1e3, r))
    ctx.close()


if __name__ == "__main__":
    main()
