#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Cross-checks of the llmk Python package against PyTorch goldens written from the specs
(/work/shared/spec: top_k_top_p.md, kv_cache_scatter.md, advance_step.md, causal_conv1d.md).

The goldens never call llmk:
  top-k / top-p   the spec's pseudo-code: stable ascending sort, top-k threshold, softmax,
                  cumulative sum, mask, scatter back (plus min-p, with-sorted, sampling checks)
  KV cache        index assignment into the cache view of each layout (fp8 rounded by a
                  table-based round-to-nearest-even encoder written from the format)
  advance_step    the formulas, vectorised
  causal conv1d   F.conv1d (groups=dim) over history ++ chunk with the state rules of the
                  spec (tail-aligned write, nacc offset, APC fill, conv_mode 1, residual),
                  and the spec's direct f32 formulation (no FMA) for bit-exact checks

Exact comparisons (bits) everywhere except F.conv1d and SiLU, which are compared with a
stated tolerance. Run:
    LLMK_LIBRARY=build/libllmk.so PYTHONPATH=python /usr/bin/python3 tests/python/test_llmk_torch.py
Exit code 0: all passed; 1: a check failed; 77: torch not importable (CTest: skipped).
"""

import os
import sys
import time

try:
    import torch
    import torch.nn.functional as F
except Exception as e:  # pragma: no cover
    print("SKIP: torch not importable (%s)" % e)
    sys.exit(77)

try:
    import numpy as np
except Exception:  # pragma: no cover
    np = None

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python"))
import llmk  # noqa: E402

INF = float("inf")
torch.manual_seed(1234)
GEN = torch.Generator().manual_seed(42)

# ----------------------------------------------------------------------------- harness

STATS = {"checks": 0, "failures": 0}
FAILS = []
DEV = {}  # name -> max deviation


def check(cond, what):
    STATS["checks"] += 1
    if not cond:
        STATS["failures"] += 1
        FAILS.append(what)
        print("FAIL:", what)
    return cond


def note_dev(name, value):
    DEV[name] = max(DEV.get(name, 0.0), float(value))


_INT_OF = {torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16,
           torch.int8: torch.int8, torch.uint8: torch.uint8, torch.int32: torch.int32,
           torch.int64: torch.int64}


def bits(t):
    return t.contiguous().view(_INT_OF[t.dtype])


def same_bits(got, exp, what):
    """Bit-exact comparison; on failure the first differing element is reported."""
    if got.shape != exp.shape or got.dtype != exp.dtype:
        return check(False, "%s: shape/dtype %s %s vs expected %s %s"
                     % (what, tuple(got.shape), got.dtype, tuple(exp.shape), exp.dtype))
    a, b = bits(got), bits(exp)
    ne = a != b
    if not bool(ne.any()):
        return check(True, what)
    i = ne.nonzero()[0].tolist()
    n = int(ne.sum())
    return check(False, "%s: %d element(s) differ, first at %s: expected %r got %r"
                 % (what, n, i, exp[tuple(i)].item(), got[tuple(i)].item()))


def expect_error(fn, status_name, what, contains=None):
    try:
        fn()
    except llmk.Error as e:
        ok = e.status_name == status_name and (contains is None or contains in e.message)
        return check(ok, "%s: got %s (%s), expected %s" % (what, e.status_name, e.message,
                                                           status_name))
    return check(False, "%s: no error, expected %s" % (what, status_name))


def rand_int_dtype():
    return torch.int32 if torch.randint(0, 2, (1,), generator=GEN).item() == 0 else torch.int64


def strided_1d(values, dtype, step=2):
    """A copy of `values` as a non-contiguous 1-D view (stride `step`)."""
    v = torch.as_tensor(values).to(dtype)
    base = torch.full((max(len(v) * step, 1),), -77, dtype=dtype)
    out = base[::step][:len(v)]
    out.copy_(v)
    return out


# ============================================================================ top-k / top-p

def ref_top_k_top_p(logits, p=None, k=None, min_p=None):
    """The spec's sort-based reference. Returns (out in logits' dtype, keep mask [B, V])."""
    B, V = logits.shape
    s, idx = torch.sort(logits.float(), dim=-1, stable=True)  # ascending, ties by index
    keep = torch.ones(B, V, dtype=torch.bool)
    if k is not None:
        kk = k.long()
        on = (kk >= 1) & (kk <= V - 1)
        t = s.gather(1, (V - kk.clamp(1, max(V - 1, 1))).unsqueeze(1))
        m = (s < t) & on.unsqueeze(1)
        s = s.masked_fill(m, -INF)
        keep &= ~m
    if p is not None:
        q = torch.softmax(s, dim=-1)                      # f32
        c = torch.cumsum(q, dim=-1)
        m = c <= (1 - p.float()).unsqueeze(1)             # 1 - p in f32
        m[:, -1] = False
        s = s.masked_fill(m, -INF)
        keep &= ~m
    if min_p is not None:
        q = torch.softmax(s, dim=-1)
        m = q < min_p.float().unsqueeze(1) * q.max(dim=-1, keepdim=True).values
        s = s.masked_fill(m, -INF)
        keep &= ~m
    out = torch.empty_like(s).scatter_(1, idx, s).to(logits.dtype)
    keep_o = torch.empty_like(keep).scatter_(1, idx, keep)
    return out, keep_o


def ambiguous_rows(logits, p=None, k=None, min_p=None):
    """Rows where f32 rounding in the reference may decide an entry (the spec: tests must
    avoid them): a cumulative sum (f64) within 4e-6 relative of 1 - p, or a probability
    ratio within 4e-6 relative of min_p, or a probability near f32 underflow."""
    B, V = logits.shape
    s, _ = torch.sort(logits.double(), dim=-1, stable=True)
    if k is not None:
        kk = k.long()
        on = (kk >= 1) & (kk <= V - 1)
        t = s.gather(1, (V - kk.clamp(1, max(V - 1, 1))).unsqueeze(1))
        s = s.masked_fill((s < t) & on.unsqueeze(1), -INF)
    bad = torch.zeros(B, dtype=torch.bool)
    mx = s[:, -1:]
    ok_rows = torch.isfinite(mx.squeeze(1))
    if p is not None:
        q = torch.softmax(s, dim=-1)
        c = torch.cumsum(q, dim=-1)[:, :-1]
        thr = (1 - p.float()).double().unsqueeze(1)
        fin = torch.isfinite(s[:, :-1])
        near = (c - thr).abs() <= 4e-6 * torch.maximum(thr, c)
        d = s[:, :-1] - mx                      # near f32 underflow of exp(x - max)
        tiny = (d > -110) & (d < -80)
        bad |= ((near | tiny) & fin).any(dim=1) & ok_rows
    if min_p is not None:
        r = torch.exp(s - mx)
        mp = min_p.float().double().unsqueeze(1)
        near = ((r - mp).abs() <= 4e-6 * mp) & torch.isfinite(s)
        bad |= near.any(dim=1) & ok_rows
    return bad


def draw_p(logits, k, dtype, lo=0.05, hi=0.99, min_p=None):
    """Per-row p (in `dtype`) with no ambiguous entry; redraws rows until clear."""
    B = logits.shape[0]
    p = (lo + (hi - lo) * torch.rand(B, generator=GEN)).to(dtype)
    for _ in range(60):
        bad = ambiguous_rows(logits, p, k, min_p)
        if not bool(bad.any()):
            return p
        p[bad] = (lo + (hi - lo) * torch.rand(int(bad.sum()), generator=GEN)).to(dtype)
    raise RuntimeError("could not draw an unambiguous p")


def make_logits(B, V, dtype, ties=False, scale=3.0):
    x = torch.randn(B, V, generator=GEN) * scale
    if ties:
        x = torch.round(x * 4) / 4  # many equal values
    return x.to(dtype)


def test_apply_top_k_top_p():
    t0 = time.time()
    ncase = 0
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        for (B, V, ties) in ((8, 4096, False), (6, 4096, True), (3, 32000, False), (5, 7, True),
                             (1, 151936, False)):
            logits = make_logits(B, V, dtype, ties)
            # special rows: all -inf, half -inf, a far tail (underflowing probabilities)
            if B >= 6:
                logits[1] = -INF
                logits[2, ::2] = -INF
                logits[3, : V // 2] -= 200
            kdt = rand_int_dtype()
            k = torch.randint(-1, min(V + 2, 200), (B,), generator=GEN)
            k[0] = 1
            if B > 4:
                k[4] = V - 1
                k[-1] = V
            k = k.to(kdt)
            for mode in ("k", "p", "kp"):
                for pdt in ((dtype, torch.float32) if dtype != torch.float32 and mode != "k"
                            else (dtype,)):
                    kk = k if "k" in mode else None
                    p = draw_p(logits, kk, pdt) if "p" in mode else None
                    if p is not None and B >= 6:
                        p[0] = 0.0   # keeps only the largest
                        p[3] = 1.0   # masks only exact-zero probabilities
                        assert not bool(ambiguous_rows(logits, p, kk).any())
                    exp, _ = ref_top_k_top_p(logits, p, kk)
                    what = "top_k_top_p %s B=%d V=%d ties=%d mode=%s p=%s k=%s" % (
                        dtype, B, V, ties, mode, pdt, kdt)
                    out = llmk.apply_top_k_top_p(logits, p=p, k=kk)
                    same_bits(out, exp, what + " (new out)")
                    # strided: logits a transposed view, out rows padded with a stride 2
                    lt = logits.t().contiguous().t()
                    ob = torch.full((B, 2 * V + 3), 7.0, dtype=dtype)
                    o2 = ob[:, : 2 * V : 2]
                    r = llmk.apply_top_k_top_p(lt, p=p, k=kk, out=o2, ctx=2)
                    check(r is o2, what + " returns out")
                    same_bits(o2, exp, what + " (transposed logits, strided out, 2 threads)")
                    check(bool((ob[:, 1 : 2 * V : 2] == 7.0).all()), what + " gaps untouched")
                    # in place
                    li = logits.clone()
                    llmk.apply_top_k_top_p(li, p=p, k=kk, out=li)
                    same_bits(li, exp, what + " (in place)")
                    ncase += 1
    # CANN's sample
    l = torch.tensor([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12.]])
    out = llmk.apply_top_k_top_p(l, p=torch.tensor([0.2, 0.4, 0.6]),
                                 k=torch.tensor([1, 2, 3], dtype=torch.int32))
    e = torch.full((3, 4), -INF)
    e[:, 3] = l[:, 3]
    same_bits(out, e, "top_k_top_p CANN sample")
    # NumPy: f32 and bf16 (uint16 bits through llmk.view), Python scalars for p and k
    if np is not None:
        logits = make_logits(4, 1000, torch.float32)
        p = draw_p(logits, torch.full((4,), 40), torch.float32)
        exp, _ = ref_top_k_top_p(logits, p, torch.full((4,), 40))
        got = llmk.apply_top_k_top_p(logits.numpy(), p=p.numpy(), k=40)
        same_bits(torch.from_numpy(got), exp, "top_k_top_p numpy f32")
        lb = make_logits(4, 1000, torch.bfloat16)
        exp, _ = ref_top_k_top_p(lb, None, torch.full((4,), 10))
        arr = lb.view(torch.int16).numpy().view(np.uint16).copy()
        llmk.apply_top_k_top_p(llmk.view(arr, "bf16"), k=10, out=llmk.view(arr, "bf16"))
        same_bits(torch.from_numpy(arr.view(np.int16)).view(torch.bfloat16), exp,
                  "top_k_top_p numpy bf16 (llmk.view), in place")
    # errors
    l = make_logits(2, 10, torch.float32)
    keepc = l.clone()
    expect_error(lambda: llmk.apply_top_k_top_p(l, p=torch.tensor([0.5, 1.5]), out=l),
                 "LLMK_ERROR_INVALID_VALUE", "top_k_top_p p out of range", "p[1]")
    same_bits(l, keepc, "top_k_top_p error leaves out unchanged")
    expect_error(lambda: llmk.apply_top_k_top_p_min_p(l), "LLMK_ERROR_NULL_POINTER",
                 "top_k_top_p_min_p without p, k, min_p")
    expect_error(lambda: llmk.apply_top_k_top_p(l, k=torch.tensor([1, 2, 3])),
                 "LLMK_ERROR_INVALID_SHAPE", "top_k_top_p k shape")
    expect_error(lambda: llmk.apply_top_k_top_p(l, k=2, out=torch.empty(2, 10,
                                                                        dtype=torch.float16)),
                 "LLMK_ERROR_INVALID_DTYPE", "top_k_top_p out dtype")
    print("top_k_top_p: %d cases x 3 layouts, %.1f s" % (ncase, time.time() - t0))


def test_min_p_with_sorted_sample():
    t0 = time.time()
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        B, V = 6, 3000
        logits = make_logits(B, V, dtype, ties=(dtype == torch.float32))
        k = torch.tensor([0, 50, 1, V, 400, 7], dtype=torch.int64)
        mp = (0.01 + 0.3 * torch.rand(B, generator=GEN)).to(dtype)
        for _ in range(60):
            bad = ambiguous_rows(logits, None, k, mp)
            if not bool(bad.any()):
                break
            mp[bad] = (0.01 + 0.3 * torch.rand(int(bad.sum()), generator=GEN)).to(dtype)
        p = draw_p(logits, k, torch.float32, min_p=mp)
        assert not bool(ambiguous_rows(logits, p, k, mp).any())
        exp, keep = ref_top_k_top_p(logits, p, k, mp)
        kept = torch.full((B,), -5, dtype=torch.int32)
        out = llmk.apply_top_k_top_p_min_p(logits, p=p, k=k, min_p=mp, kept=kept)
        same_bits(out, exp, "min_p %s" % dtype)
        same_bits(kept, keep.sum(1).to(torch.int32), "min_p kept counts %s" % dtype)
        # min-p alone, f32 min_p with half logits
        mp32 = mp.float()
        exp2, keep2 = ref_top_k_top_p(logits, None, None, mp32)
        kept64 = strided_1d([0] * B, torch.int64)
        out2 = llmk.apply_top_k_top_p_min_p(logits, min_p=mp32, kept=kept64)
        same_bits(out2, exp2, "min_p only %s" % dtype)
        same_bits(kept64, keep2.sum(1), "min_p only kept (strided i64) %s" % dtype)

        # with-sorted: s, idx from a stable sort; with and without the original logits
        s, idx = torch.sort(logits, dim=-1, stable=True)
        exp3, _ = ref_top_k_top_p(logits, p, k)
        out3 = llmk.apply_top_k_top_p_with_sorted(s, idx.to(torch.int32), p=p, k=k)
        same_bits(out3, exp3, "with_sorted %s" % dtype)
        out4 = llmk.apply_top_k_top_p_with_sorted(s, idx.to(torch.int32), p=p, k=k,
                                                  logits=logits)
        same_bits(out4, exp3, "with_sorted + logits %s" % dtype)

        # sampling: greedy = first index of the max
        lg = make_logits(B, V, dtype, ties=True)
        tok = llmk.sample_top_k_top_p(lg, temperature=0.0, seed=1)
        mx = lg.float().max(1, keepdim=True).values
        first = (lg.float() == mx).int().argmax(1)  # first max
        same_bits(tok, first.to(torch.int64), "sample greedy %s" % dtype)
        # a draw always lands on an entry the filter of logits / temperature keeps
        temp = torch.full((B,), 0.7)
        y = (lg.float() / temp.unsqueeze(1))
        kk = torch.tensor([5, 100, 0, 20, 3, 1000], dtype=torch.int32)
        pp = draw_p(y, kk, torch.float32)
        _, keep = ref_top_k_top_p(y, pp, kk)
        for trial in range(5):
            seed = torch.arange(B, dtype=torch.int64) + 100 * trial
            tid = torch.empty(B, dtype=torch.int32)
            llmk.sample_top_k_top_p(lg, p=pp, k=kk, temperature=temp, seed=seed,
                                    token_ids=tid)
            ok = bool(keep[torch.arange(B), tid.long()].all())
            check(ok, "sample lands on kept entries %s trial %d" % (dtype, trial))
            tid2 = llmk.sample_top_k_top_p(lg, p=pp, k=kk, temperature=temp, seed=seed)
            same_bits(tid2.to(torch.int32), tid, "sample reproducible %s" % dtype)
    # frequencies of a small distribution against its softmax (5 sigma)
    n = 40000
    row = torch.tensor([0.0, 1.0, 2.0, 2.5, -1.0])
    lg = row.repeat(n, 1)
    tok = llmk.sample_top_k_top_p(lg, seed=torch.arange(n, dtype=torch.int64), offset=7)
    freq = torch.bincount(tok, minlength=5).double() / n
    prob = torch.softmax(row.double(), 0)
    sig = torch.sqrt(prob * (1 - prob) / n)
    dev = ((freq - prob).abs() / sig).max().item()
    note_dev("sample frequency deviation (sigmas)", dev)
    check(dev < 5.0, "sample frequencies vs softmax: %.2f sigma" % dev)
    # with top-k 2: only the two largest, renormalised
    tok = llmk.sample_top_k_top_p(lg, k=2, seed=torch.arange(n, dtype=torch.int64))
    freq = torch.bincount(tok, minlength=5).double() / n
    pr2 = torch.zeros(5, dtype=torch.double)
    pr2[2:4] = torch.softmax(row[2:4].double(), 0)
    sig = torch.sqrt(pr2 * (1 - pr2) / n).clamp(min=1e-12)
    dev = ((freq - pr2).abs() / sig).max().item()
    check(bool(freq[[0, 1, 4]].sum() == 0) and dev < 5.0,
          "sample top-k 2 frequencies: %.2f sigma" % dev)
    expect_error(lambda: llmk.sample_top_k_top_p(lg[:2], temperature=-1.0, seed=0),
                 "LLMK_ERROR_INVALID_VALUE", "sample negative temperature")
    print("min_p / with_sorted / sample: %.1f s" % (time.time() - t0))


# ============================================================================ KV cache

def fp8_table(fmt):
    """f64 value of each of the 256 fp8 codes, from the format (NaN codes: NaN)."""
    ebits, mbits, bias = (4, 3, 7) if fmt == "fp8_e4m3fn" else (5, 2, 15)
    vals = []
    for code in range(256):
        s = -1.0 if code & 0x80 else 1.0
        e = (code >> mbits) & ((1 << ebits) - 1)
        m = code & ((1 << mbits) - 1)
        if fmt == "fp8_e4m3fn" and e == 15 and m == 7:
            v = float("nan")
        elif fmt == "fp8_e5m2" and e == 31:
            v = float("inf") if m == 0 else float("nan")
        elif e == 0:
            v = m / (1 << mbits) * 2.0 ** (1 - bias)
        else:
            v = (1 + m / (1 << mbits)) * 2.0 ** (e - bias)
        vals.append(s * v)
    return torch.tensor(vals, dtype=torch.float64)


def fp8_encode(x32, fmt):
    """f32 tensor -> fp8 codes (uint8): round to nearest, ties to even, saturating."""
    tab = fp8_table(fmt)
    nfin = 127 if fmt == "fp8_e4m3fn" else 124         # positive finite codes 0..nfin-1
    pos = tab[:nfin]
    a = x32.double().abs().reshape(-1)
    i = torch.searchsorted(pos, a).clamp(max=nfin - 1)  # first >= a
    lo = (i - 1).clamp(min=0)
    dlo = a - pos[lo]
    dhi = pos[i] - a
    pick_hi = (dhi < dlo) | ((dhi == dlo) & (i % 2 == 0))
    code = torch.where(pick_hi, i, lo)
    code = torch.where(a >= pos[nfin - 1], torch.full_like(code, nfin - 1), code)
    code = torch.where(a <= 0, torch.zeros_like(code), code)
    sign = torch.signbit(x32.reshape(-1)).long() * 128
    return (code + sign).to(torch.uint8).reshape(x32.shape)


def fp8_decode(codes, fmt):
    return fp8_table(fmt)[codes.long()].float()


def c_unwrap(a):
    """The array inside an llmk.view() wrapper (or a itself)."""
    return getattr(a, "obj", a)


def kv_assign(cache, layout, bidx, oidx, src):
    """cache(b, o, :, :) = src[n, H, D] in the layout's view (index assignment)."""
    n, H, D = src.shape
    if layout == "blocks":
        cache[bidx, oidx] = src
    elif layout == "xsplit_k":
        x = cache.shape[-1]
        cache[bidx, :, :, oidx, :] = src.reshape(n, H, D // x, x)
    elif layout == "xsplit_v":
        cache[bidx, :, :, oidx] = src
    elif layout == "nz":
        ld = cache.shape[-1]
        cache[bidx, :, oidx, :] = src.reshape(n, H * D // ld, ld)


def kv_read(cache, layout, bidx, oidx, H, D):
    n = bidx.numel()
    if layout == "blocks":
        return cache[bidx, oidx]
    if layout == "xsplit_k":
        return cache[bidx, :, :, oidx, :].reshape(n, H, D)
    if layout == "xsplit_v":
        return cache[bidx, :, :, oidx]
    return cache[bidx, :, oidx, :].reshape(n, H, D)


def make_cache(layout, nb, bs, H, D, dtype, fill, hnd=False):
    """A cache in `layout` filled with `fill` (a generator of random bits); returns
    (tensor passed to llmk, golden-view tensor: the same storage)."""
    esz = torch.empty(0, dtype=dtype).element_size()
    if layout == "blocks":
        if hnd:
            base = fill((nb, H, bs, D), dtype)
            return base.permute(0, 2, 1, 3)
        return fill((nb, bs, H, D), dtype)
    if layout == "xsplit_k":
        x = 16 // esz
        return fill((nb, H, D // x, bs, x), dtype)
    if layout == "xsplit_v":
        return fill((nb, H, D, bs), dtype)
    ld = 32 // esz
    return fill((nb, H * D // ld, bs, ld), dtype)


def rand_fill(shape, dtype):
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=GEN) * 2).to(dtype)
    if dtype == torch.uint8:
        return torch.randint(0, 256, shape, generator=GEN, dtype=torch.int32).to(dtype)
    info = torch.iinfo(dtype)
    lo, hi = max(info.min, -2 ** 30), min(info.max, 2 ** 30)
    return torch.randint(lo, hi, shape, generator=GEN, dtype=torch.int64).to(dtype)


def last_wins(slots):
    """Tokens whose slot is >= 0 and not overwritten by a later token: (tokens, slots)."""
    d = {}
    for t, s in enumerate(slots.tolist()):
        if s >= 0:
            d[s] = t
    ts = torch.tensor(sorted(d.values()), dtype=torch.long)
    return ts, slots.long()[ts]


def scale_arg(kind, H):
    if kind is None:
        return None, None
    if kind == "[]":
        v = torch.tensor(0.37)
        return v, v.expand(H)
    if kind == "[1]":
        v = torch.tensor([1.9])
        return v, v.expand(H)
    v = 0.25 + torch.rand(H, generator=GEN) * 2
    return v, v


def test_kv_cache():
    t0 = time.time()
    ncase = 0
    nb, bs, H, D, T = 12, 16, 4, 32, 53
    configs = []
    for dt in (torch.float32, torch.float16, torch.bfloat16, torch.int8, torch.uint8,
               torch.int32):
        for lay in ("blocks", "hnd", "xsplit", "nz"):
            configs.append((dt, None, lay, None))
    for src in (torch.float32, torch.float16, torch.bfloat16):
        for fmt in ("fp8_e4m3fn", "fp8_e5m2"):
            for lay, sc in (("blocks", "[H]"), ("hnd", "[]"), ("xsplit", "[1]"), ("nz", "[H]")):
                configs.append((src, fmt, lay, sc))
    configs.append(("fp8bits", "fp8_e4m3fn", "blocks", None))  # fp8 -> fp8 bit copy
    configs.append(("fp8bits", "fp8_e5m2", "xsplit", None))
    for ci, (dt, fmt, lay, sc) in enumerate(configs):
        fp8_src = dt == "fp8bits"
        sdt = torch.uint8 if fp8_src else dt
        cdt = torch.uint8 if fmt else dt
        # key / value: views of a fused qkv tensor [T, 3H, D] (strided rows)
        qkv = rand_fill((T, 3 * H, D), sdt)
        if sdt.is_floating_point and ci % 3 == 0:
            qkv[1, 0, :4] = torch.tensor([1e6, -1e6, INF, -INF])  # saturation for fp8
            qkv[2, 0, :2] = torch.tensor([0.0, -0.0])
        key, value = qkv[:, :H], qkv[:, H:2 * H]
        k_only = ci % 7 == 3
        sl = torch.randperm(nb * bs, generator=GEN)[:T]
        sl[::9] = -1                         # padding tokens
        sl[5] = sl[20]                       # a duplicate: token 20 wins
        sdt_slots = torch.int32 if ci % 2 else torch.int64
        slots = strided_1d(sl, sdt_slots) if ci % 4 == 1 else sl.to(sdt_slots)
        kl, vl = ("xsplit_k", "xsplit_v") if lay == "xsplit" else (
            ("blocks", "blocks") if lay in ("blocks", "hnd") else ("nz", "nz"))
        fill = rand_fill
        if fmt:   # random fp8 codes without NaNs (gather would read them)
            nan_codes = torch.isnan(fp8_table(fmt))

            def fill(shape, dt, nan_codes=nan_codes):
                c = rand_fill(shape, torch.uint8)
                return c.masked_fill(nan_codes[c.long()], 0)
        if fp8_src:
            qkv = fill((T, 3 * H, D), torch.uint8)
            key, value = qkv[:, :H], qkv[:, H:2 * H]
        kc = make_cache(kl, nb, bs, H, D, cdt, fill, hnd=(lay == "hnd"))
        vc = None if k_only else make_cache(vl, nb, bs, H, D, cdt, fill, hnd=(lay == "hnd"))
        ks, ksh = scale_arg(sc, H)
        vs, vsh = scale_arg(sc, H)
        # golden
        ts, ss = last_wins(sl)
        bidx, oidx = ss // bs, ss % bs

        def conv(src, scale_h):
            if fmt is None or fp8_src:
                return src
            q = src.float() / scale_h.view(1, H, 1).float()     # f32 division
            return fp8_encode(q, fmt)

        ek = kc.clone()
        kv_assign(ek, kl, bidx, oidx, conv(key[ts], ksh))
        ev = None
        if vc is not None:
            ev = vc.clone()
            kv_assign(ev, vl, bidx, oidx, conv(value[ts], vsh))
        wrap = (lambda a: llmk.view(a, fmt)) if fmt else (lambda a: a)
        wsrc = (lambda a: llmk.view(a, fmt)) if fp8_src else (lambda a: a)
        llayout = {"blocks": "blocks", "hnd": "blocks", "xsplit": "xsplit", "nz": "nz"}[lay]
        llmk.scatter_pa_kv_cache(wsrc(key), None if k_only else wsrc(value), wrap(kc),
                                 None if k_only else wrap(vc), slots, k_scale=ks,
                                 v_scale=None if k_only else vs, layout=llayout,
                                 ctx=2 if ci % 2 else None)
        what = "scatter src=%s cache=%s layout=%s scale=%s slots=%s%s" % (
            dt, fmt or cdt, lay, sc, sdt_slots, " K-only" if k_only else "")
        same_bits(kc, ek, what + " key_cache")
        if vc is not None:
            same_bits(vc, ev, what + " value_cache")
        ncase += 1
        # gather back: random block tables over the blocks, seq lens within them
        Bq, mb = 3, 4
        bt = torch.stack([torch.randperm(nb, generator=GEN)[:mb] for _ in range(Bq)])
        lens = torch.randint(0, mb * bs + 1, (Bq,), generator=GEN)
        lens[0] = mb * bs
        tot = int(lens.sum())
        pos_b, pos_o = [], []
        for i in range(Bq):
            p = torch.arange(int(lens[i]))
            pos_b.append(bt[i, p // bs])
            pos_o.append(p % bs)
        pb, po = torch.cat(pos_b), torch.cat(pos_o)
        odt = torch.float32 if (fmt and not fp8_src) else cdt
        if fmt and not fp8_src and ci % 2:
            odt = dt

        def deconv(codes, scale_h):
            if fmt is None or fp8_src:
                return codes
            return (fp8_decode(codes, fmt) * scale_h.view(1, H, 1).float()).to(odt)

        exk = deconv(kv_read(kc, kl, pb, po, H, D), ksh)
        ko = torch.full((tot, H, D + 5), 3, dtype=odt)[:, :, :D]   # strided out
        vo = None
        if vc is not None:
            exv = deconv(kv_read(vc, vl, pb, po, H, D), vsh)
            vo = torch.empty((tot, H, D), dtype=odt)
        btt = bt.to(rand_int_dtype())
        r = llmk.gather_pa_kv_cache(wrap(kc), None if k_only else wrap(vc), btt,
                                    lens.to(rand_int_dtype()), k_scale=ks,
                                    v_scale=None if k_only else vs,
                                    key_out=wsrc(ko) if fp8_src else ko,
                                    value_out=(wsrc(vo) if fp8_src else vo) if vo is not None
                                    else None,
                                    layout=llayout)
        what = "gather cache=%s out=%s layout=%s" % (fmt or cdt, odt, lay)
        rk = r if vo is None else r[0]
        check(c_unwrap(rk) is ko and (vo is None or c_unwrap(r[1]) is vo),
              what + " returns its outputs")
        same_bits(ko, exk, what + " key_out")
        if vo is not None:
            same_bits(vo, exv, what + " value_out")
    # fp8 rounding on every code's value, every midpoint (ties to even) and its f32
    # neighbours, beyond the largest finite value and infinities; scale 1 (a bit-exact
    # quotient), every source dtype
    for fmt in ("fp8_e4m3fn", "fp8_e5m2"):
        tab = fp8_table(fmt)
        nfin = 127 if fmt == "fp8_e4m3fn" else 124
        v = tab[:nfin].float()
        mid = ((tab[:nfin - 1] + tab[1:nfin]) / 2).float()
        up = torch.nextafter(mid, torch.full_like(mid, INF))
        dn = torch.nextafter(mid, torch.full_like(mid, -INF))
        big = torch.tensor([v[-1] * 1.01, v[-1] * 1.07, 1e30, INF])
        allv = torch.cat([v, mid, up, dn, big])
        allv = torch.cat([allv, -allv])
        for sdt in (torch.float32, torch.float16, torch.bfloat16):
            src = allv.to(sdt)
            n = (src.numel() + 31) // 32 * 32
            src = torch.cat([src, torch.zeros(n - src.numel(), dtype=sdt)]).view(-1, 1, 32)
            cache = torch.zeros(src.shape[0], 1, 1, 32, dtype=torch.uint8)
            llmk.scatter_pa_kv_cache(src, None, llmk.view(cache, fmt), None,
                                     torch.arange(src.shape[0]), k_scale=1.0)
            same_bits(cache.view(-1, 1, 32), fp8_encode(src.float(), fmt),
                      "scatter fp8 rounding %s from %s (values, midpoints, neighbours)" % (
                          fmt, sdt))
            back = torch.empty(src.shape, dtype=sdt)
            llmk.gather_pa_kv_cache(llmk.view(cache, fmt), None,
                                    torch.arange(src.shape[0]).view(1, -1),
                                    torch.tensor([src.shape[0]]), k_scale=1.0, key_out=back)
            same_bits(back, fp8_decode(cache.view(-1, 1, 32), fmt).to(sdt),
                      "gather fp8 %s to %s" % (fmt, sdt))
    # Dv != Dk, and a bf16 value cache beside an fp8 key cache
    key = torch.randn(T, H, D, generator=GEN).to(torch.bfloat16)
    value = torch.randn(T, H, 16, generator=GEN).to(torch.bfloat16)
    sl = torch.randperm(nb * bs, generator=GEN)[:T]
    kc = torch.zeros(nb, bs, H, D, dtype=torch.uint8)
    vc = torch.zeros(nb, bs, H, 16, dtype=torch.bfloat16)
    ek, ev = kc.clone(), vc.clone()
    ek.view(-1, H, D)[sl] = fp8_encode(key.float() / 0.5, "fp8_e4m3fn")
    ev.view(-1, H, 16)[sl] = value
    llmk.scatter_pa_kv_cache(key, value, llmk.view(kc, "fp8_e4m3fn"), vc, sl, k_scale=0.5)
    same_bits(kc, ek, "scatter fp8 key cache beside bf16 value cache (Dv=16)")
    same_bits(vc, ev, "scatter bf16 value cache beside fp8 key cache (Dv=16)")
    # round trip bf16 through gather (allocated outputs)
    kc2 = torch.zeros(nb, bs, H, D, dtype=torch.bfloat16)
    vc2 = torch.zeros(nb, bs, H, 16, dtype=torch.bfloat16)
    sl = torch.arange(T) + 3
    llmk.scatter_pa_kv_cache(key, value, kc2, vc2, sl)
    bt = torch.arange(nb, dtype=torch.int32).view(1, nb)
    full = torch.cat([torch.zeros(3, H, D, dtype=torch.bfloat16), key])
    ko, vo = llmk.gather_pa_kv_cache(kc2, vc2, bt, torch.tensor([T + 3], dtype=torch.int32))
    same_bits(ko, full, "scatter then gather bf16 round trip (key)")
    same_bits(vo[3:], value, "scatter then gather bf16 round trip (value)")
    # NumPy f16
    if np is not None:
        key = torch.randn(T, H, D, generator=GEN).half()
        kc = torch.zeros(nb, bs, H, D, dtype=torch.float16)
        sl = torch.randperm(nb * bs, generator=GEN)[:T]
        ek = kc.clone()
        ek.view(-1, H, D)[sl] = key
        kn = kc.numpy()
        llmk.scatter_pa_kv_cache(key.numpy(), None, kn, None, sl.numpy().astype(np.int32))
        same_bits(torch.from_numpy(kn), ek, "scatter numpy f16 K-only")
    # errors: a slot past the cache, nothing written
    key = torch.randn(4, H, D, generator=GEN)
    kc = torch.zeros(nb, bs, H, D)
    expect_error(lambda: llmk.scatter_pa_kv_cache(key, None, kc, None,
                                                  torch.tensor([0, 1, nb * bs, 2])),
                 "LLMK_ERROR_INVALID_VALUE", "scatter slot out of range", "slot")
    check(bool((kc == 0).all()), "scatter error leaves the cache unchanged")
    expect_error(lambda: llmk.scatter_pa_kv_cache(key, None, kc, None,
                                                  torch.tensor([0.0, 1, 2, 3])),
                 "LLMK_ERROR_INVALID_DTYPE", "scatter float slot_mapping")
    print("kv cache: %d scatter+gather cases, %.1f s" % (ncase, time.time() - t0))


# ============================================================================ advance_step

def ref_advance_step(tok, samp, pos, sl, slot, bt, spec, acc, num_seqs, nq, bs):
    """The spec's formulas; returns the expected (tokens, positions, seq_lens, slots), i64."""
    tok, pos, sl, slot = (t.long().clone() for t in (tok, pos, sl, slot))
    bt, samp = bt.long(), samp.long()
    if spec is None:
        s2 = samp if samp.dim() == 1 else samp[:, 0]
        q = torch.arange(nq)
        p = sl[:nq].clone()
        tok[:nq] = s2[:nq]
        pos[:nq] = p
        sl[:nq] = p + 1
        slot[:nq] = bt[q, p // bs] * bs + p % bs
        tok[nq:num_seqs] = 0
        pos[nq:num_seqs] = 0
        slot[nq:num_seqs] = -1
    else:
        T = spec.shape[1] + 1
        row = torch.arange(num_seqs).repeat_interleave(T)
        p = pos + acc.long()[row] + 1
        pos = p
        sl = p + 1
        slot = bt[row, p // bs] * bs + p % bs
        first_neg = torch.where(samp == -1, torch.arange(T).expand_as(samp),
                                torch.full_like(samp, T)).min(1).values
        last = samp[torch.arange(num_seqs), first_neg - 1]
        tv = tok.view(num_seqs, T)
        tv[:, 0] = last
        tv[:, 1:] = spec.long()
    return tok, pos, sl, slot


def test_advance_step():
    t0 = time.time()
    ncase = 0
    for trial in range(16):
        spec_mode = trial % 2 == 1
        num_seqs = int(torch.randint(1, 40, (1,), generator=GEN))
        bs = int(torch.randint(1, 33, (1,), generator=GEN))
        mb = int(torch.randint(1, 9, (1,), generator=GEN))
        S = int(torch.randint(1, 4, (1,), generator=GEN)) if spec_mode else 0
        T = S + 1
        if spec_mode:
            mb = max(mb, (T + 3 + bs - 1) // bs)
        nq = num_seqs if spec_mode else int(torch.randint(0, num_seqs + 1, (1,), generator=GEN))
        dts = [rand_int_dtype() for _ in range(8)]
        strided = trial % 3 == 0
        mk = (lambda v, d: strided_1d(v, d, 3)) if strided else (lambda v, d: v.to(d).clone())
        btv = torch.randint(0, 1000, (num_seqs, mb), generator=GEN)
        if trial % 4 == 0:   # padded rows
            bt = torch.zeros(num_seqs, mb + 3, dtype=dts[5])[:, :mb]
            bt.copy_(btv)
        elif trial % 4 == 2:  # a transposed view
            bt = btv.to(dts[5]).t().contiguous().t()
        else:
            bt = btv.to(dts[5])
        if not spec_mode:
            n = num_seqs
            slv = torch.randint(0, mb * bs, (n,), generator=GEN)
            samp = torch.randint(0, 150000, (nq, 1), generator=GEN).to(dts[1])
            if trial % 4 == 2:
                samp = samp.view(-1)
            spec = acc = None
            posv = torch.randint(0, 100, (n,), generator=GEN)
        else:
            n = num_seqs * T
            posv = torch.randint(0, mb * bs - T, (n,), generator=GEN)   # pos + acc + 1 < mb*bs
            accv = torch.randint(0, T, (num_seqs,), generator=GEN)
            slv = torch.randint(0, 100, (n,), generator=GEN)
            samp = torch.randint(0, 150000, (num_seqs, T), generator=GEN)
            for i in range(num_seqs):  # rejected tail positions are -1
                f = int(torch.randint(1, T + 1, (1,), generator=GEN))
                samp[i, f:] = -1
            samp = samp.to(dts[1])
            spec = torch.randint(0, 150000, (num_seqs, S), generator=GEN).to(dts[6])
            acc = mk(accv, dts[7])
        tok = mk(torch.randint(0, 9, (n,), generator=GEN), dts[0])
        pos = mk(posv, dts[2])
        sl = mk(slv, dts[3])
        slot = mk(torch.randint(0, 9, (n,), generator=GEN), dts[4])
        exp = ref_advance_step(tok, samp, pos, sl, slot, bt, spec, acc, num_seqs, nq, bs)
        llmk.advance_step(tok, samp, pos, sl, slot, bt, spec_token=spec, accepted_num=acc,
                          num_seqs=num_seqs, num_queries=nq, block_size=bs)
        what = "advance_step %s seqs=%d nq=%d bs=%d mb=%d S=%d strided=%d dtypes=%s" % (
            "spec" if spec_mode else "plain", num_seqs, nq, bs, mb, S, strided,
            "".join("4" if d == torch.int32 else "8" for d in dts))
        for name, got, e in zip(("input_tokens", "input_positions", "seq_lens", "slot_mapping"),
                                (tok, pos, sl, slot), exp):
            same_bits(got, e.to(got.dtype), what + " " + name)
        ncase += 1
    # the spec's samples
    tok = torch.tensor([2926, 279, 12095, 1588])
    sl = torch.tensor([6, 8, 6, 6])
    pos = torch.tensor([5, 7, 5, 5])
    slot = torch.zeros(4, dtype=torch.int64)
    llmk.advance_step(tok, torch.tensor([[13], [1968], [13], [13]]), pos, sl, slot,
                      torch.tensor([[0], [1], [2], [3]]), block_size=128)
    check(tok.tolist() == [13, 1968, 13, 13] and pos.tolist() == [6, 8, 6, 6]
          and sl.tolist() == [7, 9, 7, 7] and slot.tolist() == [6, 136, 262, 390],
          "advance_step vllm-ascend sample")
    r = torch.cat([torch.arange(8)] * 2)
    pos, sl, slot, tok = r.clone(), r.clone(), r.clone(), r.clone()
    samp = torch.cat([torch.arange(8)] * 2).view(8, 2)
    llmk.advance_step(tok, samp, pos, sl, slot, torch.full((8, 1000), 7),
                      spec_token=torch.arange(8).view(8, 1), accepted_num=torch.arange(8),
                      block_size=8)
    check(tok.tolist() == [1, 0, 3, 1, 5, 2, 7, 3, 1, 4, 3, 5, 5, 6, 7, 7]
          and pos.tolist() == [1, 2, 4, 5, 7, 8, 10, 11, 5, 6, 8, 9, 11, 12, 14, 15]
          and sl.tolist() == [p + 1 for p in pos.tolist()]
          and slot.tolist() == [57, 58, 60, 61, 63, 56, 58, 59, 61, 62, 56, 57, 59, 60, 62, 63],
          "advance_step CANN V2 sample")
    # NumPy, i32
    if np is not None:
        tok = np.zeros(4, np.int32)
        sl = np.array([6, 8, 6, 6], np.int32)
        pos = np.zeros(4, np.int64)
        slot = np.zeros(4, np.int32)
        llmk.advance_step(tok, np.array([[13], [1968], [13], [13]], np.int64), pos, sl, slot,
                          np.array([[0], [1], [2], [3]], np.int32), block_size=128)
        check(tok.tolist() == [13, 1968, 13, 13] and slot.tolist() == [6, 136, 262, 390],
              "advance_step numpy")
    # errors: block past the table, nothing written
    sl = torch.tensor([6, 200])
    tok, pos, slot = torch.zeros(2, dtype=torch.int64), torch.zeros(2, dtype=torch.int64), \
        torch.zeros(2, dtype=torch.int64)
    expect_error(lambda: llmk.advance_step(tok, torch.tensor([[1], [2]]), pos, sl, slot,
                                           torch.tensor([[0], [1]]), block_size=128),
                 "LLMK_ERROR_INVALID_VALUE", "advance_step block past the table",
                 "seq_lens[1]")
    check(sl.tolist() == [6, 200] and tok.tolist() == [0, 0] and slot.tolist() == [0, 0],
          "advance_step error leaves everything unchanged")
    expect_error(lambda: llmk.advance_step(tok, torch.tensor([[1], [2]]), pos, sl, slot,
                                           torch.tensor([[0], [1]]), block_size=0),
                 "LLMK_ERROR_INVALID_ATTRIBUTE", "advance_step block_size 0")
    print("advance_step: %d cases, %.1f s" % (ncase, time.time() - t0))


# ============================================================================ causal conv1d

def ulp_of(v, dtype):
    """One unit in the last place of dtype at |v| (v f32)."""
    mant, emin = {torch.float32: (23, -126), torch.float16: (10, -14),
                  torch.bfloat16: (7, -126)}[dtype]
    _, e = torch.frexp(v.abs().clamp(min=1e-38))
    e = torch.clamp(e - 1, min=emin)
    return torch.ldexp(torch.ones_like(v), (e - mant).to(torch.int32))


def ref_conv1d(x, weight, states, qsl=None, ci=None, nacc=None, nct=None, first=None,
               last=None, init=None, bias=None, pad=-1, residual=0, block_size=0,
               conv_mode=0, silu=False):
    """The spec, per sequence. Returns (y_direct f32, y_conv f32 (F.conv1d), magnitude
    (sum |w*xp| + |bias| + |x| if residual), expected states (x's dtype),
    rows of skipped sequences)."""
    dim = x.shape[-1]
    K = weight.shape[0]
    C = states.shape[1]
    x2 = x.reshape(-1, dim)
    if qsl is not None:
        bounds = qsl.long().tolist()
    else:
        bt_, S = x.shape[0], x.shape[1]
        bounds = [i * S for i in range(bt_ + 1)]
    nb = len(bounds) - 1
    wf = weight.float()
    st = states.clone()
    yd = x2.float().clone()
    yc = x2.float().clone()
    mag = torch.zeros_like(yd)
    skipped = []
    apc = first is not None
    for b in range(nb):
        s, e = bounds[b], bounds[b + 1]
        L = e - s
        if apc:
            R = int(ci[b, int(init[b])])
            W = int(ci[b, int(last[b])])
        else:
            R = W = int(ci[b]) if ci is not None else b
        if R == pad:
            skipped.append((s, e))
            continue
        if nct is not None and int(nct[b]) == 0:
            offset = 0
            hist = torch.zeros(K - 1, dim, dtype=x.dtype)
        elif nacc is not None:
            offset = max(int(nacc[b]) - 1, 0)
            hist = states[R, : offset + K - 1]
        else:
            offset = C - (K - 1)
            hist = states[R, :C]
        xb = x2[s:e]
        padded = torch.cat([hist, xb])
        Len = padded.shape[0]
        xp = padded[offset:]
        M = min(C, Len)
        if W != pad:
            st[W, C - M:] = padded[Len - M:]
        if apc:
            B = block_size
            n_ = int(nct[b])
            seo = (L - (B - n_ % B)) % B
            last_full = L - seo - (B if seo == 0 else 0)
            n = int(last[b]) - int(first[b])
            for c in range(n):
                bdy = last_full - (n - 1 - c) * B
                line = int(ci[b, int(first[b]) + c])
                if line != pad:
                    st[line, C - (K - 1):] = xp[bdy: bdy + K - 1]
        xpf = xp.float()
        y = wf[0] * xpf[0:L]                               # f32, in order, no FMA
        m = (wf[0] * xpf[0:L]).abs()
        for k in range(1, K):
            y = y + wf[k] * xpf[k:k + L]
            m = m + (wf[k] * xpf[k:k + L]).abs()
        y2 = F.conv1d(xpf.t().unsqueeze(0), wf.t().unsqueeze(1), groups=dim)[0].t()
        if bias is not None:
            y = y + bias.float()
            y2 = y2 + bias.float()
            m = m + bias.float().abs()
        if silu:
            y = y / (1 + torch.exp(-y))
            y2 = y2 / (1 + torch.exp(-y2))
        if conv_mode == 1:
            r = min(max(K - 1 - int(nct[b]), 0), L)
            y[:r] = 0
            y2[:r] = 0
        if residual:
            y = xb.float() + y
            y2 = xb.float() + y2
            m = m + xb.float().abs()
        yd[s:e] = y
        yc[s:e] = y2
        mag[s:e] = m
    return yd, yc, mag, st, skipped


def conv_compare(x_got, x_orig, states_got, ref, silu, what):
    yd, yc, mag, st, skipped = ref
    dtype = x_got.dtype
    got = x_got.reshape(-1, x_got.shape[-1])
    same_bits(states_got, st, what + " conv_states")
    for (s, e) in skipped:
        same_bits(got[s:e], x_orig.reshape(-1, x_orig.shape[-1])[s:e], what + " skipped rows")
    gf = got.float()
    # F.conv1d (own accumulation order / FMA): rtol 1e-5 of the magnitude + 1 ulp of dtype
    tol = 1e-5 * mag + ulp_of(yc, dtype)
    dev = (gf - yc).abs()
    worst = (dev / tol.clamp(min=1e-30)).max().item()
    dn = str(dtype).replace("torch.", "") + (", silu" if silu else "")
    if dtype == torch.float32:  # relative to sum |w*xp| (+|bias|, +|x|): cancellation-proof
        note_dev("conv vs F.conv1d, f32: max |diff| / magnitude (%s)" % dn,
                 (dev / mag.clamp(min=1e-30)).max().item())
    else:                       # after rounding to the output dtype
        note_dev("conv vs F.conv1d: max |diff| in ulps of the output (%s)" % dn,
                 (dev / ulp_of(yc, dtype)).max().item())
    if not check(worst <= 1.0, "%s vs F.conv1d: max deviation %.3g of tolerance" % (what, worst)):
        i = int((dev / tol).argmax())
        r, c = divmod(i, got.shape[1])
        print("   row %d ch %d: expected %r got %r" % (r, c, yc[r, c].item(), gf[r, c].item()))
    # the direct f32 formulation of the spec: bit-exact without SiLU
    if not silu:
        same_bits(got, yd.to(dtype), what + " vs direct f32 formula (bits)")
    else:
        tol = 1e-6 * mag + ulp_of(yd, dtype)
        worst = ((gf - yd).abs() / tol).max().item()
        if dtype == torch.float32:
            note_dev("conv vs direct formula, f32, SiLU: max |diff| / magnitude",
                     ((gf - yd).abs() / mag.clamp(min=1e-30)).max().item())
        else:
            note_dev("conv vs direct formula, SiLU: max |diff| in ulps of the output (%s)" % dn,
                     ((gf - yd).abs() / ulp_of(yd, dtype)).max().item())
        check(worst <= 1.0, "%s vs direct formula with SiLU: %.3g of tolerance" % (what, worst))


def conv_case(what, x, weight, states, silu=False, **kw):
    x0, s0 = x.clone(), states.clone()
    ref = ref_conv1d(x0, weight, s0, silu=silu, pad=kw.get("pad_slot_id", -1),
                     **{k: v for k, v in kw.items() if k in
                        ("qsl", "ci", "nacc", "nct", "first", "last", "init", "bias",
                         "residual", "block_size", "conv_mode")})
    args = dict(query_start_loc=kw.get("qsl"), cache_indices=kw.get("ci"),
                num_accepted_tokens=kw.get("nacc"), num_computed_tokens=kw.get("nct"),
                block_idx_first_scheduled_token=kw.get("first"),
                block_idx_last_scheduled_token=kw.get("last"),
                initial_state_idx=kw.get("init"), bias=kw.get("bias"),
                pad_slot_id=kw.get("pad_slot_id", -1), max_query_len=kw.get("mql", -1),
                residual_connection=kw.get("residual", 0), block_size=kw.get("block_size", 0),
                conv_mode=kw.get("conv_mode", 0), activation="silu" if silu else None,
                ctx=kw.get("ctx"))
    r = llmk.fused_causal_conv1d(x, weight, states, **args)
    check(r is x, what + " returns x")
    conv_compare(x, x0, states, ref, silu, what)
    return ref


def strided_rows(t, pad=8):
    """A copy of t whose last dim is padded (rows strided, last stride 1)."""
    shape = list(t.shape)
    base = torch.full(shape[:-1] + [shape[-1] + pad], 9, dtype=t.dtype)
    v = base[..., : shape[-1]]
    v.copy_(t)
    return v


def test_causal_conv1d():
    t0 = time.time()
    ncase = 0
    dim = 160
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        sn = str(dtype).replace("torch.", "")
        for K in (2, 3, 4):
            # 1. prefill, varlen: C = K-1, nct 0 (zero history) or > 0 (the line), a pad line
            lens = [5, 3, 7, 4, 1]
            qsl = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32)
            Tn = qsl[-1].item()
            for silu in (False, True):
                for wdt in ((dtype, torch.float32) if dtype != torch.float32 else (dtype,)):
                    x = strided_rows(torch.randn(Tn, dim, generator=GEN).to(dtype))
                    w = (torch.randn(K, dim, generator=GEN) * 0.5).to(wdt)
                    states = (torch.randn(8, K - 1, dim, generator=GEN)).to(dtype)
                    ci = torch.tensor([0, 3, -1, 5, 6], dtype=torch.int64)
                    nct = strided_1d([0, 3, 9, 5, 0], torch.int32)
                    bias = strided_1d(torch.randn(dim, generator=GEN), wdt)
                    conv_case("conv prefill %s K=%d w=%s silu=%d" % (sn, K, wdt, silu), x, w,
                              states, silu=silu, qsl=qsl, ci=ci, nct=nct, bias=bias, mql=7,
                              ctx=2)
                    ncase += 1
            # no num_computed_tokens: history always from the line
            x = torch.randn(Tn, dim, generator=GEN).to(dtype)
            w = torch.randn(K, dim, generator=GEN).to(dtype)
            states = torch.randn(6, K - 1, dim, generator=GEN).to(dtype)
            conv_case("conv prefill (no nct, lines 0..b) %s K=%d" % (sn, K), x, w, states,
                      qsl=qsl.to(torch.int64))
            ncase += 1
            # 2. mixed prefill + decode with nacc, C = K-1+m
            m = 3
            C = K - 1 + m
            lens = [6, 1, 3, 4, 2]
            qsl = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int64)
            x = torch.randn(int(qsl[-1]), dim, generator=GEN).to(dtype)
            w = torch.randn(K, dim, generator=GEN).to(dtype)
            base = torch.randn(20, C + 2, dim + 4, generator=GEN).to(dtype)
            ci = torch.tensor([1, 4, 7, 2, 9], dtype=torch.int32)
            nacc = torch.tensor([0, 1, 3, C - K + 2, 2], dtype=torch.int32)
            for silu in (False, True):
                xs = x.clone()
                ss = base.clone()[::2, :C, :dim]      # strided lines, rows and channels
                conv_case("conv mixed nacc %s K=%d silu=%d (strided states)" % (sn, K, silu), xs,
                          w, ss, silu=silu, qsl=qsl, ci=ci, nacc=nacc)
                ncase += 1
            # 3. decode, fixed batch: x [batch, m+1, dim], strided tokens
            S = m + 1
            xb = torch.randn(5, S + 2, dim, generator=GEN).to(dtype)[:, 1:S + 1]
            states = torch.randn(7, C, dim, generator=GEN).to(dtype)
            ci = torch.tensor([6, 0, 3, -1, 2], dtype=torch.int64)
            nacc = torch.tensor([1, 2, 4, 3, 0], dtype=torch.int64)
            conv_case("conv decode 3-D %s K=%d (strided x)" % (sn, K), xb, w, states,
                      ci=ci, nacc=nacc, mql=S, ctx=2)
            ncase += 1
            # m = 0 plain decode without nacc
            x1 = torch.randn(6, 1, dim, generator=GEN).to(dtype)
            st1 = torch.randn(6, K - 1, dim, generator=GEN).to(dtype)
            conv_case("conv decode S=1 %s K=%d" % (sn, K), x1, w, st1, silu=True,
                      bias=torch.randn(dim, generator=GEN).to(dtype))
            ncase += 1
            # 4. conv_mode 1 + residual
            lens = [4, 1, 6, 3]
            qsl = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32)
            x = torch.randn(int(qsl[-1]), dim, generator=GEN).to(dtype)
            states = torch.randn(4, K - 1, dim, generator=GEN).to(dtype)
            for silu in (False, True):
                conv_case("conv conv_mode=1 residual %s K=%d silu=%d" % (sn, K, silu), x.clone(),
                          w, states.clone(), silu=silu, qsl=qsl, nct=torch.tensor([0, 1, 2, 7]),
                          conv_mode=1, residual=1)
                ncase += 1
            conv_case("conv residual only %s K=%d" % (sn, K), x.clone(), w, states.clone(),
                      qsl=qsl, residual=1)
            ncase += 1
        # 5. APC: the spec's worked example, K = 3
        K, C, B = 3, 2, 4
        x = torch.randn(9, dim, generator=GEN).to(dtype)
        w = torch.randn(K, dim, generator=GEN).to(dtype)
        states = torch.randn(9, C, dim, generator=GEN).to(dtype)
        s0 = states.clone()
        ci = torch.tensor([[5, 6, 7]], dtype=torch.int32)
        conv_case("conv APC worked example %s" % sn, x.clone(), w, states,
                  qsl=torch.tensor([0, 9]), ci=ci, nct=torch.tensor([2]),
                  first=torch.tensor([0]), last=torch.tensor([2]), init=torch.tensor([0]),
                  block_size=B)
        same_bits(states[5], x[0:2], "conv APC worked example line 5 = x[0], x[1] %s" % sn)
        same_bits(states[6], x[4:6], "conv APC worked example line 6 = x[4], x[5] %s" % sn)
        same_bits(states[7], x[7:9], "conv APC worked example line 7 = x[7], x[8] %s" % sn)
        same_bits(states[:5], s0[:5], "conv APC worked example other lines %s" % sn)
        # nct = 3: block 0's line gets history row 1 and x[0]
        states = s0.clone()
        conv_case("conv APC nct=3 %s" % sn, x.clone(), w, states, qsl=torch.tensor([0, 9]),
                  ci=ci, nct=torch.tensor([3]), first=torch.tensor([0]), last=torch.tensor([2]),
                  init=torch.tensor([0]), block_size=B)
        same_bits(states[5], torch.stack([s0[5, 1], x[0]]), "conv APC nct=3 line 5 %s" % sn)
        ncase += 2
        # random APC, several sequences, K = 3 and 4, with nacc-free history and SiLU
        for K in (3, 4):
            C = K - 1
            for B in (4, 8):
                nseq, mbk = 3, 6
                nctv = [0, 5, 2 * B]
                lens = [2 * B + 1, B + 3, 3]
                qsl = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)))
                firsts = [n // B for n in nctv]
                lasts = [(n + L - 1) // B for n, L in zip(nctv, lens)]
                inits = [max(n - 1, 0) // B for n in nctv]
                lines = torch.randperm(30, generator=GEN)[: nseq * mbk].view(nseq, mbk)
                ci2 = lines.to(torch.int32)
                x = torch.randn(int(qsl[-1]), dim, generator=GEN).to(dtype)
                w = torch.randn(K, dim, generator=GEN).to(dtype)
                states = torch.randn(30, C + 1, dim, generator=GEN).to(dtype)[:, 1:]
                conv_case("conv APC random %s K=%d B=%d" % (sn, K, B), x, w, states, silu=True,
                          qsl=qsl, ci=ci2, nct=torch.tensor(nctv),
                          first=torch.tensor(firsts, dtype=torch.int32),
                          last=torch.tensor(lasts), init=torch.tensor(inits), block_size=B,
                          ctx=2)
                ncase += 1
    # the spec's sample (CANN doc): x all 1, w = [1, 0, 0], zero states
    x = torch.ones(19, 128, dtype=torch.float16)
    w = torch.zeros(3, 128, dtype=torch.float16)
    w[0] = 1
    st = torch.zeros(8, 2, 128, dtype=torch.float16)
    llmk.fused_causal_conv1d(x, w, st, query_start_loc=[0, 5, 8, 15, 19],
                             cache_indices=[0, 3, 1, 5], num_accepted_tokens=[0, 0, 0, 0],
                             max_query_len=7)
    e = torch.ones(19, 128, dtype=torch.float16)
    for s in (0, 5, 8, 15):
        e[s:s + 2] = 0
    same_bits(x, e, "conv CANN sample x")
    check(bool((st[[0, 3, 1, 5]] == 1).all()) and bool((st[[2, 4, 6, 7]] == 0).all()),
          "conv CANN sample states")
    # NumPy f32 and bf16 (llmk.view)
    if np is not None:
        xt = torch.randn(7, 64, generator=GEN)
        wt = torch.randn(3, 64, generator=GEN)
        stt = torch.randn(2, 2, 64, generator=GEN)
        ref = ref_conv1d(xt, wt, stt, qsl=torch.tensor([0, 3, 7]))
        xn, sn_ = xt.numpy().copy(), stt.numpy().copy()
        llmk.fused_causal_conv1d(xn, wt.numpy(), sn_, query_start_loc=np.array([0, 3, 7]))
        same_bits(torch.from_numpy(xn), ref[0], "conv numpy f32 x")
        same_bits(torch.from_numpy(sn_), ref[3], "conv numpy f32 states")
        xb16 = xt.bfloat16()
        wb, sb = wt.bfloat16(), stt.bfloat16()
        ref = ref_conv1d(xb16, wb, sb, qsl=torch.tensor([0, 3, 7]))
        u = lambda t: t.view(torch.int16).numpy().view(np.uint16).copy()  # noqa: E731
        xn, wn, sn_ = u(xb16), u(wb), u(sb)
        llmk.fused_causal_conv1d(llmk.view(xn, "bf16"), llmk.view(wn, "bf16"),
                                 llmk.view(sn_, "bf16"), query_start_loc=np.array([0, 3, 7],
                                                                                  np.int32))
        back = lambda a: torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)  # noqa: E731
        same_bits(back(xn), ref[0].bfloat16(), "conv numpy bf16 x")
        same_bits(back(sn_), ref[3], "conv numpy bf16 states")
    # errors: a line out of range; nothing written
    x = torch.randn(4, 32)
    st = torch.randn(3, 2, 32)
    x0, s0 = x.clone(), st.clone()
    expect_error(lambda: llmk.fused_causal_conv1d(x, torch.randn(3, 32), st,
                                                  query_start_loc=torch.tensor([0, 2, 4]),
                                                  cache_indices=torch.tensor([0, 3])),
                 "LLMK_ERROR_INVALID_VALUE", "conv cache line out of range", "cache_indices")
    same_bits(x, x0, "conv error leaves x unchanged")
    same_bits(st, s0, "conv error leaves conv_states unchanged")
    expect_error(lambda: llmk.fused_causal_conv1d(x, torch.randn(3, 32), st),
                 "LLMK_ERROR_NULL_POINTER", "conv 2-D x without query_start_loc")
    expect_error(lambda: llmk.fused_causal_conv1d(x.t(), torch.randn(3, 4), st,
                                                  query_start_loc=torch.tensor([0, 32])),
                 "LLMK_ERROR_INVALID_SHAPE", "conv x last stride != 1")
    print("causal conv1d: %d cases, %.1f s" % (ncase, time.time() - t0))


# ============================================================================ package

def test_package():
    check(issubclass(llmk.Error, RuntimeError), "llmk.Error is a RuntimeError")
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                           "VERSION")) as f:
        want = f.readline().strip()
    check(llmk.__version__ == want and llmk.version() == want,
          "llmk.__version__ %s and version() %s are VERSION's %s" % (
              llmk.__version__, llmk.version(), want))
    with llmk.Context(2) as c:
        check(c.num_threads == 2, "Context(2).num_threads")
        l = make_logits(3, 500, torch.float32)
        o1 = llmk.apply_top_k_top_p(l, k=7, ctx=c)
        o2 = llmk.apply_top_k_top_p(l, k=7)
        same_bits(o1, o2, "Context(2) gives the single-thread result")
    try:
        llmk.apply_top_k_top_p(torch.zeros(2, 3, dtype=torch.float64), k=1)
        check(False, "float64 rejected")
    except TypeError:
        check(True, "float64 rejected")
    if np is not None:
        a = np.zeros((2, 8), np.float32)[:, ::-1]
        try:
            llmk.apply_top_k_top_p(a, k=1)
            check(False, "negative numpy strides rejected")
        except ValueError:
            check(True, "negative numpy strides rejected")


def test_torch_defaults():
    """What a torch caller expects: layout='hnd' takes the HND cache itself, ctx=None
    follows torch.get_num_threads(), torch.sort's i64 indices, and k=p=None is a no-op."""
    # HND: [num_blocks, H, block_size, D]; H == block_size is the case an NHD reading of
    # the same tensor gets wrong without an error.
    for H, bs in ((4, 4), (2, 8)):
        nb, D, T = 5, 16, 11
        key = torch.randn(T, H, D, generator=GEN)
        val = torch.randn(T, H, D, generator=GEN)
        slots = torch.randperm(nb * bs, generator=GEN)[:T]
        kc = torch.randn(nb, H, bs, D, generator=GEN)
        vc = torch.randn(nb, H, bs, D, generator=GEN)
        ek, ev = kc.clone(), vc.clone()
        ek[slots // bs, :, slots % bs] = key
        ev[slots // bs, :, slots % bs] = val
        llmk.scatter_pa_kv_cache(key, val, kc, vc, slots, layout="hnd")
        same_bits(kc, ek, "scatter layout='hnd' H=%d block_size=%d key_cache" % (H, bs))
        same_bits(vc, ev, "scatter layout='hnd' H=%d block_size=%d value_cache" % (H, bs))
        lens = torch.tensor([bs + 1, 2 * bs])
        bt = torch.tensor([[3, 1], [0, 4]])
        ko, vo = llmk.gather_pa_kv_cache(kc, vc, bt, lens, layout="hnd")
        pos = [(int(bt[i, j // bs]), j % bs) for i in range(2) for j in range(int(lens[i]))]
        same_bits(ko, torch.stack([kc[b, :, o] for b, o in pos]),
                  "gather layout='hnd' H=%d block_size=%d key_out" % (H, bs))
        same_bits(vo, torch.stack([vc[b, :, o] for b, o in pos]),
                  "gather layout='hnd' H=%d block_size=%d value_out" % (H, bs))
    try:
        llmk.scatter_pa_kv_cache(key, val, kc[0], vc[0], slots, layout="hnd")
        check(False, "layout='hnd' with a 3-D cache refused")
    except ValueError as e:
        check("hnd" in str(e), "layout='hnd' with a 3-D cache refused: %s" % e)
    # threads
    saved = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        check(llmk.default_num_threads() == 2, "ctx=None follows torch.set_num_threads(2)")
        torch.set_num_threads(1)
        check(llmk.default_num_threads() == 1, "ctx=None follows torch.set_num_threads(1)")
        llmk.set_num_threads(3)
        check(llmk.default_num_threads() == 3, "set_num_threads(3) overrides torch's count")
        llmk.set_num_threads(None)
        check(llmk.default_num_threads() == 1, "set_num_threads(None): torch's count again")
        l = make_logits(4, 3000, torch.float32)
        torch.set_num_threads(2)
        o2 = llmk.apply_top_k_top_p(l, k=9, p=0.8)
        torch.set_num_threads(1)
        o1 = llmk.apply_top_k_top_p(l, k=9, p=0.8)
        same_bits(o2, o1, "ctx=None with torch's 2 threads and with 1 give the same bits")
    finally:
        torch.set_num_threads(saved)
    # torch.sort's indices are i64
    l = make_logits(3, 700, torch.float32)
    sv, si = torch.sort(l, dim=-1, stable=True)
    check(si.dtype == torch.int64, "torch.sort gives i64 indices")
    o64 = llmk.apply_top_k_top_p_with_sorted(sv, si, p=0.7, k=20, logits=l)
    o32 = llmk.apply_top_k_top_p_with_sorted(sv, si.to(torch.int32), p=0.7, k=20, logits=l)
    same_bits(o64, o32, "with_sorted: i64 indices give the i32 result")
    same_bits(o64, llmk.apply_top_k_top_p(l, p=0.7, k=20), "with_sorted i64 == unsorted op")
    # nothing to filter
    check(llmk.apply_top_k_top_p(l) is l, "apply_top_k_top_p(logits) returns logits itself")
    o = torch.empty_like(l)
    check(llmk.apply_top_k_top_p(l, out=o) is o and torch.equal(o, l),
          "apply_top_k_top_p(logits, out=o) copies logits into o")


def test_torch_ops():
    """torch.ops.llmk.<op>: each op through the dispatcher gives the Python function's
    bits; jit.trace records the op; meta tensors get their shapes."""
    from llmk import _torch_ops
    ops = torch.ops.llmk
    for name in _torch_ops.OPS:
        check(hasattr(ops, name), "torch.ops.llmk.%s registered" % name)
    l = make_logits(3, 900, torch.float32)
    p = torch.tensor([0.8, 0.3, 1.0])
    k = torch.tensor([10, 900, 2], dtype=torch.int64)
    want = llmk.apply_top_k_top_p(l, p=p, k=k)
    same_bits(ops.apply_top_k_top_p(l, p, k), want, "torch.ops apply_top_k_top_p")
    same_bits(ops.apply_top_k_top_p(l, None, None), l, "torch.ops apply_top_k_top_p no p, k")
    li = l.clone()
    ops.apply_top_k_top_p_(li, p, k)
    same_bits(li, want, "torch.ops apply_top_k_top_p_ (in place)")
    mp = torch.tensor([0.1, 0.0, 0.5])
    same_bits(ops.apply_top_k_top_p_min_p(l, p, k, mp),
              llmk.apply_top_k_top_p_min_p(l, p=p, k=k, min_p=mp), "torch.ops min_p")
    sv, si = torch.sort(l, dim=-1, stable=True)
    same_bits(ops.apply_top_k_top_p_with_sorted(sv, si, p, k, l), want,
              "torch.ops with_sorted (torch.sort's i64 indices)")
    seed = torch.tensor([1, 2, 3])
    check(torch.equal(ops.sample_top_k_top_p(l, seed, p, k, None, None, None),
                      llmk.sample_top_k_top_p(l, p=p, k=k, seed=seed)),
          "torch.ops sample_top_k_top_p")
    # KV: NHD and HND, f16 and an fp8 (uint8) cache
    for layout in ("nhd", "hnd"):
        for cdt in ("auto", "fp8_e4m3fn"):
            nb, bs, H, D, T = 4, 8, 2, 16, 9
            key = torch.randn(T, H, D, generator=GEN).half()
            val = torch.randn(T, H, D, generator=GEN).half()
            slots = torch.randperm(nb * bs, generator=GEN)[:T]
            shape = (nb, bs, H, D) if layout == "nhd" else (nb, H, bs, D)
            dt = torch.float16 if cdt == "auto" else torch.uint8
            kc, vc = torch.zeros(shape, dtype=dt), torch.zeros(shape, dtype=dt)
            kc2, vc2 = kc.clone(), vc.clone()
            ks = None if cdt == "auto" else torch.tensor([0.5])
            wrap = (lambda t: t) if cdt == "auto" else (lambda t: llmk.view(t, cdt))
            ops.scatter_pa_kv_cache(key, val, kc, vc, slots, ks, ks, layout, cdt)
            llmk.scatter_pa_kv_cache(key, val, wrap(kc2), wrap(vc2), slots, k_scale=ks,
                                     v_scale=ks, layout=layout)
            what = "torch.ops scatter_pa_kv_cache %s %s" % (layout, cdt)
            same_bits(kc, kc2, what + " key_cache")
            same_bits(vc, vc2, what + " value_cache")
            bt = torch.tensor([[1, 3], [0, 2]])
            lens = torch.tensor([11, 5])
            odt = torch.float16
            ko, vo = torch.empty(16, H, D, dtype=odt), torch.empty(16, H, D, dtype=odt)
            ops.gather_pa_kv_cache(kc, vc, bt, lens, ko, vo, ks, ks, layout, cdt)
            ek, ev = llmk.gather_pa_kv_cache(wrap(kc), wrap(vc), bt, lens, k_scale=ks,
                                             v_scale=ks, key_out=torch.empty_like(ko),
                                             value_out=torch.empty_like(vo), layout=layout)
            what = "torch.ops gather_pa_kv_cache %s %s" % (layout, cdt)
            same_bits(ko, ek, what + " key_out")
            same_bits(vo, ev, what + " value_out")
    # advance_step
    n, bs = 5, 4
    bt = torch.arange(n * 3, dtype=torch.int32).view(n, 3)
    args = [torch.zeros(n, dtype=torch.int64), torch.arange(n, dtype=torch.int64).view(n, 1),
            torch.zeros(n, dtype=torch.int64), torch.tensor([1, 4, 5, 7, 2], dtype=torch.int32),
            torch.zeros(n, dtype=torch.int64)]
    a2 = [t.clone() for t in args]
    ops.advance_step(args[0], args[1], args[2], args[3], args[4], bt, None, None, n, n, bs)
    llmk.advance_step(a2[0], a2[1], a2[2], a2[3], a2[4], bt, num_seqs=n, num_queries=n,
                      block_size=bs)
    check(all(torch.equal(a, b) for a, b in zip(args, a2)), "torch.ops advance_step")
    # conv, in place
    x = torch.randn(2, 6, 32, generator=GEN)
    w = torch.randn(4, 32, generator=GEN)
    st = torch.randn(2, 3, 32, generator=GEN)
    x2, st2 = x.clone(), st.clone()
    ops.fused_causal_conv1d(x, w, st, None, torch.tensor([1, 0]), None, None, None,
                            None, None, None, -1, -1, 0, 0, 0, 1)
    llmk.fused_causal_conv1d(x2, w, st2, cache_indices=[1, 0], activation="silu")
    same_bits(x, x2, "torch.ops fused_causal_conv1d x")
    same_bits(st, st2, "torch.ops fused_causal_conv1d conv_states")
    # the v2 options: HEAD state, a separate y, has_initial_state, vLLM's (lines, dim, C)
    # state as a transposed view
    xs = torch.randn(2, 6, 32, generator=GEN)
    sv = torch.randn(2, 32, 5, generator=GEN)            # (lines, dim, C)
    sv2 = sv.clone()
    y1, y2 = torch.empty_like(xs), torch.empty_like(xs)
    hi = torch.tensor([True, False])
    ops.fused_causal_conv1d(xs, w, sv.transpose(1, 2), None, None, None, None, None, None,
                            None, None, -1, -1, 0, 0, 0, 1, y1, 1, hi, None)
    llmk.fused_causal_conv1d(xs, w, sv2.transpose(1, 2), activation="silu", y=y2,
                             state_align="head", has_initial_state=hi)
    same_bits(y1, y2, "torch.ops fused_causal_conv1d v2 y")
    same_bits(sv, sv2, "torch.ops fused_causal_conv1d v2 conv_states (HEAD)")
    # tracing and meta
    def f(x, p, k):
        return torch.ops.llmk.apply_top_k_top_p(x, p, k)
    tr = torch.jit.trace(f, (l, p, k))
    check("llmk::apply_top_k_top_p" in str(tr.graph), "jit.trace keeps llmk::apply_top_k_top_p")
    l2 = make_logits(3, 900, torch.float32)
    same_bits(tr(l2, p, k), llmk.apply_top_k_top_p(l2, p=p, k=k), "traced function's result")
    m = ops.apply_top_k_top_p(torch.empty(3, 900, device="meta"), p.to("meta"), k.to("meta"))
    check(m.device.type == "meta" and tuple(m.shape) == (3, 900), "meta shape inference")
    m = ops.sample_top_k_top_p(torch.empty(3, 900, device="meta"), seed.to("meta"), None,
                               None, None, None, None)
    check(tuple(m.shape) == (3,) and m.dtype == torch.int64, "meta: sample gives [B] i64")


def main():
    t0 = time.time()
    print("llmk %s (%s, isa %s, %s), torch %s, numpy %s" % (
        llmk.version(), llmk.library_path(), llmk.isa(), llmk.threading_runtime(),
        torch.__version__, np.__version__ if np is not None else "absent"))
    for fn in (test_package, test_torch_defaults, test_torch_ops, test_apply_top_k_top_p, test_min_p_with_sorted_sample, test_kv_cache,
               test_advance_step, test_causal_conv1d):
        try:
            fn()
        except Exception as e:  # a crash in one group is a failure, the others still run
            import traceback
            traceback.print_exc()
            check(False, "%s raised %r" % (fn.__name__, e))
    print("max deviations (every other comparison is bit-exact, conv without SiLU included):")
    for k in sorted(DEV):
        print("  %-70s %.3g" % (k, DEV[k]))
    print("%d checks, %d failures, %.1f s" % (STATS["checks"], STATS["failures"],
                                             time.time() - t0))
    if STATS["failures"]:
        print("FAILED:")
        for f in FAILS[:50]:
            print("  " + f)
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
