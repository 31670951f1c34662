# SPDX-License-Identifier: Apache-2.0
"""llmk.vllm KV-cache writes against vLLM's kernel tests (tests/kernels/attention/
test_cache.py): test_reshape_and_cache, test_reshape_and_cache_flash (NHD and HND, per-tensor
and per-head scales), test_concat_and_cache_mla, with vLLM's parameter lists, references
(index assignment into a clone of the cache) and tolerances (fp8: compared after converting
back, atol 0.001, rtol 0.1), plus cases vLLM's grid lacks (padding slots, key longer than
slot_mapping, fp8_e4m3 / fp8_e5m2 spelled out, f16, a slot out of range).

fp8 references use the test's own round-to-nearest-even encoder (_harness.fp8_encode), never
llmk. Where vLLM's reference converts the whole cache back to f16 and compares it with
tolerance, this test compares the unwritten part of the cache bit for bit with its
snapshot (stricter) and the written slots after converting back, with vLLM's tolerance.

Run: LLMK_LIBRARY=build/libllmk.so PYTHONPATH=python python3 tests/python/vllm/test_cache.py
"""

import random
import sys

from _harness import FULL, POOL, Harness, fp8_decode, fp8_encode, llmk, ops, torch

H_ = Harness("test_cache")

DTYPES = [torch.bfloat16, torch.float]
NUM_TOKENS = [42]
NUM_HEADS = [8]
HEAD_SIZES = [64, 80, 256]
BLOCK_SIZES = [8, 16, 32]
CACHE_LAYOUTS = ["NHC", "HNC"]
KV_SCALE_TYPES = ["tensor", "attn_head"]
# vLLM: NUM_BLOCKS = [1024, 10000]. 10000 blocks of 8 x 256 x 32 f32 are 2.6 GB per cache
# and this machine first-touches memory at ~150 MB/s (the grid would take many minutes on
# 2 cores), so the second size is 2048 unless LLMK_VLLM_FULL_GRID=1.
NUM_BLOCKS = [1024, 10000] if FULL else [1024, 2048]
SEEDS = [0]
KV_CACHE_DTYPE = ["auto", "fp8"]

KV_LORA_RANKS = [256, 512]
QK_ROPE_HEAD_DIMS = [64]
NUM_TOKENS_MLA = [42]
BLOCK_SIZES_MLA = [16]
NUM_BLOCKS_MLA = [8]

FMT = {"fp8": "fp8_e4m3fn", "fp8_e4m3": "fp8_e4m3fn", "fp8_e5m2": "fp8_e5m2"}


def seed_all(seed):
    random.seed(seed)
    torch.manual_seed(seed)


def esize(dtype):
    return torch.tensor([], dtype=dtype).element_size()


def rtol_of(fmt):
    """vLLM's fp8 tolerance (rtol 0.1) is for e4m3 (relative rounding error <= 2^-4);
    e5m2, which vLLM's grid does not run, rounds to 2 mantissa bits (<= 2^-3)."""
    return 0.1 if fmt == "fp8_e4m3fn" else 0.13


def dequant(codes, fmt, scale_b):
    """vLLM's convert_fp8 back to f16: decode, times the scale (broadcast), to f16."""
    return (fp8_decode(codes, fmt).float() * scale_b).half()


# ----------------------------------------------------------------------------- paged (x-split)

def scrub(bo, rows):
    """Zero the written slots of the pooled caches: the next case may view the same bytes
    as another dtype, where written bits (an f32's low half read as bf16, an fp8 code read
    as the high byte of a bf16) could be NaN and defeat torch.equal."""
    for b, o in bo:
        for t in rows(b, o):
            t.zero_()


def paged_caches(num_blocks, block_size, num_heads, head_size, kv_cache_dtype, dtype):
    """vLLM's create_kv_caches_with_random layout: key [nb, H, D/x, bs, x] with
    x = 16 / element size, value [nb, H, D, bs]; fp8 caches are uint8."""
    cdt = torch.uint8 if kv_cache_dtype != "auto" else dtype
    x = 16 // esize(cdt)
    kc = POOL.get("k", (num_blocks, num_heads, head_size // x, block_size, x), cdt)
    vc = POOL.get("v", (num_blocks, num_heads, head_size, block_size), cdt)
    return kc, vc


def run_reshape_and_cache(num_tokens, num_heads, head_size, block_size, num_blocks, dtype,
                          seed, kv_cache_dtype, pad=0, extra_rows=0, group="reshape_and_cache"):
    if kv_cache_dtype != "auto" and head_size % 16:
        return  # vLLM skips these
    H_.case(group)
    what = "reshape_and_cache T=%d H=%d D=%d bs=%d nb=%d %s %s" % (
        num_tokens, num_heads, head_size, block_size, num_blocks, dtype, kv_cache_dtype)
    seed_all(seed)
    num_slots = block_size * num_blocks
    slots = random.sample(range(num_slots), num_tokens)
    for i in range(pad):                       # padding tokens (PAD_SLOT_ID) in the batch
        slots[(i * 7) % num_tokens] = ops.PAD_SLOT_ID
    slot_mapping = torch.tensor(slots, dtype=torch.long)
    qkv = torch.randn(num_tokens + extra_rows, 3, num_heads, head_size, dtype=dtype)
    _, key, value = qkv.unbind(dim=1)
    key_cache, value_cache = paged_caches(num_blocks, block_size, num_heads, head_size,
                                          kv_cache_dtype, dtype)
    k_scale = (key[:num_tokens].amax() / 64.0).to(torch.float32)
    v_scale = (value[:num_tokens].amax() / 64.0).to(torch.float32)
    ref_k = POOL.get("k2", key_cache.shape, key_cache.dtype)
    ref_v = POOL.get("v2", value_cache.shape, value_cache.dtype)
    ref_k.copy_(key_cache)
    ref_v.copy_(value_cache)

    ops.reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype,
                          k_scale, v_scale)

    # the reference: index assignment into the snapshot, as vLLM's test does
    bs_idx = torch.div(slot_mapping, block_size, rounding_mode="floor").tolist()
    off_idx = (slot_mapping % block_size).tolist()
    x = key_cache.shape[4]
    fmt = FMT.get(kv_cache_dtype)
    for i in range(num_tokens):
        if slots[i] < 0:
            continue
        b, o = bs_idx[i], off_idx[i]
        if fmt is None:
            ref_k[b, :, :, o, :] = key[i].reshape(num_heads, head_size // x, x)
            ref_v[b, :, :, o] = value[i]
        else:  # written slots are checked after conversion below; take the result's bits
            ref_k[b, :, :, o, :] = key_cache[b, :, :, o, :]
            ref_v[b, :, :, o] = value_cache[b, :, :, o]
    H_.check(torch.equal(key_cache, ref_k), what + ": key cache")
    H_.check(torch.equal(value_cache, ref_v), what + ": value cache")
    if fmt is not None:
        live = [i for i in range(num_tokens) if slots[i] >= 0]
        b = torch.tensor([bs_idx[i] for i in live])
        o = torch.tensor([off_idx[i] for i in live])
        got_k = key_cache[b, :, :, o, :].reshape(len(live), num_heads, head_size)
        got_v = value_cache[b, :, :, o].reshape(len(live), num_heads, head_size)
        H_.close_fn(dequant(got_k, fmt, k_scale), key[live].half(), what + ": fp8 key",
                    atol=0.001, rtol=rtol_of(fmt))
        H_.close_fn(dequant(got_v, fmt, v_scale), value[live].half(), what + ": fp8 value",
                    atol=0.001, rtol=rtol_of(fmt))
        # and the rounding is llmk's documented one: RNE of f32(x) / scale
        H_.check(torch.equal(got_k, fp8_encode(key[live].float() / k_scale, fmt)),
                 what + ": fp8 key codes = RNE(x / k_scale)")
    scrub([(bs_idx[i], off_idx[i]) for i in range(num_tokens) if slots[i] >= 0],
          lambda b, o: (key_cache[b, :, :, o, :], value_cache[b, :, :, o]))


def test_reshape_and_cache():
    for num_tokens in NUM_TOKENS:
        for num_heads in NUM_HEADS:
            for head_size in HEAD_SIZES:
                for block_size in BLOCK_SIZES:
                    for num_blocks in NUM_BLOCKS:
                        for dtype in DTYPES:
                            for seed in SEEDS:
                                for kvd in KV_CACHE_DTYPE:
                                    run_reshape_and_cache(num_tokens, num_heads, head_size,
                                                          block_size, num_blocks, dtype, seed,
                                                          kvd)


# ----------------------------------------------------------------------------- flash

def flash_caches(num_blocks, block_size, num_heads, head_size, kv_cache_dtype, dtype,
                 cache_layout):
    """vLLM's create_kv_caches_with_random_flash: one [nb, 2, bs, H, D] buffer (NHD), or
    [nb, 2, H, bs, D] (HND) permuted to that logical shape; key = [:, 0], value = [:, 1]."""
    cdt = torch.uint8 if kv_cache_dtype != "auto" else dtype
    if cache_layout == "NHC":
        kv = POOL.get("k", (num_blocks, 2, block_size, num_heads, head_size), cdt)
    else:
        kv = POOL.get("k", (num_blocks, 2, num_heads, block_size, head_size), cdt)
        kv = kv.permute(0, 1, 3, 2, 4)
    return kv, kv[:, 0], kv[:, 1]


def run_reshape_and_cache_flash(num_tokens, num_heads, head_size, block_size, num_blocks,
                                dtype, seed, kv_cache_dtype, kv_cache_layout, kv_scale_type,
                                pad=0, extra_rows=0, group="reshape_and_cache_flash"):
    H_.case(group)
    what = "reshape_and_cache_flash T=%d H=%d D=%d bs=%d nb=%d %s %s %s %s" % (
        num_tokens // 2, num_heads, head_size, block_size, num_blocks // 2, dtype,
        kv_cache_dtype, kv_cache_layout, kv_scale_type)
    seed_all(seed)
    # vLLM halves tokens and blocks here ("fp8 conversion requires contiguous memory")
    num_tokens = num_tokens // 2
    num_blocks = num_blocks // 2
    num_slots = block_size * num_blocks
    slots = random.sample(range(num_slots), num_tokens)
    for i in range(pad):
        slots[(i * 5) % num_tokens] = ops.PAD_SLOT_ID
    slot_mapping = torch.tensor(slots, dtype=torch.long)
    qkv = torch.randn(num_tokens + extra_rows, 3, num_heads, head_size, dtype=dtype)
    _, key, value = qkv.unbind(dim=1)
    kv, key_cache, value_cache = flash_caches(num_blocks, block_size, num_heads, head_size,
                                              kv_cache_dtype, dtype, kv_cache_layout)
    live_k, live_v = key[:num_tokens], value[:num_tokens]
    if kv_scale_type == "tensor":
        k_scale = (live_k.amax() / 64.0).to(torch.float32)
        v_scale = (live_v.amax() / 64.0).to(torch.float32)
        ks_b, vs_b = k_scale, v_scale
    else:  # per attention head
        k_scale = (live_k.amax(dim=(0, 2)) / 64.0).to(torch.float32)
        v_scale = (live_v.amax(dim=(0, 2)) / 64.0).to(torch.float32)
        ks_b, vs_b = k_scale.view(-1, 1), v_scale.view(-1, 1)
    ref = POOL.get("k2", kv.shape, kv.dtype)
    ref.copy_(kv)

    ops.reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping,
                                kv_cache_dtype, k_scale, v_scale)

    # the reference, on the physical layout as vLLM's test writes it: NHC [b, o, :, :],
    # HNC [b, :, o, :] of the compact (block, head, slot, dim) view
    ref_k, ref_v = ref[:, 0], ref[:, 1]
    if kv_cache_layout == "HNC":
        ref_k, ref_v = ref_k.permute(0, 2, 1, 3), ref_v.permute(0, 2, 1, 3)
    fmt = FMT.get(kv_cache_dtype)
    got_k_all = key_cache if kv_cache_layout == "NHC" else key_cache.permute(0, 2, 1, 3)
    got_v_all = value_cache if kv_cache_layout == "NHC" else value_cache.permute(0, 2, 1, 3)
    live = [i for i in range(num_tokens) if slots[i] >= 0]
    for i in live:
        b, o = slots[i] // block_size, slots[i] % block_size
        if kv_cache_layout == "NHC":
            dk, dv, sk, sv = ref_k[b, o], ref_v[b, o], got_k_all[b, o], got_v_all[b, o]
        else:
            dk, dv, sk, sv = ref_k[b, :, o], ref_v[b, :, o], got_k_all[b, :, o], got_v_all[b, :, o]
        if fmt is None:
            dk.copy_(key[i])
            dv.copy_(value[i])
        else:
            dk.copy_(sk)
            dv.copy_(sv)
    H_.check(torch.equal(kv, ref), what + ": caches (both halves of the kv buffer)")
    if fmt is not None:
        b = torch.tensor([slots[i] // block_size for i in live])
        o = torch.tensor([slots[i] % block_size for i in live])
        got_k, got_v = key_cache[b, o], value_cache[b, o]            # [n, H, D]
        H_.close_fn(dequant(got_k, fmt, ks_b), key[live].half(), what + ": fp8 key",
                    atol=0.001, rtol=rtol_of(fmt))
        H_.close_fn(dequant(got_v, fmt, vs_b), value[live].half(), what + ": fp8 value",
                    atol=0.001, rtol=rtol_of(fmt))
        H_.check(torch.equal(got_k, fp8_encode(key[live].float() / ks_b, fmt)),
                 what + ": fp8 key codes = RNE(x / k_scale)")
    scrub([(slots[i] // block_size, slots[i] % block_size) for i in live],
          lambda b, o: (key_cache[b, o], value_cache[b, o]))


def test_reshape_and_cache_flash():
    for num_tokens in NUM_TOKENS:
        for num_heads in NUM_HEADS:
            for head_size in HEAD_SIZES:
                for block_size in BLOCK_SIZES:
                    for num_blocks in NUM_BLOCKS:
                        for dtype in DTYPES:
                            for seed in SEEDS:
                                for kvd in KV_CACHE_DTYPE:   # "nvfp4": not in llmk
                                    for layout in CACHE_LAYOUTS:
                                        for st in KV_SCALE_TYPES:
                                            run_reshape_and_cache_flash(
                                                num_tokens, num_heads, head_size, block_size,
                                                num_blocks, dtype, seed, kvd, layout, st)


# ----------------------------------------------------------------------------- MLA

def run_concat_and_cache_mla(kv_lora_rank, qk_rope_head_dim, num_tokens, block_size,
                             num_blocks, dtype, seed, kv_cache_dtype, pad=0, sliced=False,
                             group="concat_and_cache_mla"):
    H_.case(group)
    what = "concat_and_cache_mla R=%d P=%d T=%d bs=%d nb=%d %s %s%s" % (
        kv_lora_rank, qk_rope_head_dim, num_tokens, block_size, num_blocks, dtype,
        kv_cache_dtype, " sliced" if sliced else "")
    seed_all(seed)
    total_slots = num_blocks * block_size
    slots = random.sample(range(total_slots), num_tokens)
    for i in range(pad):
        slots[(i * 3) % num_tokens] = ops.PAD_SLOT_ID
    slot_mapping = torch.tensor(slots, dtype=torch.long)
    if sliced:   # kv_c and k_pe as views of one projection output, as MLA's callers pass
        proj = torch.randn(num_tokens + 3, kv_lora_rank + qk_rope_head_dim + 5, dtype=dtype)
        kv_c, k_pe = proj[:, :kv_lora_rank], proj[:, kv_lora_rank + 5:]
    else:
        kv_c = torch.randn(num_tokens, kv_lora_rank, dtype=dtype)
        k_pe = torch.randn(num_tokens, qk_rope_head_dim, dtype=dtype)
    entry_size = kv_lora_rank + qk_rope_head_dim
    scale = torch.tensor(0.1, dtype=torch.float32)
    fmt = FMT.get(kv_cache_dtype)
    cache_dtype = torch.uint8 if fmt else dtype
    kv_cache = torch.zeros(num_blocks, block_size, entry_size, dtype=cache_dtype)
    ref_temp = torch.zeros(num_blocks, block_size, entry_size, dtype=dtype)
    for i in range(num_tokens):
        if slots[i] < 0:
            continue
        b, o = slots[i] // block_size, slots[i] % block_size
        ref_temp[b, o, :kv_lora_rank] = kv_c[i]
        ref_temp[b, o, kv_lora_rank:] = k_pe[i]
    ref_kv_cache = fp8_encode(ref_temp.float() / scale, fmt) if fmt else ref_temp

    ops.concat_and_cache_mla(kv_c, k_pe, kv_cache, slot_mapping, kv_cache_dtype, scale)

    if fmt:
        H_.close_fn(dequant(kv_cache, fmt, scale), dequant(ref_kv_cache, fmt, scale),
                    what + ": fp8 cache", atol=0.001, rtol=rtol_of(fmt))
        H_.check(torch.equal(kv_cache, ref_kv_cache), what + ": fp8 codes = RNE(x / scale)")
    else:
        H_.close_fn(kv_cache, ref_kv_cache, what)
        H_.check(torch.equal(kv_cache, ref_kv_cache), what + ": bit exact")


def test_concat_and_cache_mla():
    for r in KV_LORA_RANKS:
        for p in QK_ROPE_HEAD_DIMS:
            for t in NUM_TOKENS_MLA:
                for bs in BLOCK_SIZES_MLA:
                    for nb in NUM_BLOCKS_MLA:
                        for dtype in DTYPES:
                            for seed in SEEDS:
                                for kvd in KV_CACHE_DTYPE:
                                    run_concat_and_cache_mla(r, p, t, bs, nb, dtype, seed, kvd)


# ----------------------------------------------------------------------------- beyond vLLM's grid

def test_extras():
    """Cases vLLM's grid does not have but its callers produce."""
    g = "extras"
    for kvd in ("auto", "fp8_e4m3", "fp8_e5m2"):
        for dtype in (torch.half, torch.bfloat16, torch.float):
            # padding slots and key/value longer than slot_mapping (CUDA-graph padding)
            run_reshape_and_cache(13, 4, 64, 16, 64, dtype, 1, kvd, pad=3, extra_rows=5,
                                  group=g)
            for layout in CACHE_LAYOUTS:
                run_reshape_and_cache_flash(26, 4, 80 if kvd == "auto" else 64, 16, 128,
                                            dtype, 2, kvd, layout, "attn_head", pad=2,
                                            extra_rows=4, group=g)
            run_concat_and_cache_mla(512, 64, 20, 16, 8, dtype, 3, kvd, pad=2, sliced=True,
                                     group=g)
    # a slot out of range: llmk refuses (vLLM writes out of bounds); nothing is written
    H_.case(g)
    key = torch.randn(4, 2, 16)
    kc = torch.zeros(2, 8, 2, 16)
    vc = torch.zeros(2, 8, 2, 16)
    try:
        ops.reshape_and_cache_flash(key, key, kc, vc, torch.tensor([0, 1, 16, 3]), "auto",
                                    torch.tensor(1.0), torch.tensor(1.0))
        H_.check(False, "slot 16 of 16 slots: expected llmk.Error")
    except llmk.Error as e:
        H_.check(e.status_name == "LLMK_ERROR_INVALID_VALUE" and "out of range" in e.message,
                 "slot out of range: %s" % e)
        H_.check(not kc.any() and not vc.any(), "slot out of range: nothing written")
    # vLLM's shape checks on the scales of the flash path
    H_.case(g)
    try:
        ops.reshape_and_cache_flash(key, key, kc.byte(), vc.byte(), torch.tensor([0, 1, 2, 3]),
                                    "fp8", torch.ones(3), torch.ones(3))
        H_.check(False, "k_scale [3] with H=2: expected an error")
    except ValueError as e:
        H_.check("[1] or [num_heads" in str(e), "k_scale shape error: %s" % e)


def main():
    print("llmk %s (%s), torch %s" % (llmk.version(), llmk.library_path(), torch.__version__))
    for fn in (test_reshape_and_cache, test_reshape_and_cache_flash, test_concat_and_cache_mla,
               test_extras):
        if len(sys.argv) < 2 or fn.__name__ in sys.argv[1:]:
            H_.run(fn)
    return H_.finish()


if __name__ == "__main__":
    sys.exit(main())
