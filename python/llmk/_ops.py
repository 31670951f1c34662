# SPDX-License-Identifier: Apache-2.0
"""One function per llmk operator (see include/llmk/<op>.h and docs/ops/<op>.md)."""

from . import _core as c
from ._core import F32, I32, I64, lib, ref, run, tensor, vector

__all__ = [
    "advance_step", "scatter_pa_kv_cache", "gather_pa_kv_cache", "apply_top_k_top_p",
    "apply_top_k_top_p_min_p", "apply_top_k_top_p_with_sorted", "sample_top_k_top_p",
    "fused_causal_conv1d",
]

_fast = c.fast_module()

_LAYOUTS = {"blocks": 0, "nhd": 0, "hnd": 0, "xsplit": 1, "x-split": 1, "nz": 2}


def _layout(layout):
    if isinstance(layout, int):
        return layout
    try:
        return _LAYOUTS[str(layout).lower()]
    except KeyError:
        raise ValueError("llmk: layout must be 'blocks', 'nhd', 'hnd', 'xsplit' or 'nz' "
                         "(or 0, 1, 2), got %r" % (layout,)) from None


def _is_hnd(layout):
    return isinstance(layout, str) and layout.lower() == "hnd"


def _hnd_view(cache, what):
    """[num_blocks, H, block_size, D] (HND) as the op's [num_blocks, block_size, H, D]
    view: the same memory with dims 1 and 2 swapped (no copy)."""
    if cache is None:
        return None
    base = c.unwrap(cache)
    if len(c.shape_of(base)) != 4:
        raise ValueError("llmk: layout='hnd' needs a 4-D %s [num_blocks, H, block_size, D], "
                         "got shape %s" % (what, tuple(c.shape_of(base))))
    if c._kind(base) == "torch":
        v = base.transpose(1, 2)
    else:
        v = base.swapaxes(1, 2)
    return c._View(v, cache.dtype) if isinstance(cache, c._View) else v


def _rows(x, what):
    shape = c.shape_of(x)
    if not shape:
        raise ValueError("llmk: %s must have a leading [B] dimension" % what)
    return shape[0]


def _seq(obj, what):
    """A 1-D index argument: an array, or a Python sequence (made an i64 vector)."""
    if obj is None or c._kind(c.unwrap(obj)) is not None:
        return tensor(obj, what), None
    vals = list(obj)
    return vector(vals, len(vals), I64, what)


# ----------------------------------------------------------------------------- advance_step

def advance_step(input_tokens, sampled_token_ids, input_positions, seq_lens, slot_mapping,
                 block_tables, spec_token=None, accepted_num=None, num_seqs=None,
                 num_queries=None, block_size=None, ctx=None):
    """llmk_advance_step, in place: input_tokens, input_positions, seq_lens and
    slot_mapping are updated (plain mode; speculative mode when spec_token and
    accepted_num are given). num_seqs defaults to block_tables.shape[0], num_queries to
    sampled_token_ids.shape[0] (plain) or num_seqs (speculative); block_size is required.
    Every tensor i32 or i64, any non-negative strides. Returns None."""
    if _fast is not None and _fast.advance_step(input_tokens, sampled_token_ids,
                                                input_positions, seq_lens, slot_mapping,
                                                block_tables, spec_token, accepted_num,
                                                num_seqs, num_queries, block_size, ctx):
        return None
    if block_size is None:
        raise TypeError("llmk.advance_step: block_size is required")
    if num_seqs is None:
        num_seqs = _rows(block_tables, "block_tables")
    if num_queries is None:
        num_queries = num_seqs if spec_token is not None else _rows(sampled_token_ids,
                                                                    "sampled_token_ids")
    ts = (tensor(input_tokens, "input_tokens", True),
          tensor(sampled_token_ids, "sampled_token_ids"),
          tensor(input_positions, "input_positions", True),
          tensor(seq_lens, "seq_lens", True),
          tensor(slot_mapping, "slot_mapping", True),
          tensor(block_tables, "block_tables"),
          tensor(spec_token, "spec_token"),
          tensor(accepted_num, "accepted_num"))
    L = lib()
    run(L.llmk_advance_step_get_workspace_size,
        [ref(t) for t in ts] + [int(num_seqs), int(num_queries), int(block_size)],
        L.llmk_advance_step, ctx)


# ----------------------------------------------------------------------------- KV cache

def _scale(s, what):
    if s is None or c._kind(c.unwrap(s)) is not None or isinstance(s, c._View):
        return tensor(s, what), None
    if isinstance(s, (int, float)):
        return vector([float(s)], 1, F32, what)  # per tensor: [1]
    vals = [float(v) for v in s]
    return vector(vals, len(vals), F32, what)  # per head: [H]


def scatter_pa_kv_cache(key, value, key_cache, value_cache, slot_mapping, k_scale=None,
                        v_scale=None, layout="blocks", ctx=None):
    """llmk_scatter_pa_kv_cache: key_cache(b, o) = key[t] (and value) for every token t
    with slot_mapping[t] >= 0, b/o = slot // / % block_size; a later token wins a
    duplicate slot. value and value_cache may both be None (K only). layout: 'blocks'
    or 'nhd' (4-D [num_blocks, block_size, H, D], any strides), 'hnd' (4-D [num_blocks,
    H, block_size, D], any strides), 'xsplit' or 'nz'. fp8 caches: pass uint8 tensors through llmk.view(cache,
    'fp8_e4m3fn' / 'fp8_e5m2') with k_scale / v_scale (f32 tensor [] / [1] / [H], or a
    Python float). Returns None."""
    if _fast is not None and _fast.scatter_pa_kv_cache(key, value, key_cache, value_cache,
                                                       slot_mapping, k_scale, v_scale, layout,
                                                       ctx):
        return None  # plain CPU torch tensors: llmk/_fast.c; anything else below
    if _is_hnd(layout):
        key_cache = _hnd_view(key_cache, "key_cache")
        value_cache = _hnd_view(value_cache, "value_cache")
    ks, kk = _scale(k_scale, "k_scale")
    vs, vk = _scale(v_scale, "v_scale")
    ts = (tensor(key, "key"), tensor(value, "value"), tensor(key_cache, "key_cache", True),
          tensor(value_cache, "value_cache", True), tensor(slot_mapping, "slot_mapping"),
          ks, vs)
    L = lib()
    run(L.llmk_scatter_pa_kv_cache_get_workspace_size,
        [ref(t) for t in ts] + [_layout(layout)], L.llmk_scatter_pa_kv_cache, ctx)
    del kk, vk


def gather_pa_kv_cache(key_cache, value_cache, block_tables, seq_lens, k_scale=None,
                       v_scale=None, key_out=None, value_out=None, layout="blocks",
                       ctx=None):
    """llmk_gather_pa_kv_cache: the tokens of each sequence, in order, into key_out
    [sum(seq_lens), H, Dk] (and value_out). With the 'blocks' layout and no dtype
    change, missing outputs are allocated (contiguous, the cache's dtype); otherwise
    pass them. layout 'hnd': the caches are [num_blocks, H, block_size, D].
    Returns key_out, or (key_out, value_out) when value_cache is given."""
    if _fast is not None and key_out is not None and \
            (value_cache is None or value_out is not None) and \
            _fast.gather_pa_kv_cache(key_cache, value_cache, block_tables, seq_lens, k_scale,
                                     v_scale, key_out, value_out, layout, ctx):
        return key_out if value_cache is None else (key_out, value_out)
    if _is_hnd(layout):
        key_cache = _hnd_view(key_cache, "key_cache")
        value_cache = _hnd_view(value_cache, "value_cache")
    if key_out is None or (value_cache is not None and value_out is None):
        if _layout(layout) != 0 or isinstance(key_cache, c._View):
            raise TypeError("llmk.gather_pa_kv_cache: pass key_out / value_out for this "
                            "layout or dtype")
        total = int(c.unwrap(seq_lens).sum())
        if key_out is None:
            s = c.shape_of(key_cache)
            key_out = c.like(key_cache, shape=(total, s[2], s[3]), dtype=c.unwrap(key_cache).dtype)
        if value_cache is not None and value_out is None:
            s = c.shape_of(value_cache)
            value_out = c.like(value_cache, shape=(total, s[2], s[3]),
                               dtype=c.unwrap(value_cache).dtype)
    ks, kk = _scale(k_scale, "k_scale")
    vs, vk = _scale(v_scale, "v_scale")
    ts = (tensor(key_cache, "key_cache"), tensor(value_cache, "value_cache"),
          tensor(block_tables, "block_tables"), tensor(seq_lens, "seq_lens"), ks, vs,
          tensor(key_out, "key_out", True), tensor(value_out, "value_out", True))
    L = lib()
    run(L.llmk_gather_pa_kv_cache_get_workspace_size,
        [ref(t) for t in ts] + [_layout(layout)], L.llmk_gather_pa_kv_cache, ctx)
    del kk, vk
    return key_out if value_cache is None else (key_out, value_out)


# ----------------------------------------------------------------------------- top-k / top-p

def apply_top_k_top_p(logits, p=None, k=None, out=None, ctx=None):
    """llmk_apply_top_k_top_p: the sort-based top-k / top-p reference's result without a
    sort. logits [B, V] f32/f16/bf16, any strides; p [B] (logits' dtype or f32, or a
    Python float for every row); k [B] i32/i64 (or a Python int); out [B, V] (new when
    None; may be logits itself: in place). p and k both None: nothing to filter, as in
    vLLM: returns logits itself (or out, a copy of it, when out is given; the C API
    refuses that call). Returns out."""
    if p is None and k is None:
        if out is None or out is logits:
            return logits
        c.unwrap(out)[...] = c.unwrap(logits)
        return out
    B = _rows(logits, "logits")
    if out is None:
        out = c.like(logits)
    if _fast is not None and _fast.apply_top_k_top_p(logits, p, k, out, ctx):
        return out
    tp, kp = vector(p, B, F32, "p")
    tk, kk = vector(k, B, I32, "k")
    L = lib()
    run(L.llmk_apply_top_k_top_p_get_workspace_size,
        [ref(tensor(logits, "logits")), ref(tp), ref(tk), ref(tensor(out, "out", True))],
        L.llmk_apply_top_k_top_p, ctx)
    del kp, kk
    return out


def apply_top_k_top_p_min_p(logits, p=None, k=None, min_p=None, out=None, kept=None,
                            ctx=None):
    """llmk_apply_top_k_top_p_min_p: as apply_top_k_top_p, then min-p (mask entries whose
    probability is below min_p[r] times the row's largest); kept [B] i32/i64, if given,
    receives the number of entries kept per row. Returns out."""
    B = _rows(logits, "logits")
    if out is None:
        out = c.like(logits)
    tp, kp = vector(p, B, F32, "p")
    tk, kk = vector(k, B, I32, "k")
    tm, km = vector(min_p, B, F32, "min_p")
    L = lib()
    run(L.llmk_apply_top_k_top_p_min_p_get_workspace_size,
        [ref(tensor(logits, "logits")), ref(tp), ref(tk), ref(tm),
         ref(tensor(out, "out", True)), ref(tensor(kept, "kept", True))],
        L.llmk_apply_top_k_top_p, ctx)
    del kp, kk, km
    return out


def apply_top_k_top_p_with_sorted(sorted_value, sorted_indices, p=None, k=None, logits=None,
                                  out=None, ctx=None):
    """llmk_apply_top_k_top_p_with_sorted: for callers that sorted already. sorted_value
    [B, V] ascending (stable), sorted_indices [B, V] i32 or i64 (torch.sort's; a
    permutation per row),
    optional logits supplying the kept values. Returns out ([B, V], new when None)."""
    B = _rows(sorted_value, "sorted_value")
    if out is None:
        out = c.like(logits if logits is not None else sorted_value)
    tp, kp = vector(p, B, F32, "p")
    tk, kk = vector(k, B, I32, "k")
    L = lib()
    run(L.llmk_apply_top_k_top_p_with_sorted_get_workspace_size,
        [ref(tensor(sorted_value, "sorted_value")), ref(tensor(sorted_indices, "sorted_indices")),
         ref(tp), ref(tk), ref(tensor(logits, "logits")), ref(tensor(out, "out", True))],
        L.llmk_apply_top_k_top_p, ctx)
    del kp, kk
    return out


def sample_top_k_top_p(logits, p=None, k=None, min_p=None, temperature=None, seed=None,
                       offset=None, token_ids=None, ctx=None):
    """llmk_sample_top_k_top_p: one token id per row drawn from softmax(logits /
    temperature) after top-k, top-p and min-p, reproducibly from (seed, offset). seed
    [B] i64 (or a Python int) is required; temperature [B] f32 (0 = greedy); offset
    [B] i64; token_ids [B] i32/i64 (new i64 when None). Returns token_ids."""
    if seed is None:
        raise TypeError("llmk.sample_top_k_top_p: seed is required")
    B = _rows(logits, "logits")
    if token_ids is None:
        token_ids = c.like(logits, shape=(B,), dtype=c.int_dtype_of(logits))
        if isinstance(token_ids, c._View):
            token_ids = token_ids.obj
    tp, kp = vector(p, B, F32, "p")
    tk, kk = vector(k, B, I32, "k")
    tm, km = vector(min_p, B, F32, "min_p")
    tt, kt = vector(temperature, B, F32, "temperature")
    ts, ks = vector(seed, B, I64, "seed")
    to, ko = vector(offset, B, I64, "offset")
    L = lib()
    run(L.llmk_sample_top_k_top_p_get_workspace_size,
        [ref(tensor(logits, "logits")), ref(tp), ref(tk), ref(tm), ref(tt), ref(ts), ref(to),
         ref(tensor(token_ids, "token_ids", True))],
        L.llmk_apply_top_k_top_p, ctx)
    del kp, kk, km, kt, ks, ko
    return token_ids


# ----------------------------------------------------------------------------- causal conv1d

_ACTIVATIONS = {None: 0, "none": 0, "silu": 1, "swish": 1}


_STATE_ALIGN = {None: 0, "tail": 0, "cann": 0, "head": 1, "vllm": 1}


def fused_causal_conv1d(x, weight, conv_states, query_start_loc=None, cache_indices=None,
                        num_accepted_tokens=None, num_computed_tokens=None,
                        block_idx_first_scheduled_token=None,
                        block_idx_last_scheduled_token=None, initial_state_idx=None,
                        bias=None, pad_slot_id=-1, max_query_len=-1, residual_connection=0,
                        block_size=0, conv_mode=0, activation=None, y=None,
                        state_align=None, has_initial_state=None, cache_seqlens=None,
                        ctx=None):
    """llmk_fused_causal_conv1d: x ([T, dim] with query_start_loc, or [batch, S, dim])
    is replaced by the causal depthwise conv (weight [K, dim], K in 2..4) over each
    sequence's history and chunk (or y receives it, x unchanged), and conv_states
    [num_lines, C, dim] is updated (tail-aligned state, MTP offsets, APC block fill).
    activation: None or 'silu'. Index arguments: i32/i64 arrays (or Python sequences
    for 1-D ones). The v2 options (llmk_fused_causal_conv1d_v2_get_workspace_size):
    y (a separate output), state_align 'tail' (CANN, the default) or 'head' (vLLM: history
    from row 0, written from row 0), has_initial_state [batch] (bool/u8/i32/i64; 0 = no
    history), cache_seqlens [batch] (ring lines); with them any element strides (vLLM's
    transposed views). Returns y if given, else x."""
    if isinstance(activation, bool):
        act = int(activation)
    elif isinstance(activation, int):
        act = activation
    else:
        try:
            act = _ACTIVATIONS[activation if activation is None else str(activation).lower()]
        except KeyError:
            raise ValueError("llmk.fused_causal_conv1d: activation must be None or 'silu', "
                             "got %r" % (activation,)) from None
    if _fast is not None and y is None and state_align is None and \
            has_initial_state is None and cache_seqlens is None and \
            _fast.fused_causal_conv1d(x, weight, conv_states, query_start_loc, cache_indices,
                                      num_accepted_tokens, num_computed_tokens,
                                      block_idx_first_scheduled_token,
                                      block_idx_last_scheduled_token, initial_state_idx, bias,
                                      pad_slot_id, max_query_len, residual_connection,
                                      block_size, conv_mode, act, ctx):
        return x
    keep = []
    idx = []
    for obj, what in ((query_start_loc, "query_start_loc"),
                      (cache_indices, "cache_indices"),
                      (num_accepted_tokens, "num_accepted_tokens"),
                      (num_computed_tokens, "num_computed_tokens"),
                      (block_idx_first_scheduled_token, "block_idx_first_scheduled_token"),
                      (block_idx_last_scheduled_token, "block_idx_last_scheduled_token"),
                      (initial_state_idx, "initial_state_idx")):
        t, k = _seq(obj, what)
        idx.append(t)
        keep.append(k)
    ts = [tensor(x, "x", y is None), tensor(weight, "weight"),
          tensor(conv_states, "conv_states", True)] + idx + [tensor(bias, "bias")]
    attrs = [int(pad_slot_id), int(max_query_len), int(residual_connection), int(block_size),
             int(conv_mode), act]
    L = lib()
    if y is None and state_align is None and has_initial_state is None and \
            cache_seqlens is None:
        run(L.llmk_fused_causal_conv1d_get_workspace_size, [ref(t) for t in ts] + attrs,
            L.llmk_fused_causal_conv1d, ctx)
        del keep
        return x
    if isinstance(state_align, int) and not isinstance(state_align, bool):
        align = state_align
    else:
        align = _STATE_ALIGN.get(None if state_align is None else str(state_align).lower())
    if align is None:
        raise ValueError("llmk.fused_causal_conv1d: state_align must be 'tail' or 'head', "
                         "got %r" % (state_align,))
    base = c.unwrap(has_initial_state)
    if base is not None and c._kind(base) == "torch" and str(base.dtype) == "torch.bool":
        has_initial_state = c.view(base, "u8")
    hi, khi = _seq(has_initial_state, "has_initial_state")
    cs, kcs = _seq(cache_seqlens, "cache_seqlens")
    ty = tensor(y, "y", True)
    opts = c.ConvOptions()
    opts.struct_size = c.ctypes.sizeof(c.ConvOptions)
    opts.state_align = align
    opts.has_initial_state = c.ctypes.pointer(hi) if hi is not None else None
    opts.cache_seqlens = c.ctypes.pointer(cs) if cs is not None else None
    opts.y = c.ctypes.pointer(ty) if ty is not None else None
    run(L.llmk_fused_causal_conv1d_v2_get_workspace_size,
        [ref(t) for t in ts] + attrs + [c.ctypes.byref(opts)], L.llmk_fused_causal_conv1d, ctx)
    del keep, khi, kcs
    return x if y is None else y
