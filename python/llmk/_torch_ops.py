# SPDX-License-Identifier: Apache-2.0
"""torch.ops.llmk.<op>: every llmk operator registered with the torch dispatcher.

Registered from Python with torch.library (Debian's torch 1.13 and current torch alike):
a CPU kernel that calls the library (the functions of llmk._ops) and a Meta kernel for
shape inference, so that torch.jit.trace records the op and meta tensors flow through it.
Ops that write their arguments in place declare them mutable in their schema (Tensor(a!))
and return nothing; the others return a new tensor.

kv_cache_dtype ("auto", "fp8_e4m3fn", "fp8_e5m2") says how a uint8 cache is read when the
torch in use has no fp8 dtypes (1.13): it is the llmk.view() of the Python API.
"""

import torch

from . import _ops

NAMESPACE = "llmk"

_SCHEMAS = {
    "apply_top_k_top_p":
        "apply_top_k_top_p(Tensor logits, Tensor? p=None, Tensor? k=None) -> Tensor",
    "apply_top_k_top_p_":
        "apply_top_k_top_p_(Tensor(a!) logits, Tensor? p=None, Tensor? k=None) -> ()",
    "apply_top_k_top_p_min_p":
        "apply_top_k_top_p_min_p(Tensor logits, Tensor? p=None, Tensor? k=None, "
        "Tensor? min_p=None) -> Tensor",
    "apply_top_k_top_p_with_sorted":
        "apply_top_k_top_p_with_sorted(Tensor sorted_value, Tensor sorted_indices, "
        "Tensor? p=None, Tensor? k=None, Tensor? logits=None) -> Tensor",
    "sample_top_k_top_p":
        "sample_top_k_top_p(Tensor logits, Tensor seed, Tensor? p=None, Tensor? k=None, "
        "Tensor? min_p=None, Tensor? temperature=None, Tensor? offset=None) -> Tensor",
    "scatter_pa_kv_cache":
        "scatter_pa_kv_cache(Tensor key, Tensor? value, Tensor(a!) key_cache, "
        "Tensor(b!)? value_cache, Tensor slot_mapping, Tensor? k_scale=None, "
        "Tensor? v_scale=None, str layout=\"blocks\", str kv_cache_dtype=\"auto\") -> ()",
    "gather_pa_kv_cache":
        "gather_pa_kv_cache(Tensor key_cache, Tensor? value_cache, Tensor block_tables, "
        "Tensor seq_lens, Tensor(a!) key_out, Tensor(b!)? value_out, "
        "Tensor? k_scale=None, Tensor? v_scale=None, str layout=\"blocks\", "
        "str kv_cache_dtype=\"auto\") -> ()",
    "advance_step":
        "advance_step(Tensor(a!) input_tokens, Tensor sampled_token_ids, "
        "Tensor(b!) input_positions, Tensor(c!) seq_lens, Tensor(d!) slot_mapping, "
        "Tensor block_tables, Tensor? spec_token, Tensor? accepted_num, int num_seqs, "
        "int num_queries, int block_size) -> ()",
    "fused_causal_conv1d":
        "fused_causal_conv1d(Tensor(a!) x, Tensor weight, Tensor(b!) conv_states, "
        "Tensor? query_start_loc=None, Tensor? cache_indices=None, "
        "Tensor? num_accepted_tokens=None, Tensor? num_computed_tokens=None, "
        "Tensor? block_idx_first_scheduled_token=None, "
        "Tensor? block_idx_last_scheduled_token=None, Tensor? initial_state_idx=None, "
        "Tensor? bias=None, int pad_slot_id=-1, int max_query_len=-1, "
        "int residual_connection=0, int block_size=0, int conv_mode=0, "
        "int activation=0, Tensor(c!)? y=None, int state_align=0, "
        "Tensor? has_initial_state=None, Tensor? cache_seqlens=None) -> ()",
}

_FP8 = {"auto": None, "fp8_e4m3fn": "fp8_e4m3fn", "fp8_e4m3": "fp8_e4m3fn",
        "fp8": "fp8_e4m3fn", "fp8_e5m2": "fp8_e5m2"}


def _as_cache(t, kv_cache_dtype):
    try:
        fmt = _FP8[kv_cache_dtype]
    except KeyError:
        raise ValueError("llmk: kv_cache_dtype must be one of %s, got %r"
                         % (", ".join(sorted(_FP8)), kv_cache_dtype)) from None
    if t is None or fmt is None or t.dtype != torch.uint8:
        return t
    from ._core import view
    return view(t, fmt)


# ----------------------------------------------------------------------------- CPU kernels

def _apply_top_k_top_p(logits, p=None, k=None):
    out = torch.empty_like(logits, memory_format=torch.contiguous_format)
    if p is None and k is None:
        out.copy_(logits)
        return out
    return _ops.apply_top_k_top_p(logits, p=p, k=k, out=out)


def _apply_top_k_top_p_(logits, p=None, k=None):
    if p is not None or k is not None:
        _ops.apply_top_k_top_p(logits, p=p, k=k, out=logits)


def _apply_top_k_top_p_min_p(logits, p=None, k=None, min_p=None):
    out = torch.empty_like(logits, memory_format=torch.contiguous_format)
    if p is None and k is None and min_p is None:
        out.copy_(logits)
        return out
    return _ops.apply_top_k_top_p_min_p(logits, p=p, k=k, min_p=min_p, out=out)


def _apply_top_k_top_p_with_sorted(sorted_value, sorted_indices, p=None, k=None,
                                   logits=None):
    return _ops.apply_top_k_top_p_with_sorted(sorted_value, sorted_indices, p=p, k=k,
                                              logits=logits)


def _sample_top_k_top_p(logits, seed, p=None, k=None, min_p=None, temperature=None,
                        offset=None):
    return _ops.sample_top_k_top_p(logits, p=p, k=k, min_p=min_p, temperature=temperature,
                                   seed=seed, offset=offset)


def _scatter_pa_kv_cache(key, value, key_cache, value_cache, slot_mapping, k_scale=None,
                         v_scale=None, layout="blocks", kv_cache_dtype="auto"):
    _ops.scatter_pa_kv_cache(key, value, _as_cache(key_cache, kv_cache_dtype),
                             _as_cache(value_cache, kv_cache_dtype), slot_mapping,
                             k_scale=k_scale, v_scale=v_scale, layout=layout)


def _gather_pa_kv_cache(key_cache, value_cache, block_tables, seq_lens, key_out, value_out,
                        k_scale=None, v_scale=None, layout="blocks", kv_cache_dtype="auto"):
    kc = _as_cache(key_cache, kv_cache_dtype)
    fp8_out = kc is not key_cache and key_out.dtype == torch.uint8
    _ops.gather_pa_kv_cache(kc, _as_cache(value_cache, kv_cache_dtype), block_tables,
                            seq_lens, k_scale=k_scale, v_scale=v_scale,
                            key_out=_as_cache(key_out, kv_cache_dtype) if fp8_out else key_out,
                            value_out=(_as_cache(value_out, kv_cache_dtype) if fp8_out
                                       else value_out),
                            layout=layout)


def _advance_step(input_tokens, sampled_token_ids, input_positions, seq_lens, slot_mapping,
                  block_tables, spec_token, accepted_num, num_seqs, num_queries, block_size):
    _ops.advance_step(input_tokens, sampled_token_ids, input_positions, seq_lens,
                      slot_mapping, block_tables, spec_token=spec_token,
                      accepted_num=accepted_num, num_seqs=num_seqs, num_queries=num_queries,
                      block_size=block_size)


def _fused_causal_conv1d(x, weight, conv_states, query_start_loc=None, cache_indices=None,
                         num_accepted_tokens=None, num_computed_tokens=None,
                         block_idx_first_scheduled_token=None,
                         block_idx_last_scheduled_token=None, initial_state_idx=None,
                         bias=None, pad_slot_id=-1, max_query_len=-1, residual_connection=0,
                         block_size=0, conv_mode=0, activation=0, y=None, state_align=0,
                         has_initial_state=None, cache_seqlens=None):
    v2 = y is not None or state_align or has_initial_state is not None or \
        cache_seqlens is not None
    _ops.fused_causal_conv1d(
        x, weight, conv_states, query_start_loc=query_start_loc, cache_indices=cache_indices,
        num_accepted_tokens=num_accepted_tokens, num_computed_tokens=num_computed_tokens,
        block_idx_first_scheduled_token=block_idx_first_scheduled_token,
        block_idx_last_scheduled_token=block_idx_last_scheduled_token,
        initial_state_idx=initial_state_idx, bias=bias, pad_slot_id=pad_slot_id,
        max_query_len=max_query_len, residual_connection=residual_connection,
        block_size=block_size, conv_mode=conv_mode, activation=activation, y=y,
        state_align=state_align if v2 else None, has_initial_state=has_initial_state,
        cache_seqlens=cache_seqlens)


_CPU = {
    "apply_top_k_top_p": _apply_top_k_top_p,
    "apply_top_k_top_p_": _apply_top_k_top_p_,
    "apply_top_k_top_p_min_p": _apply_top_k_top_p_min_p,
    "apply_top_k_top_p_with_sorted": _apply_top_k_top_p_with_sorted,
    "sample_top_k_top_p": _sample_top_k_top_p,
    "scatter_pa_kv_cache": _scatter_pa_kv_cache,
    "gather_pa_kv_cache": _gather_pa_kv_cache,
    "advance_step": _advance_step,
    "fused_causal_conv1d": _fused_causal_conv1d,
}

# ----------------------------------------------------------------------------- Meta kernels


def _meta_like(values, *args, **kw):
    return torch.empty_like(values, memory_format=torch.contiguous_format)


def _meta_with_sorted(sorted_value, sorted_indices, p=None, k=None, logits=None):
    return torch.empty_like(logits if logits is not None else sorted_value,
                            memory_format=torch.contiguous_format)


def _meta_sample(logits, *args, **kw):
    return torch.empty((logits.shape[0],), dtype=torch.int64, device=logits.device)


def _meta_nothing(*args, **kw):
    return None


_META = {
    "apply_top_k_top_p": _meta_like,
    "apply_top_k_top_p_": _meta_nothing,
    "apply_top_k_top_p_min_p": _meta_like,
    "apply_top_k_top_p_with_sorted": _meta_with_sorted,
    "sample_top_k_top_p": _meta_sample,
    "scatter_pa_kv_cache": _meta_nothing,
    "gather_pa_kv_cache": _meta_nothing,
    "advance_step": _meta_nothing,
    "fused_causal_conv1d": _meta_nothing,
}

_library = None


def _torch_major():
    try:
        return int(torch.__version__.split(".")[0])
    except ValueError:
        return 2


def register():
    """Registers the ops (once per process); returns the torch.library.Library."""
    global _library
    if _library is not None:
        return _library
    lib = torch.library.Library(NAMESPACE, "DEF")
    for name, schema in _SCHEMAS.items():
        lib.define(schema)
        lib.impl(name, _CPU[name], "CPU")
        lib.impl(name, _META[name], "Meta")
        if _torch_major() < 2:
            # torch 1.x has no autograd fallthrough for meta tensors
            lib.impl(name, _META[name], "AutogradMeta")
    _library = lib
    return lib


OPS = tuple(_SCHEMAS)
