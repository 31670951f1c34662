#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""llmk._fast (python/llmk/_fast.c) against the ctypes path, in one process: on a grid of
shapes, dtypes, layouts, strides and thread counts the caches written through each path
are the same bits (and equal to a torch golden), refused calls raise the same llmk.Error
(status and message) and write nothing, and the calls the C module must leave to ctypes
(views, NumPy, HND, Python scales, subclasses) are declined by it untouched.
Exit 0: passed; 1: a check failed; 77: torch not importable or the C module not built."""

import os
import sys

fails = []
count = [0]


def check(cond, what):
    count[0] += 1
    if not cond:
        fails.append(what)
        print("FAIL " + what)


def main():
    try:
        import torch
    except Exception as e:
        print("SKIP: torch not importable (%s)" % e)
        return 77
    import llmk
    from llmk import _ops
    fast = _ops._fast
    if fast is None:
        print("SKIP: llmk._fast not built or turned off (LLMK_PY_FAST_MODULE=%r, "
              "LLMK_PY_FAST=%r)" % (os.environ.get("LLMK_PY_FAST_MODULE"),
                                    os.environ.get("LLMK_PY_FAST")))
        return 77
    if os.environ.get("LLMK_PY_FAST_MODULE"):
        check(os.path.samefile(fast.__file__, os.environ["LLMK_PY_FAST_MODULE"]),
              "llmk._fast is the module built here")

    g = torch.Generator().manual_seed(23)

    def bits(t):
        return t.contiguous().view(torch.uint8)

    def same(a, b):
        return a.shape == b.shape and torch.equal(bits(a), bits(b))

    def rand(shape, dtype):
        if dtype.is_floating_point:
            return torch.randn(*shape, generator=g).to(dtype)
        return torch.randint(-100, 100, shape, generator=g).to(dtype)

    def both(call, *caches):
        """call() through ctypes (llmk._ops._fast None) then through the C module on copies
        of the caches; returns (ctypes caches, fast caches, ctypes error, fast error)."""
        res = []
        for use_fast in (False, True):
            cs = [None if c is None else c.clone() for c in caches]
            _ops._fast = fast if use_fast else None
            err = None
            try:
                call(*cs)
            except llmk.Error as e:
                err = (type(e), e.status, e.status_name, e.message, str(e))
            finally:
                _ops._fast = fast
            res.append((cs, err))
        return res[0][0], res[1][0], res[0][1], res[1][1]

    # --- scatter_pa_kv_cache: the grid
    cases = 0
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.int8, torch.uint8):
        for T, H, D, bs, nb in ((1, 8, 128, 16, 64), (1, 1, 64, 32, 4), (5, 4, 32, 16, 8),
                                (33, 2, 16, 16, 4)):
            for layout in ("blocks", "nhd", "xsplit", "nz", 0, 1, 2):
                lay = {"nhd": 0, "blocks": 0, "xsplit": 1, "nz": 2}.get(layout, layout)
                for k_only in (False, True):
                    for sdt in (torch.int64, torch.int32):
                        for ctx in (None, 1, 2):
                            key_full = rand((T, H, 2 * D), dtype)
                            key = key_full[:, :, ::2] if T % 2 else key_full[:, :, :D]
                            value = None if k_only else rand((T, H, D), dtype)
                            esz = torch.empty((), dtype=dtype).element_size()
                            if lay == 0:
                                kshape = vshape = (nb, bs, H, D)
                            elif lay == 1:
                                x = 16 // esz
                                kshape, vshape = (nb, H, D // x, bs, x), (nb, H, D, bs)
                            else:
                                ld = 32 // esz
                                kshape = vshape = (nb, H * D // ld, bs, ld)
                            kc = rand(kshape, dtype)
                            vc = None if k_only else rand(vshape, dtype)
                            perm = torch.randperm(nb * bs, generator=g)[:T]
                            slots = perm.clone()
                            if T > 2:
                                slots[1] = -1           # padding token
                                slots[T - 1] = slots[0]  # a later token wins
                            slots = slots.to(sdt)

                            def call(kc_, vc_):
                                llmk.scatter_pa_kv_cache(key, value, kc_, vc_, slots,
                                                         layout=layout, ctx=ctx)

                            a, b, ea, eb = both(call, kc, vc)
                            what = "scatter %s T=%d H=%d D=%d bs=%d %s k_only=%s %s ctx=%s" % (
                                dtype, T, H, D, bs, layout, k_only, sdt, ctx)
                            check(ea is None and eb is None, what + ": no error (%r %r)"
                                  % (ea, eb))
                            check(same(a[0], b[0]), what + ": key cache bits")
                            if not k_only:
                                check(same(a[1], b[1]), what + ": value cache bits")
                            if lay == 0 and ea is None:
                                # golden: the blocks layout through torch indexing
                                ek = kc.clone().view(nb * bs, H, D)
                                for t in range(T):
                                    s = int(slots[t])
                                    if s >= 0:
                                        ek[s] = key[t]
                                check(same(b[0], ek.view(kshape)), what + ": golden")
                            cases += 1
    print("scatter grid: %d cases, both paths" % cases)

    # the C module takes these calls itself (returns True), and writes the same
    key = rand((1, 8, 128), torch.bfloat16)
    value = rand((1, 8, 128), torch.bfloat16)
    kc = torch.zeros(64, 16, 8, 128, dtype=torch.bfloat16)
    vc = torch.zeros_like(kc)
    slot = torch.tensor([37])
    check(fast.scatter_pa_kv_cache(key, value, kc, vc, slot, None, None, "blocks", None)
          is True, "the C module takes a plain bf16 T=1 call")
    check(same(kc.view(-1, 8, 128)[37], key[0]) and same(vc.view(-1, 8, 128)[37], value[0]),
          "the C module's write lands in slot 37")
    check(int((kc != 0).sum()) == int((key != 0).sum()), "nothing else written")
    ctx = llmk.Context(2)
    check(fast.scatter_pa_kv_cache(key, value, kc, vc, slot, None, None, 0, ctx) is True,
          "the C module takes an llmk.Context")
    ctx.close()
    # the other ways of naming the threads, through both paths
    for what, ctx, default in (("ctx=0", 0, None), ("ctx=True", True, None),
                               ("ctx=-1", -1, None), ("set_num_threads(3)", None, 3),
                               ("set_num_threads(1)", None, 1), ("ctx=1 << 70", 1 << 70, None)):
        llmk.set_num_threads(default)
        try:
            a, b, ea, eb = both(lambda kc_, vc_: llmk.scatter_pa_kv_cache(
                key, value, kc_, vc_, slot, ctx=ctx), kc, vc)
        except Exception as e:  # not an llmk.Error: through both paths alike?
            a = b = None
            ea = eb = type(e)
            _ops._fast = None
            try:
                llmk.scatter_pa_kv_cache(key, value, kc.clone(), vc.clone(), slot, ctx=ctx)
            except Exception as e2:
                ea = type(e2)
            finally:
                _ops._fast = fast
        llmk.set_num_threads(None)
        check(ea == eb, "scatter %s: the same outcome (%r / %r)" % (what, ea, eb))
        if a is not None:
            check(same(a[0], b[0]) and same(a[1], b[1]), "scatter %s: the same bits" % what)

    # --- refused calls: the same llmk.Error through both paths, nothing written
    f32 = torch.float32
    errors = [
        ("slot out of range", lambda kc_, vc_: llmk.scatter_pa_kv_cache(
            key, value, kc_, vc_, torch.tensor([64 * 16]))),
        ("slot out of range, later token", lambda kc_, vc_: llmk.scatter_pa_kv_cache(
            key.expand(3, 8, 128), value.expand(3, 8, 128), kc_, vc_,
            torch.tensor([1, 2, 5000], dtype=torch.int32))),
        ("slot_mapping f32", lambda kc_, vc_: llmk.scatter_pa_kv_cache(
            key, value, kc_, vc_, torch.tensor([3.0]))),
        ("slot_mapping rank 2", lambda kc_, vc_: llmk.scatter_pa_kv_cache(
            key, value, kc_, vc_, torch.tensor([[3]]))),
        ("key dtype beside cache dtype", lambda kc_, vc_: llmk.scatter_pa_kv_cache(
            key.to(f32), value, kc_, vc_, slot)),
        ("head count mismatch", lambda kc_, vc_: llmk.scatter_pa_kv_cache(
            rand((1, 4, 128), torch.bfloat16), value, kc_, vc_, slot)),
        ("value without value_cache", lambda kc_, vc_: llmk.scatter_pa_kv_cache(
            key, value, kc_, None, slot)),
        ("value_cache without value", lambda kc_, vc_: llmk.scatter_pa_kv_cache(
            key, None, kc_, vc_, slot)),
        ("k_scale tensor without a conversion", lambda kc_, vc_: llmk.scatter_pa_kv_cache(
            key, value, kc_, vc_, slot, k_scale=torch.tensor([1.0]))),
        ("unknown layout number", lambda kc_, vc_: llmk.scatter_pa_kv_cache(
            key, value, kc_, vc_, slot, layout=7)),
        ("x-split with a 4-D key cache", lambda kc_, vc_: llmk.scatter_pa_kv_cache(
            key, value, kc_, vc_, slot, layout="xsplit")),
        ("a transposed key cache (H 16 beside key's 8)",
         lambda kc_, vc_: llmk.scatter_pa_kv_cache(key, value, kc_.transpose(1, 2), vc_, slot)),
    ]
    for what, call in errors:
        kc = rand((64, 16, 8, 128), torch.bfloat16)
        vc = rand((64, 16, 8, 128), torch.bfloat16)
        a, b, ea, eb = both(call, kc, vc)
        check(ea is not None, "scatter %s: ctypes raises llmk.Error" % what)
        check(ea == eb, "scatter %s: the same llmk.Error (%r / %r)" % (what, ea, eb))
        check(same(b[0], kc) and same(b[1], vc), "scatter %s: nothing written (fast)" % what)
        check(same(a[0], kc) and same(a[1], vc), "scatter %s: nothing written (ctypes)" % what)
    # a slot error names the token and the slot
    try:
        llmk.scatter_pa_kv_cache(key, value, kc, vc, torch.tensor([64 * 16]))
        check(False, "scatter bad slot raises")
    except llmk.Error as e:
        check(e.status_name == "LLMK_ERROR_INVALID_VALUE" and "1024" in e.message,
              "scatter bad slot: LLMK_ERROR_INVALID_VALUE naming the slot (%s)" % e)

    # --- what the C module leaves to ctypes: declined (False) and untouched
    import numpy as np
    kc = torch.zeros(64, 16, 8, 128, dtype=torch.bfloat16)
    vc = torch.zeros_like(kc)
    declined = [
        ("llmk.view", (llmk.view(key.view(torch.int16), "bf16"), value, kc, vc, slot,
                       None, None, "blocks", None)),
        ("NumPy slot_mapping", (key, value, kc, vc, np.array([3]), None, None, "blocks",
                                None)),
        ("Python float scale", (key, value, kc, vc, slot, 1.0, None, "blocks", None)),
        ("layout hnd", (key, value, kc, vc, slot, None, None, "hnd", None)),
        ("layout 'Blocks'", (key, value, kc, vc, slot, None, None, "Blocks", None)),
        ("a Parameter", (torch.nn.Parameter(key, requires_grad=False), value, kc, vc, slot,
                         None, None, "blocks", None)),
        ("a meta tensor", (key, value, kc, vc, torch.empty(1, dtype=torch.int64,
                                                           device="meta"),
                           None, None, "blocks", None)),
        ("a sparse tensor", (key, value, kc, vc, torch.tensor([3]).to_sparse(), None, None,
                             "blocks", None)),
        ("a bool tensor", (key, value, kc, vc, torch.tensor([True]), None, None, "blocks",
                           None)),
        ("a Python list", (key, value, kc, vc, [3], None, None, "blocks", None)),
        ("a huge layout int", (key, value, kc, vc, slot, None, None, 1 << 40, None)),
    ]
    for what, args in declined:
        check(fast.scatter_pa_kv_cache(*args) is False, "the C module declines %s" % what)
        check(not bool(kc.any()) and not bool(vc.any()), "declined %s: nothing written" % what)
    # ... and the public function still does them through ctypes
    same_err = []
    for what, args in declined:
        pub = args[:5] + (args[5], args[6], args[7], args[8])
        for use_fast in (False, True):
            k2, v2 = kc.clone(), vc.clone()
            _ops._fast = fast if use_fast else None
            try:
                llmk.scatter_pa_kv_cache(pub[0], pub[1], k2, v2, pub[4], k_scale=pub[5],
                                         v_scale=pub[6], layout=pub[7], ctx=pub[8])
                r = ("ok", bits(k2), bits(v2))
            except Exception as e:
                r = ("err", type(e), str(e))
            finally:
                _ops._fast = fast
            same_err.append(r)
        ra, rb = same_err[-2], same_err[-1]
        eq = ra[0] == rb[0] and (torch.equal(ra[1], rb[1]) and torch.equal(ra[2], rb[2])
                                 if ra[0] == "ok" else ra[1:] == rb[1:])
        check(eq, "declined %s: the public call gives the same result either way" % what)

    # --- the other per-step ops: both paths on small grids, the same bits or the same error
    def compare(what, call, *mut):
        a, b, ea, eb = both(call, *mut)
        check(ea == eb, what + ": the same outcome (%r / %r)" % (ea, eb))
        for i, (x, y) in enumerate(zip(a, b)):
            if x is not None:
                check(same(x, y), what + ": argument %d bits" % i)
                if ea is not None:
                    check(same(x, mut[i]) and same(y, mut[i]), what + ": nothing written")
        if "refused" in what:
            check(ea is not None and ea[0] is llmk.Error, what + ": raises llmk.Error")
        return ea

    def took(name, *args):
        """the C module makes the call itself (on copies of the tensors)"""
        args = tuple(x.clone() if isinstance(x, torch.Tensor) else x for x in args)
        check(getattr(fast, name)(*args) is True, "the C module takes %s" % name)

    n_other = 0
    for idt in (torch.int64, torch.int32):
        for spec in (False, True):
            for ns, bs, mb in ((1, 16, 4), (7, 8, 3), (40, 128, 2)):
                S = 2 if spec else 0
                n = ns * (S + 1) if spec else ns
                nq = ns
                bt = torch.randint(0, 1000, (ns, mb), generator=g).to(idt)
                if spec:
                    pos = torch.randint(0, mb * bs - S - 1, (n,), generator=g).to(idt)
                    samp = torch.randint(0, 1000, (ns, S + 1), generator=g).to(idt)
                    samp[:, S] = -1
                    st = torch.randint(0, 1000, (ns, S), generator=g).to(idt)
                    acc = torch.randint(0, S + 1, (ns,), generator=g).to(idt)
                else:
                    pos = torch.randint(0, 50, (n,), generator=g).to(idt)
                    samp = torch.randint(0, 1000, (nq, 1), generator=g).to(idt)
                    st = acc = None
                sl = torch.randint(0, mb * bs - 1, (n,), generator=g).to(idt)
                tok = torch.zeros(n, dtype=idt)
                slot = torch.zeros(n, dtype=idt)
                for kw in ({}, {"num_seqs": ns, "num_queries": nq}):
                    for ctx in (None, 1, 2):
                        compare("advance_step %s spec=%s ns=%d bs=%d %s ctx=%s"
                                % (idt, spec, ns, bs, kw, ctx),
                                lambda t_, p_, s_, o_: llmk.advance_step(
                                    t_, samp, p_, s_, o_, bt, spec_token=st, accepted_num=acc,
                                    block_size=bs, ctx=ctx, **kw), tok, pos, sl, slot)
                        n_other += 1
                took("advance_step", tok, samp, pos, sl, slot, bt, st, acc, None, None, bs, None)
    # refused: a block past the table, block_size 0, a float num_seqs (ctypes' int())
    tok, pos, slot = (torch.zeros(2, dtype=torch.int64) for _ in range(3))
    sl = torch.tensor([6, 200])
    for what, bsz, nsq in (("refused: block past the table", 128, None),
                           ("refused: block_size 0", 0, None),
                           ("num_seqs 2.0", 128, 2.0), ("num_seqs True", 128, True)):
        compare("advance_step " + what,
                lambda t_, p_, s_, o_: llmk.advance_step(
                    t_, torch.tensor([[1], [2]]), p_, s_, o_, torch.tensor([[0], [1]]),
                    num_seqs=nsq, block_size=bsz), tok, pos, sl, slot)

    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        for H, D, bs, nb in ((8, 128, 16, 32), (2, 16, 4, 16)):
            for k_only in (False, True):
                kc = rand((nb, bs, H, D), dtype)
                vc = None if k_only else rand((nb, bs, H, D), dtype)
                lens = torch.tensor([1, bs + 3, 2 * bs], dtype=torch.int32)
                bt = torch.randperm(nb, generator=g)[:9].view(3, 3).to(torch.int32)
                total = int(lens.sum())
                ko = torch.zeros(total, H, D, dtype=dtype)
                vo = None if k_only else torch.zeros(total, H, D, dtype=dtype)
                for ctx in (None, 2):
                    compare("gather %s H=%d D=%d k_only=%s ctx=%s" % (dtype, H, D, k_only, ctx),
                            lambda ko_, vo_: llmk.gather_pa_kv_cache(
                                kc, vc, bt, lens, key_out=ko_, value_out=vo_, ctx=ctx), ko, vo)
                    n_other += 1
                took("gather_pa_kv_cache", kc, vc, bt, lens, None, None, ko, vo, "blocks", None)
    kc = rand((4, 16, 2, 32), torch.bfloat16)
    ko = torch.zeros(40, 2, 32, dtype=torch.bfloat16)
    compare("gather refused: block id past the cache",
            lambda ko_: llmk.gather_pa_kv_cache(kc, None, torch.tensor([[0, 9]]),
                                                torch.tensor([20]), key_out=ko_), ko)
    compare("gather refused: key_out too short",
            lambda ko_: llmk.gather_pa_kv_cache(kc, None, torch.tensor([[0, 1, 2]]),
                                                torch.tensor([41]), key_out=ko_), ko)

    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        for B, V in ((1, 1000), (4, 3000)):
            logits = rand((B, V), dtype)
            for p, k in ((torch.rand(B, generator=g), None),
                         (None, torch.randint(1, V, (B,), generator=g)),
                         (torch.rand(B, generator=g), torch.randint(1, 60, (B,),
                                                                    generator=g).int())):
                out = torch.zeros(B, V, dtype=dtype)
                for ctx in (None, 2):
                    compare("apply_top_k_top_p %s B=%d V=%d p=%s k=%s ctx=%s"
                            % (dtype, B, V, p is not None, k is not None, ctx),
                            lambda o_: llmk.apply_top_k_top_p(logits, p=p, k=k, out=o_,
                                                              ctx=ctx), out)
                    n_other += 1
                took("apply_top_k_top_p", logits, p, k, out, None)
            # a new out, and in place
            r1 = llmk.apply_top_k_top_p(logits, p=torch.full((B,), 0.7))
            _ops._fast = None
            r2 = llmk.apply_top_k_top_p(logits, p=torch.full((B,), 0.7))
            _ops._fast = fast
            check(same(r1, r2), "apply_top_k_top_p %s: a new out, the same bits" % dtype)
    logits = rand((2, 100), torch.float32)
    out = torch.zeros(2, 100)
    compare("apply_top_k_top_p refused: p of 3 rows",
            lambda o_: llmk.apply_top_k_top_p(logits, p=torch.rand(3), out=o_), out)
    compare("apply_top_k_top_p refused: k i8",
            lambda o_: llmk.apply_top_k_top_p(logits, k=torch.ones(2, dtype=torch.int8),
                                              out=o_), out)

    for dtype in (torch.float32, torch.bfloat16):
        for K, dim in ((3, 64), (4, 256)):
            w = rand((K, dim), dtype)
            bias = rand((dim,), dtype)
            for act in (None, "silu", 1):
                for varlen in (True, False):
                    if varlen:
                        x = rand((9, dim), dtype)
                        qsl = torch.tensor([0, 1, 5, 9], dtype=torch.int32)
                        ci = torch.tensor([2, 0, 3])
                    else:
                        x = rand((3, 1, dim), dtype)
                        qsl = None
                        ci = torch.tensor([2, 0, 3], dtype=torch.int32)
                    states = rand((4, K - 1, dim), dtype)
                    for ctx in (None, 2):
                        compare("conv %s K=%d dim=%d act=%s varlen=%s ctx=%s"
                                % (dtype, K, dim, act, varlen, ctx),
                                lambda x_, s_: llmk.fused_causal_conv1d(
                                    x_, w, s_, query_start_loc=qsl, cache_indices=ci,
                                    bias=bias, activation=act, ctx=ctx), x, states)
                        n_other += 1
                    took("fused_causal_conv1d", x, w, states, qsl, ci, None, None, None, None,
                         None, bias, -1, -1, 0, 0, 0, 1, None)
    x = torch.randn(4, 32)
    st = torch.randn(3, 2, 32)
    compare("conv refused: a line out of range",
            lambda x_, s_: llmk.fused_causal_conv1d(x_, torch.randn(3, 32), s_,
                                                    query_start_loc=torch.tensor([0, 2, 4]),
                                                    cache_indices=torch.tensor([0, 3])), x, st)
    compare("conv refused: x without query_start_loc",
            lambda x_, s_: llmk.fused_causal_conv1d(x_, torch.randn(3, 32), s_), x, st)
    print("advance_step / gather / top-k top-p / conv: %d cases, both paths" % n_other)

    print("%d checks, %d failed" % (count[0], len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
