# SPDX-License-Identifier: Apache-2.0
"""vLLM-compatible entry points over llmk, for vLLM's CPU path.

    from llmk import vllm as ops
    ops.reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping,
                                "auto", k_scale, v_scale)

Each function takes vLLM's name, argument order and defaults (``vllm/_custom_ops.py``,
``vllm/v1/sample/ops/topk_topp_sampler.py``) and has vLLM's semantics, run by the llmk
operator named in its docstring, in place and without copying data. Where vLLM accepts
something llmk refuses, the llmk error (``llmk.Error``, a RuntimeError with the status name
and llmk's message) reaches the caller unchanged; such cases are listed under "Differences"
in each docstring.

Torch without float8 dtypes (before 2.1): fp8 caches are ``torch.uint8`` tensors, as vLLM
allocates them; ``kv_cache_dtype`` says which fp8 format they hold. A torch that has float8
dtypes may pass float8 caches too.
"""

from . import _core as c
from ._ops import advance_step as _advance_step
from ._ops import apply_top_k_top_p as _apply_top_k_top_p
from ._ops import fused_causal_conv1d as _conv
from ._ops import scatter_pa_kv_cache as _scatter

__all__ = [
    "PAD_SLOT_ID", "reshape_and_cache", "reshape_and_cache_flash", "concat_and_cache_mla",
    "apply_top_k_top_p", "advance_step_flashattn", "causal_conv1d_fn", "causal_conv1d_update",
]

# vLLM's padding value in slot_mapping and in the mamba cache indices
# (vllm/attention/backends/utils.py; vllm/v1/attention/backends/utils.py).
PAD_SLOT_ID = -1

# kv_cache_dtype strings with a plain element cache (vLLM's DISPATCH_BY_KV_CACHE_DTYPE):
# "auto" keeps the source dtype; "fp8" means e4m3 (vLLM's default fp8 on CUDA/CPU).
_FP8 = {"fp8": "fp8_e4m3fn", "fp8_e4m3": "fp8_e4m3fn", "fp8_e5m2": "fp8_e5m2"}


def _cache_view(cache, kv_cache_dtype, what):
    """The cache as llmk should read it: itself for "auto", an fp8 view otherwise."""
    if kv_cache_dtype == "auto":
        return cache
    fmt = _FP8.get(kv_cache_dtype)
    if fmt is None:
        raise ValueError("llmk.vllm.%s: unsupported kv_cache_dtype %r (llmk supports "
                         "'auto', 'fp8', 'fp8_e4m3', 'fp8_e5m2')" % (what, kv_cache_dtype))
    return c.view(cache, fmt)


def _flat_scale(s):
    """A scale tensor as a 1-D view (vLLM passes [] or [1] or [H] f32 tensors)."""
    t = c.unwrap(s)
    if c._kind(t) == "torch":
        return s.reshape(-1)
    return s


def _first_scale(s):
    """vLLM's paged (x-split) and MLA kernels read only the first element of the scale."""
    t = c.unwrap(s)
    if c._kind(t) == "torch":
        return s.reshape(-1)[:1]
    return s


def _rows(x, n):
    """x[:n] as a view (vLLM uses slot_mapping.size(0) as the token count; key may be
    longer, padded for CUDA graphs)."""
    return x if x.shape[0] == n else x[:n]


def reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype,
                      k_scale, v_scale, interleaved_v=False):
    """vLLM ``reshape_and_cache`` (paged attention v1/v2 caches), over
    llmk.scatter_pa_kv_cache with the 'xsplit' layout.

    key, value ``[T', H, D]`` (T' >= T; any strides); key_cache ``[num_blocks, H, D/x,
    block_size, x]``, value_cache ``[num_blocks, H, D, block_size]``; slot_mapping ``[T]``
    (i64; negative = padding, skipped). For every token t < T with slot s >= 0:
    ``key_cache[s // bs, :, :, s % bs, :] = key[t]`` split in x-wide pieces and
    ``value_cache[s // bs, :, :, s % bs] = value[t]``. kv_cache_dtype "auto" copies bits
    (the scales are ignored, as vLLM does); "fp8"/"fp8_e4m3"/"fp8_e5m2" store
    ``fp8(x / scale)`` rounded to nearest even with saturation, the caches being uint8 (or
    float8) tensors; vLLM reads the first element of k_scale / v_scale, and so does this.

    Differences: llmk needs ``x == 16 / cache element size`` (vLLM's own allocation; vLLM
    takes x from key_cache.shape[4]) and ``D % x == 0``, else LLMK_ERROR_INVALID_SHAPE;
    a slot >= num_blocks * block_size is LLMK_ERROR_INVALID_VALUE (nothing written) where
    vLLM writes out of bounds; duplicate slots: the last token wins (vLLM: unspecified);
    ``interleaved_v=True`` (ROCm's interleaved value layout) is not supported.
    """
    if interleaved_v:
        raise NotImplementedError("llmk.vllm.reshape_and_cache: interleaved_v=True is not "
                                  "supported (llmk's x-split value layout is "
                                  "[num_blocks, H, D, block_size])")
    T = slot_mapping.shape[0]
    kc = _cache_view(key_cache, kv_cache_dtype, "reshape_and_cache")
    vc = _cache_view(value_cache, kv_cache_dtype, "reshape_and_cache")
    ks = vs = None
    if kv_cache_dtype != "auto":
        ks, vs = _first_scale(k_scale), _first_scale(v_scale)
    _scatter(_rows(key, T), _rows(value, T), kc, vc, slot_mapping, k_scale=ks, v_scale=vs,
             layout="xsplit")


def reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping,
                            kv_cache_dtype, k_scale, v_scale):
    """vLLM ``reshape_and_cache_flash`` (FlashAttention / FlashInfer / CPU-flash caches),
    over llmk.scatter_pa_kv_cache with the 'blocks' layout.

    key, value ``[T', H, D]`` (T' >= T, any strides); key_cache and value_cache indexed as
    ``[num_blocks, block_size, H, D]``: an NHD tensor, or an HND ``[num_blocks, H,
    block_size, D]`` tensor passed as its permuted view (``.permute(0, 2, 1, 3)``), as
    vLLM's backends do; the layout is whatever the strides say (vLLM reads block, page and
    head strides from the tensor, as llmk does). slot_mapping ``[T]``, negative = padding.
    k_scale / v_scale: f32 ``[1]`` (or ``[]``) or ``[H]`` (per head), same shape, used
    only for fp8 caches (ignored for "auto", as in vLLM).

    Differences: vLLM requires key_cache.stride(0) == value_cache.stride(0) and a unit
    head-dim stride; llmk takes any non-negative strides. An out-of-range slot is
    LLMK_ERROR_INVALID_VALUE (nothing written). A scale that is 0, negative, infinite or
    NaN is LLMK_ERROR_INVALID_VALUE ("k_scale[0]=0 must be finite and > 0") where vLLM
    divides by it. kv_cache_dtype "nvfp4" is not supported.
    """
    if kv_cache_dtype in ("nvfp4", "nvfp4_4over6"):
        raise ValueError("llmk.vllm.reshape_and_cache_flash: kv_cache_dtype %r is not "
                         "supported by llmk" % (kv_cache_dtype,))
    T = slot_mapping.shape[0]
    kc = _cache_view(key_cache, kv_cache_dtype, "reshape_and_cache_flash")
    vc = _cache_view(value_cache, kv_cache_dtype, "reshape_and_cache_flash")
    ks = vs = None
    if kv_cache_dtype != "auto":
        ksh, vsh = tuple(k_scale.shape), tuple(v_scale.shape)
        if ksh != vsh:
            raise ValueError("llmk.vllm.reshape_and_cache_flash: k_scale and v_scale must "
                             "have the same shape (got %s and %s)" % (ksh, vsh))
        n, H = k_scale.numel(), key.shape[1]
        if n != 1 and n != H:
            raise ValueError("llmk.vllm.reshape_and_cache_flash: k_scale and v_scale must "
                             "be of shape [1] or [num_heads=%d] (got %s)" % (H, ksh))
        ks, vs = _flat_scale(k_scale), _flat_scale(v_scale)
    _scatter(_rows(key, T), _rows(value, T), kc, vc, slot_mapping, k_scale=ks, v_scale=vs,
             layout="blocks")


def concat_and_cache_mla(kv_c, k_pe, kv_cache, slot_mapping, kv_cache_dtype, scale):
    """vLLM ``concat_and_cache_mla`` (MLA's latent cache), over llmk.scatter_pa_kv_cache.

    kv_c ``[T', kv_lora_rank]``, k_pe ``[T', pe_dim]`` (T' >= T, any strides); kv_cache
    ``[num_blocks, block_size, kv_lora_rank + pe_dim]``; slot_mapping ``[T]``. For every
    token with slot s >= 0, the cache line ``kv_cache[s // bs, s % bs]`` becomes
    ``concat(kv_c[t], k_pe[t])``, converted to fp8 with ``scale`` (its first element, as
    vLLM reads it) for "fp8"/"fp8_e4m3"/"fp8_e5m2". Runs as one llmk scatter with H = 1:
    kv_c as the keys into the first kv_lora_rank columns of the cache and k_pe as the
    values into the rest (two column-disjoint views of kv_cache, no copy).

    Differences: "fp8_ds_mla" / "nvfp4_ds_mla" (DeepSeek's tiled-scale line) are not
    supported; an out-of-range slot is LLMK_ERROR_INVALID_VALUE (nothing written).
    """
    if kv_cache_dtype not in ("auto",) and kv_cache_dtype not in _FP8:
        raise ValueError("llmk.vllm.concat_and_cache_mla: unsupported kv_cache_dtype %r "
                         "(llmk supports 'auto', 'fp8', 'fp8_e4m3', 'fp8_e5m2')"
                         % (kv_cache_dtype,))
    T = slot_mapping.shape[0]
    R, P = kv_c.shape[1], k_pe.shape[1]
    if kv_cache.dim() != 3 or kv_cache.shape[2] != R + P:
        raise ValueError("llmk.vllm.concat_and_cache_mla: kv_cache must be [num_blocks, "
                         "block_size, kv_lora_rank + pe_dim = %d], got %s"
                         % (R + P, tuple(kv_cache.shape)))
    kc = kv_cache[:, :, :R].unsqueeze(2)     # [nb, bs, 1, R]
    vc = kv_cache[:, :, R:].unsqueeze(2)     # [nb, bs, 1, P]
    kc = _cache_view(kc, kv_cache_dtype, "concat_and_cache_mla")
    vc = _cache_view(vc, kv_cache_dtype, "concat_and_cache_mla")
    s = None if kv_cache_dtype == "auto" else _first_scale(scale)
    _scatter(_rows(kv_c, T).unsqueeze(1), _rows(k_pe, T).unsqueeze(1), kc, vc, slot_mapping,
             k_scale=s, v_scale=s, layout="blocks")


def apply_top_k_top_p(logits, k, p):
    """vLLM v1 ``apply_top_k_top_p(logits, k, p)``, over llmk.apply_top_k_top_p.

    logits ``[B, V]`` f32/f16/bf16 (any strides); k ``[B]`` i32/i64 or None; p ``[B]``
    (or ``[1]``, broadcast to every row as vLLM's torch code does) or None. Returns the
    logits tensor itself, filtered in place (masked entries become -inf), as vLLM's
    sort-based and Triton paths do; k = p = None returns logits untouched. Semantics are
    vLLM's sort-based reference: entries below the k-th largest value are masked (ties
    kept; k = V disables top-k), then, over the survivors' softmax summed from the
    smallest, entries whose running sum is <= 1 - p are masked, the largest always kept.

    Differences: llmk's sort is stable (equal values cumulated lowest index first); vLLM's
    torch.sort is not guaranteed stable, so at a top-p boundary inside a group of equal
    logits the kept members may differ. k <= 0 or k > V disables top-k in llmk (vLLM's
    gather fails or wraps); k with shape [1] for B > 1 is refused (vLLM would apply row
    0's threshold to every row: llmk says "k.shape[0]=1 must equal B=4"); p outside
    [0, 1] is LLMK_ERROR_INVALID_VALUE ("p[0]=1.5 must be in [0, 1]"); p must be f32 or
    the logits' dtype (an f64 p is a TypeError where vLLM's torch code would take it).
    """
    if k is None and p is None:
        return logits
    B = logits.shape[0]
    if p is not None and c._kind(p) == "torch" and p.numel() == 1 and B != 1:
        p = p.reshape(1).expand(B)
    _apply_top_k_top_p(logits, p=p, k=k, out=logits)
    return logits


def advance_step_flashattn(num_seqs, num_queries, block_size, input_tokens,
                           sampled_token_ids, input_positions, seq_lens, slot_mapping,
                           block_tables):
    """vLLM ``advance_step_flashattn`` (multi-step / draft-model decoding), over
    llmk.advance_step in plain mode. In place, for q < num_queries:
    ``input_tokens[q] = sampled_token_ids[q, 0]``, ``input_positions[q] = seq_lens[q]``,
    ``seq_lens[q] += 1``, ``slot_mapping[q] = block_tables[q, pos // block_size] *
    block_size + pos % block_size``; rows num_queries..num_seqs-1 (CUDA-graph padding)
    get token 0, position 0, slot -1 (PAD_SLOT_ID), their seq_lens untouched. Returns
    None.

    Differences: vLLM requires contiguous i64 tokens / positions / slots / sampled
    ``[num_queries, 1]`` and i32 seq_lens / block_tables; llmk takes i32 or i64 for each
    and any non-negative strides. A block index past the block table's width, or a
    negative block id, is LLMK_ERROR_INVALID_VALUE (nothing written) where vLLM reads out
    of bounds.
    """
    _advance_step(input_tokens, sampled_token_ids, input_positions, seq_lens, slot_mapping,
                  block_tables, num_seqs=num_seqs, num_queries=num_queries,
                  block_size=block_size)


# ----------------------------------------------------------------------------- mamba conv

def _activation(activation, what):
    if isinstance(activation, bool):
        return "silu" if activation else None
    if activation is None or activation in ("silu", "swish"):
        return activation
    raise ValueError("llmk.vllm.%s: activation must be None, 'silu' or 'swish', got %r"
                     % (what, activation))


def _param(t, x):
    """weight / bias as llmk takes them: x's dtype or f32 (vLLM's kernels read any float
    dtype and compute in f32; another dtype is converted to f32, a [dim, K] copy)."""
    if t is None or t.dtype == x.dtype or str(t.dtype) == "torch.float32":
        return t
    return t.float()


def causal_conv1d_fn(x, weight, bias, conv_states, query_start_loc, cache_indices=None,
                     has_initial_state=None, activation="silu", pad_slot_id=PAD_SLOT_ID,
                     block_idx_first_scheduled_token=None,
                     block_idx_last_scheduled_token=None, initial_state_idx=None,
                     num_computed_tokens=None, block_size_to_align=0, metadata=None,
                     validate_data=False):
    """vLLM's causal_conv1d_fn (prefill and mixed batches, varlen): x (dim, total_tokens),
    weight (dim, width), bias (dim,) or None, conv_states (num_lines, dim, state_len)
    (state_len >= width-1, any strides), query_start_loc (batch+1,), cache_indices
    (batch,) or (batch, max_blocks) with prefix caching, has_initial_state (batch,) bool.
    Returns out, x's shape and dtype; conv_states updated as vLLM's kernel does: the
    history is columns [0, width-1) of the line (zeros without initial state), the last
    width-1 tokens go to columns [0, width-1) (of the block_idx_last_scheduled_token line
    with prefix caching, which also fills the lines of the block boundaries inside the
    chunk). Over llmk_fused_causal_conv1d_v2 (state_align HEAD), on transposed views: no
    copy of x, the weight or the states. metadata and validate_data are accepted and not
    used (llmk checks every index before writing).

    Differences: llmk sums the taps in order, then adds the bias (vLLM starts from the
    bias): results may differ from vLLM's by rounding. Sequences longer than their history
    are not required. A cache index outside [0, num_lines) that is not pad_slot_id is an
    llmk.Error (vLLM reads or writes out of bounds). With prefix caching and a chunk
    shorter than width-1, llmk writes the state to the last block's line (vLLM: to the
    line it read); the boundary states of the block fills come from the chunk's own
    history (vLLM reads the previous sequence's tokens there)."""
    act = _activation(activation, "causal_conv1d_fn")
    x_in = x
    if x.dtype != conv_states.dtype:
        x = x.to(conv_states.dtype)
    import torch
    out = torch.empty_like(x)   # x's dense layout: out.t() is channel-contiguous as x.t()
    apc = block_idx_last_scheduled_token is not None
    # vLLM's batch is len(query_start_loc) - 1; longer per-sequence tensors are read only
    # that far (their views are passed)
    nseq = int(c.shape_of(query_start_loc)[0]) - 1
    if cache_indices is not None and c.shape_of(cache_indices)[0] > nseq:
        cache_indices = cache_indices[:nseq]
    if has_initial_state is not None and c.shape_of(has_initial_state)[0] > nseq:
        has_initial_state = has_initial_state[:nseq]
    _conv(x.t(), _param(weight, x).t(), conv_states.transpose(1, 2),
          query_start_loc=query_start_loc, cache_indices=cache_indices,
          num_computed_tokens=num_computed_tokens if apc else None,
          block_idx_first_scheduled_token=block_idx_first_scheduled_token if apc else None,
          block_idx_last_scheduled_token=block_idx_last_scheduled_token,
          initial_state_idx=initial_state_idx if apc else None,
          bias=_param(bias, x), pad_slot_id=pad_slot_id,
          block_size=int(block_size_to_align) if apc else 0, activation=act,
          y=out.t(), state_align="head", has_initial_state=has_initial_state)
    return out if out.dtype == x_in.dtype else out.to(x_in.dtype)


def causal_conv1d_update(x, conv_state, weight, bias=None, activation=None,
                         conv_state_indices=None, num_accepted_tokens=None,
                         query_start_loc=None, max_query_len=-1, pad_slot_id=PAD_SLOT_ID,
                         block_idx_last_scheduled_token=None, initial_state_idx=None,
                         retrieve_parent_token=None, validate_data=False, *,
                         cache_seqlens=None):
    """vLLM's causal_conv1d_update (decode and speculative decode): x (batch, dim),
    (batch, dim, seqlen) or (num_tokens, dim) with query_start_loc; conv_state
    (num_lines, dim, state_len), any strides; weight (dim, width); conv_state_indices
    (batch,) (or (batch, max_blocks) with prefix caching); num_accepted_tokens (batch,).
    Returns out (x's shape and dtype; x is not written). The history is columns
    [o, o+width-1) of the line (o = num_accepted_tokens-1 with speculation, else 0); the
    new state is written from column 0 (width-1 columns; width-2+seqlen with
    speculation), to the block_idx_last_scheduled_token line with prefix caching. Over
    llmk_fused_causal_conv1d_v2 (state_align HEAD) on transposed views, no copies.
    cache_seqlens (batch,) (keyword only: the circular state buffer of vLLM's earlier
    CUDA update, which current vLLM dropped): each line is a ring of state_len columns;
    with s = cache_seqlens[b] % state_len the history is columns s-(width-1) .. s-1 (mod
    state_len) and token i goes to column (s+i) % state_len; the caller advances
    cache_seqlens. Not with num_accepted_tokens or prefix caching.

    Differences: retrieve_parent_token (EAGLE tree attention) is not supported
    (NotImplementedError). A varlen row shorter than max_query_len without
    num_accepted_tokens gets the full width-1 columns of new state (vLLM's kernel writes
    width-1-(max_query_len-seqlen) columns there). num_accepted_tokens[b] <= 0 is taken as
    a non-speculative row (vLLM would read column -1); width-2+seqlen > state_len is an
    llmk.Error (vLLM writes past the line). The bias is added after the taps (rounding)."""
    if retrieve_parent_token is not None:
        raise NotImplementedError("llmk.vllm.causal_conv1d_update: retrieve_parent_token "
                                  "(EAGLE tree attention) is not supported by llmk")
    act = _activation(activation, "causal_conv1d_update")
    x_dtype = x.dtype
    if x.dtype != conv_state.dtype:
        x = x.to(conv_state.dtype)
    import torch
    out = torch.empty_like(x)
    if query_start_loc is None:
        if x.dim() == 2:
            xv, yv = x.unsqueeze(1), out.unsqueeze(1)          # [batch, 1, dim]
        else:
            xv, yv = x.transpose(1, 2), out.transpose(1, 2)    # [batch, seqlen, dim]
    else:
        if conv_state_indices is None:
            raise ValueError("llmk.vllm.causal_conv1d_update: query_start_loc needs "
                             "conv_state_indices (as in vLLM)")
        xv, yv = x, out
    apc = block_idx_last_scheduled_token is not None
    nct = first = None
    block = 0
    if apc:
        # the update fills no block boundary: first == last (no fills); nct > 0 keeps the
        # history (the update always has one); block_size only has to be valid
        first = block_idx_last_scheduled_token
        nct = torch.ones(first.shape[0], dtype=torch.int64)
        block = 2
    _conv(xv, _param(weight, x).t(), conv_state.transpose(1, 2),
          query_start_loc=query_start_loc, cache_indices=conv_state_indices,
          num_accepted_tokens=num_accepted_tokens, num_computed_tokens=nct,
          block_idx_first_scheduled_token=first,
          block_idx_last_scheduled_token=block_idx_last_scheduled_token,
          initial_state_idx=initial_state_idx if apc else None, bias=_param(bias, x),
          pad_slot_id=pad_slot_id,
          max_query_len=int(max_query_len) if query_start_loc is not None else -1,
          block_size=block, activation=act, y=yv, state_align="head",
          cache_seqlens=cache_seqlens)
    return out if out.dtype == x_dtype else out.to(x_dtype)
