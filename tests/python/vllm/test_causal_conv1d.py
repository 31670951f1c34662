# SPDX-License-Identifier: Apache-2.0
"""llmk.vllm.causal_conv1d_fn / causal_conv1d_update against vLLM's mamba tests
(tests/kernels/mamba/test_causal_conv1d.py) and kernels
(vllm/model_executor/layers/mamba/ops/causal_conv1d.py), for when llmk.vllm has them.

vLLM's current signatures:

    causal_conv1d_fn(x, weight, bias, conv_states, query_start_loc, cache_indices=None,
                     has_initial_state=None, activation="silu", pad_slot_id=PAD_SLOT_ID,
                     block_idx_first_scheduled_token=None, block_idx_last_scheduled_token=None,
                     initial_state_idx=None, num_computed_tokens=None, block_size_to_align=0,
                     metadata=None, validate_data=False) -> out      # x (dim, total_tokens)
    causal_conv1d_update(x, conv_state, weight, bias=None, activation=None,
                         conv_state_indices=None, num_accepted_tokens=None,
                         query_start_loc=None, max_query_len=-1, pad_slot_id=PAD_SLOT_ID,
                         block_idx_last_scheduled_token=None, initial_state_idx=None,
                         retrieve_parent_token=None, validate_data=False) -> out

weight is (dim, width); conv states are (num_lines, dim, state_len) views with a unit dim
stride (vLLM allocates (num_lines, state_len, dim) and transposes), column 0 the oldest
token.

Groups: vLLM's three tests (update, update_with_batch_gather, varlen) with their parameter
lists, references (re-expressed here: causal_conv1d_ref / causal_conv1d_update_ref) and
tolerances (f32 rtol 3e-4 atol 1e-3; bf16 rtol 1e-2 atol 5e-2; states equal, or allclose
in varlen); then cases written from vLLM's kernels, which its test file does not have:
speculative decoding (num_accepted_tokens, batched and varlen), an after-prefill
speculative step with num_accepted_tokens = 1, and prefix caching (block_idx_* with
block_size_to_align, in causal_conv1d_fn and causal_conv1d_update).

Kernel semantics the references follow (read from the Triton kernels):
- fn: a sequence whose cache_indices entry (at initial_state_idx with prefix caching) is
  pad_slot_id is skipped (its output is unspecified); the history is that line's first
  width-1 columns if has_initial_state, else zeros; the new state, the last width-1 tokens
  of history + x, goes to columns [0, width-1) of the line at block_idx_last_scheduled_token
  (prefix caching) or of the same line. With prefix caching, for each block boundary
  inside the chunk ((nct + i) % block_size_to_align == 0 for a token offset i, the one at
  the very end excluded) the width-1 tokens before it go to lines
  cache_indices[b, block_idx_first_scheduled_token[b] + k], k = 0, 1, ...
- update: the history is columns [o, o + width-1) of the line (o = num_accepted_tokens - 1
  with speculation, else 0); with state_len = width-1 (+ seqlen-1 with speculation; minus
  max_query_len - seqlen for a varlen row), the new columns [0, state_len) are old columns
  (o + 1 + i with speculation, else seqlen + i) for i < state_len - seqlen, then the
  sequence's tokens; they go to the line at block_idx_last_scheduled_token (prefix
  caching) or the same line.

Exit: 0 pass, 1 fail, 77 skip (torch missing, or llmk.vllm without these functions yet).
--selftest runs the file against a pure-torch stand-in built from its own references (a
check of the test's plumbing only, not of llmk).

Run: LLMK_LIBRARY=build/libllmk.so PYTHONPATH=python python3 tests/python/vllm/test_causal_conv1d.py
"""

import random
import sys

from _harness import Harness, llmk, ops, torch  # exits 77 first when torch is missing

import torch.nn.functional as F  # noqa: E402

H_ = Harness("test_causal_conv1d")
PAD_SLOT_ID = -1


def seed_everything(seed):
    random.seed(seed)
    torch.manual_seed(seed)


def tols(itype):
    rtol, atol = (3e-4, 1e-3) if itype == torch.float32 else (3e-3, 5e-3)
    if itype == torch.bfloat16:
        rtol, atol = 1e-2, 5e-2
    return rtol, atol


def allclose(a, b, itype, what):
    rtol, atol = tols(itype)
    ok = torch.allclose(a.float(), b.float(), rtol=rtol, atol=atol)
    if not ok:
        d = (a.float() - b.float()).abs().max().item()
        what = "%s (max |diff| %.3g)" % (what, d)
    return H_.check(ok, what)


# ----------------------------------------------------------------------------- references

def conv_ref(hist, xs, weight, bias, silu):
    """hist (dim, width-1), xs (dim, L): out (dim, L) = conv over [hist, xs], f32 math."""
    dim, width = weight.shape
    full = torch.cat([hist.float(), xs.float()], dim=-1).unsqueeze(0)
    out = F.conv1d(full, weight.float().unsqueeze(1), None if bias is None else bias.float(),
                   padding=0, groups=dim)[0]
    out = out[:, -xs.shape[-1]:] if xs.shape[-1] else out[:, :0]
    return F.silu(out) if silu else out


def causal_conv1d_ref(x, weight, bias=None, initial_states=None, return_final_states=False,
                      final_states_out=None, activation="silu"):
    """vLLM's reference, re-expressed: x (batch, dim, seqlen)."""
    dtype_in = x.dtype
    dim, width = weight.shape
    seqlen = x.shape[-1]
    outs, finals = [], []
    for b in range(x.shape[0]):
        hist = (initial_states[b] if initial_states is not None
                else torch.zeros(dim, width - 1, dtype=x.dtype))
        outs.append(conv_ref(hist[:, :width - 1], x[b], weight, bias, activation is not None))
        full = torch.cat([hist[:, :width - 1], x[b]], dim=-1) if initial_states is not None \
            else F.pad(x[b], (max(width - 1 - seqlen, 0), 0))
        finals.append(full[:, -(width - 1):].to(dtype_in))
    out = torch.stack(outs).to(dtype_in)
    if not return_final_states:
        return out, None
    final = torch.stack(finals)
    if final_states_out is not None:
        final_states_out[..., :width - 1].copy_(final)
        return out, final_states_out
    return out, final


def causal_conv1d_update_ref(x, conv_state, weight, bias=None, activation=None):
    """vLLM's reference (no circular buffer): x (batch, dim[, seqlen]); conv_state updated."""
    dtype_in = x.dtype
    unsq = x.dim() == 2
    if unsq:
        x = x.unsqueeze(-1)
    seqlen = x.shape[-1]
    width = weight.shape[1]
    state_len = conv_state.shape[-1]
    x_new = torch.cat([conv_state, x], dim=-1)
    out = torch.stack([conv_ref(x_new[b, :, :-seqlen][:, -(width - 1):], x[b], weight, bias,
                                activation is not None) for b in range(x.shape[0])])
    conv_state.copy_(x_new[:, :, -state_len:])
    out = out.to(dtype_in)
    return out.squeeze(-1) if unsq else out


def update_kernel_ref(x, conv_state, weight, bias, silu, indices, nacc=None, qsl=None,
                      max_query_len=-1, last_idx=None, init_idx=None, pad=PAD_SLOT_ID):
    """causal_conv1d_update's kernel semantics on copies: returns (out, new conv_state);
    out rows of skipped sequences are NaN (unspecified)."""
    cs = conv_state.clone()
    src = conv_state.clone()
    dim, width = weight.shape
    out = torch.full(x.shape, float("nan"), dtype=torch.float32)
    if qsl is None:
        xb = x if x.dim() == 3 else x.unsqueeze(-1)
        batch, seqmax = xb.shape[0], xb.shape[2]
    else:
        batch, seqmax = indices.shape[0], max_query_len
    base_len = width - 1 + (seqmax - 1 if nacc is not None else 0)
    for b in range(batch):
        apc = indices.dim() == 2           # prefix caching: a row of lines per sequence
        row = indices[b]
        line = int(row[int(init_idx[b])]) if apc else int(row)
        if line == pad:
            continue
        if qsl is None:
            xs = xb[b]
            L = seqmax
            state_len = base_len
        else:
            s, e = int(qsl[b]), int(qsl[b + 1])
            xs = x[s:e].t()
            L = e - s
            state_len = base_len - (seqmax - L)
        if L == 0:
            continue
        o = int(nacc[b]) - 1 if nacc is not None else 0
        hist = src[line, :, o:o + width - 1]
        y = conv_ref(hist, xs, weight, bias, silu)
        new = []
        for i in range(state_len):
            if i + L < state_len:
                new.append(src[line, :, o + (1 if nacc is not None else L) + i])
            else:
                new.append(xs[:, i - (state_len - L)])
        out_line = int(row[int(last_idx[b])]) if apc else line
        cs[out_line, :, :state_len] = torch.stack(new, dim=-1).to(cs.dtype)
        if qsl is None:
            if x.dim() == 3:
                out[b] = y
            else:
                out[b] = y[:, 0]
        else:
            out[s:e] = y.t()
    return out, cs


def fn_kernel_ref(x, weight, bias, conv_states, qsl, cache_indices, has_init, silu,
                  pad=PAD_SLOT_ID, first_idx=None, last_idx=None, init_idx=None, nct=None,
                  block=0):
    """causal_conv1d_fn's kernel semantics on copies: (out (dim, T) f32 with NaN where
    unspecified, new conv_states)."""
    cs = conv_states.clone()
    src = conv_states.clone()
    dim, width = weight.shape
    sl = width - 1
    out = torch.full(x.shape, float("nan"), dtype=torch.float32)
    nseq = qsl.shape[0] - 1
    apc = last_idx is not None
    for b in range(nseq):
        s, e = int(qsl[b]), int(qsl[b + 1])
        row = cache_indices[b] if cache_indices.dim() == 2 else cache_indices[b:b + 1]
        line = int(row[int(init_idx[b])] if apc else row[0])
        if line == pad or e == s:
            continue
        xs = x[:, s:e]
        init = has_init is not None and bool(has_init[b])
        hist = src[line, :, :sl] if init else torch.zeros(dim, sl, dtype=x.dtype)
        out[:, s:e] = conv_ref(hist, xs, weight, bias, silu)
        full = torch.cat([hist.to(x.dtype), xs], dim=-1)
        out_line = int(row[int(last_idx[b])]) if apc else line
        cs[out_line, :, :sl] = full[:, -sl:].to(cs.dtype)
        if apc:
            L = e - s
            done = int(nct[b])
            k = 0
            for i in range(1, L):             # boundaries strictly inside the chunk
                if (done + i) % block == 0:
                    bl = int(row[int(first_idx[b]) + k])
                    cs[bl, :, :sl] = full[:, sl + i - sl:sl + i].to(cs.dtype)
                    k += 1
    return out, cs


# ----------------------------------------------------------------------------- vLLM's tests

def test_causal_conv1d_update():
    for dim in (2048, 2048 + 16, 4096):
        for width in (4,):
            for seqlen in (1,):
                for has_bias in (False, True):
                    for silu in (False, True):
                        for itype in (torch.bfloat16,):
                            H_.case("update")
                            seed_everything(0)
                            batch = 2
                            x = torch.randn(batch, dim, seqlen, dtype=itype)
                            x_ref = x.clone()
                            conv_state = torch.randn(batch, dim, width - 1, dtype=itype)
                            weight = torch.randn(dim, width, dtype=itype)
                            bias = torch.randn(dim, dtype=itype) if has_bias else None
                            conv_state_ref = conv_state.clone()
                            act = "silu" if silu else None
                            idx = torch.arange(batch, dtype=torch.int32)
                            out = ops.causal_conv1d_update(x, conv_state, weight, bias,
                                                           activation=act,
                                                           conv_state_indices=idx)
                            out_ref = causal_conv1d_update_ref(x_ref, conv_state_ref, weight,
                                                               bias, activation=act)
                            what = "update dim=%d bias=%s silu=%s" % (dim, has_bias, silu)
                            H_.check(torch.equal(conv_state, conv_state_ref), what + ": state")
                            allclose(out, out_ref, itype, what + ": out")


def test_causal_conv1d_update_with_batch_gather():
    for itype in (torch.float32, torch.bfloat16):
        for silu in (False, True):
            for has_bias in (False, True):
                for seqlen in (1, 3):
                    for width in (3, 4):
                        for dim in (2048 + 16, 4096):
                            for with_padding in (True, False):
                                run_batch_gather(3, with_padding, dim, width, seqlen, has_bias,
                                                 silu, itype)


def run_batch_gather(batch_size, with_padding, dim, width, seqlen, has_bias, silu, itype):
    H_.case("update_with_batch_gather")
    seed_everything(0)
    padding = 5 if with_padding else 0
    padded = batch_size + padding
    total_entries = 10 * batch_size
    x = torch.randn(padded, seqlen, dim, dtype=itype).transpose(1, 2)
    x_ref = x.clone()
    idx = torch.randperm(total_entries)[:batch_size].to(torch.int32)
    unused = torch.ones(total_entries, dtype=torch.bool)
    unused[idx.long()] = False
    padded_idx = torch.cat([idx, torch.full((padding,), PAD_SLOT_ID, dtype=torch.int32)])
    conv_state = torch.randn(total_entries, width - 1, dim, dtype=itype).transpose(1, 2)
    before = conv_state.clone()
    weight = torch.randn(dim, width, dtype=itype)
    bias = torch.randn(dim, dtype=itype) if has_bias else None
    conv_state_ref = conv_state[idx.long()].clone()
    act = "silu" if silu else None
    out = ops.causal_conv1d_update(x, conv_state, weight, bias, activation=act,
                                   conv_state_indices=padded_idx, pad_slot_id=PAD_SLOT_ID)
    out_ref = causal_conv1d_update_ref(x_ref[:batch_size], conv_state_ref, weight, bias,
                                       activation=act)
    what = "batch gather %s silu=%s bias=%s L=%d W=%d dim=%d pad=%s" % (
        itype, silu, has_bias, seqlen, width, dim, with_padding)
    H_.check(torch.equal(conv_state[idx.long()], conv_state_ref), what + ": used lines")
    H_.check(torch.equal(conv_state[unused], before[unused]), what + ": other lines unchanged")
    allclose(out[:batch_size], out_ref, itype, what + ": out")


def test_causal_conv1d_varlen():
    for batch in (4, 10):
        for with_padding in (True, False):
            for dim in (64, 4096):
                for seqlen in (8, 249, 4096):
                    run_varlen(batch, with_padding, dim, seqlen, 4, True, True, torch.bfloat16)


def run_varlen(batch, with_padding, dim, seqlen, width, has_bias, silu, itype):
    H_.case("varlen")
    seed_everything(0)
    padding = 3 if with_padding else 0
    padded = batch + padding
    eos = torch.randperm(seqlen - 1)[:padded - 1].sort().values
    seqlens = torch.diff(torch.cat([torch.tensor([-1]), eos, torch.tensor([seqlen - 1])]))
    total_entries = batch * 10
    cumsum = torch.cat([torch.tensor([0], dtype=torch.int32),
                        torch.cumsum(seqlens, 0).to(torch.int32)])
    x = torch.randn(1, seqlen, 4096 + dim + 64, dtype=itype).transpose(1, 2)[:, 4096:4096 + dim]
    weight = torch.randn(dim, width, dtype=itype)
    bias = torch.randn(dim, dtype=itype) if has_bias else None
    x_ref = x.clone()
    act = "silu" if silu else None
    final_states = torch.randn(total_entries, width - 1, dim, dtype=itype).transpose(1, 2)
    final_states_ref = final_states.clone()
    has_init = torch.randint(0, 2, (cumsum.shape[0] - 1,), dtype=torch.bool)
    state_indices = torch.randperm(total_entries, dtype=torch.int32)[:batch]
    padded_idx = torch.cat([state_indices, torch.full((padding,), PAD_SLOT_ID,
                                                      dtype=torch.int32)])
    out = ops.causal_conv1d_fn(x.squeeze(0), weight, bias=bias, conv_states=final_states,
                               query_start_loc=cumsum, cache_indices=padded_idx,
                               has_initial_state=has_init, activation=act,
                               pad_slot_id=PAD_SLOT_ID)
    outs = []
    splits = torch.split(x_ref[0], seqlens.tolist(), dim=-1)
    for i in range(len(seqlens)):
        if int(padded_idx[i]) == PAD_SLOT_ID:
            continue
        line = int(padded_idx[i])
        o, _ = causal_conv1d_ref(splits[i].unsqueeze(0), weight, bias, activation=act,
                                 return_final_states=True,
                                 final_states_out=final_states_ref[line].unsqueeze(0),
                                 initial_states=final_states_ref[line].unsqueeze(0)
                                 if has_init[i] else None)
        outs.append(o)
    out_ref = torch.cat(outs, dim=2)[0]
    what = "varlen batch=%d pad=%s dim=%d seqlen=%d (%d sequences)" % (
        batch, with_padding, dim, seqlen, len(seqlens))
    allclose(final_states[state_indices.long()], final_states_ref[state_indices.long()],
             itype, what + ": states")
    allclose(out[:, :out_ref.shape[-1]], out_ref, itype, what + ": out")


# ----------------------------------------------------------------------------- from the kernels

def ring_update_ref(x, conv_state, weight, bias, silu, cache_seqlens, indices):
    """vLLM's earlier update with a circular buffer (its CUDA kernel and test reference),
    re-expressed: x (batch, dim, seqlen); returns (out f32, new conv_state)."""
    cs = conv_state.clone()
    dim, width = weight.shape
    C = conv_state.shape[-1]
    batch, _, L = x.shape
    out = torch.empty(x.shape, dtype=torch.float32)
    for b in range(batch):
        line = int(indices[b]) if indices is not None else b
        s = int(cache_seqlens[b]) % C
        cols = [(s - (width - 1) + j) % C for j in range(width - 1)]
        hist = conv_state[line][:, cols]
        out[b] = conv_ref(hist, x[b], weight, bias, silu)
        for i in range(max(L - C, 0), L):           # the last C tokens survive
            cs[line, :, (s + i) % C] = x[b, :, i]
    return out, cs


def test_ring_update():
    for itype in (torch.float32, torch.bfloat16):
        for width in (2, 3, 4):
            for seqlen in (1, 2, 5):
                for extra in (0, 3):
                    for gather in (False, True):
                        H_.case("ring_update")
                        seed_everything(width * 100 + seqlen * 10 + extra)
                        batch, dim, lines = 3, 80, 7
                        C = width - 1 + extra
                        x = torch.randn(batch, dim, seqlen, dtype=itype)
                        cs = torch.randn(lines, C, dim, dtype=itype).transpose(1, 2)
                        weight = torch.randn(dim, width, dtype=itype)
                        bias = torch.randn(dim, dtype=itype)
                        seql = torch.randint(0, 1000, (batch,), dtype=torch.int32)
                        idx = torch.randperm(lines)[:batch].to(torch.int32) if gather \
                            else None
                        ref_out, ref_cs = ring_update_ref(x, cs, weight, bias, True, seql,
                                                          idx)
                        out = ops.causal_conv1d_update(x, cs, weight, bias, "silu",
                                                       conv_state_indices=idx,
                                                       cache_seqlens=seql)
                        what = "ring %s W=%d L=%d C=%d gather=%s" % (itype, width, seqlen, C,
                                                                     gather)
                        H_.check(torch.equal(cs, ref_cs), what + ": state")
                        allclose(out, ref_out.to(itype), itype, what + ": out")


def test_spec_decoding():
    """num_accepted_tokens: the state holds width-1 + seqlen-1 columns; the history starts at
    column num_accepted - 1 (batched (batch, dim, seqlen) and varlen (tokens, dim))."""
    for itype in (torch.float32, torch.bfloat16):
        for width in (2, 3, 4):
            for seqlen in (2, 4):
                for varlen in (False, True):
                    H_.case("spec_decoding")
                    seed_everything(width * 10 + seqlen)
                    dim, batch, lines = 272, 5, 12
                    st_len = width - 1 + seqlen - 1
                    cs = torch.randn(lines, st_len + 1, dim, dtype=itype).transpose(1, 2)
                    idx = torch.tensor([3, PAD_SLOT_ID, 0, 7, 11], dtype=torch.int32)
                    nacc = torch.tensor([1, 2, seqlen, 1 + seqlen // 2, 2], dtype=torch.int32)
                    weight = torch.randn(dim, width, dtype=itype)
                    bias = torch.randn(dim, dtype=itype)
                    what = "spec %s W=%d S=%d %s" % (itype, width, seqlen,
                                                     "varlen" if varlen else "batched")
                    if varlen:
                        lens = [seqlen, seqlen, 1, seqlen - 1, seqlen]
                        qsl = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)),
                                           dtype=torch.int32)
                        x = torch.randn(int(qsl[-1]), dim, dtype=itype)
                        nacc = torch.minimum(nacc, torch.tensor(lens, dtype=torch.int32)
                                             .clamp(min=1))
                        exp_out, exp_cs = update_kernel_ref(x, cs, weight, bias, True, idx,
                                                            nacc, qsl, seqlen)
                        out = ops.causal_conv1d_update(x, cs, weight, bias, activation="silu",
                                                       conv_state_indices=idx,
                                                       num_accepted_tokens=nacc,
                                                       query_start_loc=qsl,
                                                       max_query_len=seqlen)
                        rows = torch.cat([torch.arange(int(qsl[b]), int(qsl[b + 1]))
                                          for b in range(batch) if int(idx[b]) != PAD_SLOT_ID])
                        allclose(out[rows], exp_out[rows], itype, what + ": out")
                    else:
                        x = torch.randn(batch, seqlen, dim, dtype=itype).transpose(1, 2)
                        exp_out, exp_cs = update_kernel_ref(x, cs, weight, bias, True, idx,
                                                            nacc)
                        out = ops.causal_conv1d_update(x, cs, weight, bias, activation="silu",
                                                       conv_state_indices=idx,
                                                       num_accepted_tokens=nacc)
                        live = [b for b in range(batch) if int(idx[b]) != PAD_SLOT_ID]
                        allclose(out[live], exp_out[live], itype, what + ": out")
                    H_.check(torch.equal(cs, exp_cs), what + ": conv_state (all lines)")


def test_after_prefill_spec():
    """A prefill through causal_conv1d_fn, then a speculative step with num_accepted_tokens
    = 1 (the state's first width-1 columns are the prefill's): the step's output equals the
    convolution over prefill + drafts."""
    for itype in (torch.float32, torch.bfloat16):
        for width in (3, 4):
            H_.case("after_prefill_spec")
            seed_everything(100 + width)
            dim, S = 160, 3
            st_len = width - 1 + S - 1
            lens = [7, 2, 12]
            qsl = torch.tensor([0, 7, 9, 21], dtype=torch.int32)
            lines = torch.tensor([4, 1, 6], dtype=torch.int32)
            cs = torch.randn(8, st_len, dim, dtype=itype).transpose(1, 2)
            weight = torch.randn(dim, width, dtype=itype)
            bias = torch.randn(dim, dtype=itype)
            xp = torch.randn(int(qsl[-1]), dim, dtype=itype).t()           # (dim, T)
            has_init = torch.tensor([False, False, False])
            exp_p, exp_cs = fn_kernel_ref(xp, weight, bias, cs, qsl, lines, has_init, True)
            out_p = ops.causal_conv1d_fn(xp, weight, bias, cs, qsl, cache_indices=lines,
                                         has_initial_state=has_init, activation="silu")
            what = "after prefill %s W=%d" % (itype, width)
            allclose(out_p, exp_p, itype, what + ": prefill out")
            H_.check(torch.equal(cs[lines.long(), :, :width - 1],
                                 exp_cs[lines.long(), :, :width - 1]), what + ": prefill state")
            xd = torch.randn(3, S, dim, dtype=itype).transpose(1, 2)
            nacc = torch.ones(3, dtype=torch.int32)
            exp_d, exp_cs2 = update_kernel_ref(xd, cs, weight, bias, True, lines, nacc)
            out_d = ops.causal_conv1d_update(xd, cs, weight, bias, activation="silu",
                                             conv_state_indices=lines, num_accepted_tokens=nacc)
            allclose(out_d, exp_d, itype, what + ": spec out")
            H_.check(torch.equal(cs, exp_cs2), what + ": spec state")
            for b in range(3):            # independent of the kernel reading: plain conv
                seq = torch.cat([xp[:, int(qsl[b]):int(qsl[b + 1])], xd[b]], dim=-1)
                ref = conv_ref(torch.zeros(dim, width - 1, dtype=itype), seq, weight, bias,
                               True)[:, -S:]
                allclose(out_d[b], ref, itype, what + ": spec out = conv(prefill + drafts) "
                         "row %d" % b)


def test_prefix_caching():
    """block_idx_* with block_size_to_align: fn stores the state at each block boundary
    inside the chunk and the final state in the last block's line, reading the initial
    state from initial_state_idx's line; update reads initial_state_idx's line and writes
    block_idx_last_scheduled_token's line."""
    for itype in (torch.float32, torch.bfloat16):
        for block in (8, 16):
            for width in (3, 4):
                H_.case("prefix_caching_fn")
                seed_everything(block + width)
                dim = 96
                sl = width - 1
                # (tokens already computed, chunk length): boundaries at least width-1 tokens
                # into the chunk, so that every stored state lies inside this sequence
                seqs = [(0, 3 * block + 5), (2 * block, block), (block + 1, 2 * block + 3),
                        (0, 2)]
                seqs = [(n, L) for n, L in seqs if (n == 0 or block - n % block >= sl)]
                nseq = len(seqs)
                maxb = 8
                lines = torch.randperm(nseq * maxb + 4)[:nseq * maxb].to(torch.int32) \
                    .view(nseq, maxb)
                nct = torch.tensor([n for n, _ in seqs], dtype=torch.int32)
                first = torch.tensor([n // block for n, _ in seqs], dtype=torch.int32)
                last = torch.tensor([(n + L - 1) // block for n, L in seqs], dtype=torch.int32)
                init = torch.tensor([max(n - 1, 0) // block for n, _ in seqs],
                                    dtype=torch.int32)
                has_init = nct > 0
                qsl = torch.tensor([0] + list(torch.tensor([L for _, L in seqs]).cumsum(0)),
                                   dtype=torch.int32)
                cs = torch.randn(nseq * maxb + 4, sl, dim, dtype=itype).transpose(1, 2)
                weight = torch.randn(dim, width, dtype=itype)
                bias = torch.randn(dim, dtype=itype)
                x = torch.randn(int(qsl[-1]), dim, dtype=itype).t()
                exp_out, exp_cs = fn_kernel_ref(x, weight, bias, cs, qsl, lines, has_init, True,
                                                first_idx=first, last_idx=last, init_idx=init,
                                                nct=nct, block=block)
                out = ops.causal_conv1d_fn(x, weight, bias, cs, qsl, cache_indices=lines,
                                           has_initial_state=has_init, activation="silu",
                                           block_idx_first_scheduled_token=first,
                                           block_idx_last_scheduled_token=last,
                                           initial_state_idx=init, num_computed_tokens=nct,
                                           block_size_to_align=block)
                what = "prefix caching fn %s block=%d W=%d" % (itype, block, width)
                allclose(out, exp_out, itype, what + ": out")
                H_.check(torch.equal(cs, exp_cs), what + ": every line")

                H_.case("prefix_caching_update")
                # a decode step: read the line of the block holding the last state, write
                # the line of the block of the new token
                done = torch.tensor([block * 2, block * 3 - 1, 5], dtype=torch.int32)
                rows = lines[:3] if nseq >= 3 else lines.repeat(2, 1)[:3]
                init_u = (done - 1) // block
                last_u = done // block
                xd = torch.randn(3, dim, dtype=itype)
                cs2 = cs.clone()
                exp_o, exp_c = update_kernel_ref(xd, cs2, weight, bias, False, rows,
                                                 last_idx=last_u, init_idx=init_u)
                o = ops.causal_conv1d_update(xd, cs2, weight, bias, activation=None,
                                             conv_state_indices=rows,
                                             block_idx_last_scheduled_token=last_u,
                                             initial_state_idx=init_u)
                what = "prefix caching update %s block=%d W=%d" % (itype, block, width)
                allclose(o, exp_o, itype, what + ": out")
                H_.check(torch.equal(cs2, exp_c), what + ": every line")


# ----------------------------------------------------------------------------- self test

class _StandIn:
    """Pure-torch stand-in from this file's references (--selftest: plumbing only)."""
    PAD_SLOT_ID = PAD_SLOT_ID

    @staticmethod
    def causal_conv1d_fn(x, weight, bias, conv_states, query_start_loc, cache_indices=None,
                         has_initial_state=None, activation="silu", pad_slot_id=PAD_SLOT_ID,
                         block_idx_first_scheduled_token=None,
                         block_idx_last_scheduled_token=None, initial_state_idx=None,
                         num_computed_tokens=None, block_size_to_align=0, metadata=None,
                         validate_data=False):
        out, cs = fn_kernel_ref(x, weight, bias, conv_states, query_start_loc, cache_indices,
                                has_initial_state, activation is not None, pad_slot_id,
                                block_idx_first_scheduled_token,
                                block_idx_last_scheduled_token, initial_state_idx,
                                num_computed_tokens, block_size_to_align)
        conv_states.copy_(cs)
        return out.nan_to_num().to(x.dtype)

    @staticmethod
    def causal_conv1d_update(x, conv_state, weight, bias=None, activation=None,
                             conv_state_indices=None, num_accepted_tokens=None,
                             query_start_loc=None, max_query_len=-1, pad_slot_id=PAD_SLOT_ID,
                             block_idx_last_scheduled_token=None, initial_state_idx=None,
                             retrieve_parent_token=None, validate_data=False,
                             cache_seqlens=None):
        if cache_seqlens is not None:
            xb = x if x.dim() == 3 else x.unsqueeze(-1)
            out, cs = ring_update_ref(xb, conv_state, weight, bias, activation is not None,
                                      cache_seqlens, conv_state_indices)
            conv_state.copy_(cs)
            return out.to(x.dtype) if x.dim() == 3 else out[..., 0].to(x.dtype)
        if isinstance(activation, bool):
            activation = "silu" if activation else None
        out, cs = update_kernel_ref(x, conv_state, weight, bias, activation is not None,
                                    conv_state_indices, num_accepted_tokens, query_start_loc,
                                    max_query_len, block_idx_last_scheduled_token,
                                    initial_state_idx, pad_slot_id)
        conv_state.copy_(cs)
        return out.nan_to_num().to(x.dtype)


def main():
    global ops
    if "--selftest" in sys.argv:
        ops = _StandIn()
        print("SELFTEST: the functions are this file's pure-torch stand-ins, not llmk")
    missing = [n for n in ("causal_conv1d_fn", "causal_conv1d_update") if not hasattr(ops, n)]
    if len(missing) == 2:
        print("SKIP: llmk.vllm has no causal_conv1d_fn yet")
        return 77
    print("llmk %s (%s), torch %s" % (llmk.version(), llmk.library_path(), torch.__version__))
    groups = [(test_causal_conv1d_update, "causal_conv1d_update"),
              (test_ring_update, "causal_conv1d_update"),
              (test_causal_conv1d_update_with_batch_gather, "causal_conv1d_update"),
              (test_causal_conv1d_varlen, "causal_conv1d_fn"),
              (test_spec_decoding, "causal_conv1d_update"),
              (test_after_prefill_spec, "causal_conv1d_fn"),
              (test_prefix_caching, "causal_conv1d_fn")]
    for fn, needs in groups:
        if needs in missing or (fn is test_after_prefill_spec and missing) or \
                (fn is test_prefix_caching and missing):
            print("SKIP: %s (llmk.vllm has no %s yet)" % (fn.__name__, " / ".join(missing)))
            continue
        H_.run(fn)
    return H_.finish()


if __name__ == "__main__":
    sys.exit(main())
