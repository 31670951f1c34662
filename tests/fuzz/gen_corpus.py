#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the seed corpus (valid calls and the regression inputs) in the byte format the
targets decode (fuzz_common.h: fz_int, fz_index, fz_tensor_new). Run from anywhere;
files land in tests/fuzz/corpus/<target>/. Inputs found by fuzzing (found_*) are kept."""
import os, struct

SPECIAL = [2**31 - 1, 2**31, 2**32, 2**40, 2**53, 2**61, 2**62, 2**62 + 1, 2**63 - 2,
           2**63 - 1, -2**63, -1, -2, -2**63 + 1, 2**32 + 1]

def I(v):  # fz_int
    if 0 <= v < 16: return bytes([v])
    if 16 <= v < 272: return bytes([0xC0, v - 16])
    if v in SPECIAL: return bytes([0xF0 + SPECIAL.index(v)])
    if 0 <= v < 65536: return bytes([0xE0, v & 255, v >> 8])
    return bytes([0xFF]) + struct.pack('<q', v)

def X(v, hi):  # fz_index with valid range [0, hi)
    if v == -1: return bytes([0xB0])
    if v == hi: return bytes([0xC0])
    if 0 <= v < 0xB0 and v < hi: return bytes([v])
    return bytes([0xD0]) + I(v)

def Ts(d=0, pert=b'', sm=0, smx=b'', a=0, fill=0, seed=1, off=b''):  # fz_tensor_new
    return bytes([d]) + (pert or b'\0') + bytes([sm]) + smx + bytes([a, fill, seed]) + off

def B(*xs): return bytes(xs)

corpus = {}
def put(target, name, data): corpus.setdefault(target, {})[name] = data

# ------------------------------------------------------------------ advance_step
def adv(mode, ns, nq, bs, mb, S=0, t=None, fills=b'', flags=b'\0'):
    t = t or {}
    out = B(mode) + I(ns) + (B(1) + I(nq) if nq != ns else B(0)) + I(bs) + I(mb)
    if mode == 1: out += I(S)
    out += t.get('bt', Ts()) + B(0) + t.get('samp', Ts())
    for k in ('seq', 'pos', 'tok', 'slot'): out += t.get(k, Ts())
    if mode == 1: out += B(0) + t.get('spec', Ts()) + B(0) + t.get('acc', Ts())
    return out + fills + flags
put('fuzz_advance_step', 'valid_plain',
    adv(0, 4, 3, 4, 2, fills=B(0, 1, 2, 3, 4, 5, 6, 7) + B(9, 8, 7) + B(1, 5, 7, 0)))
put('fuzz_advance_step', 'valid_flat',
    adv(2, 4, 4, 4, 2, fills=B(0, 1, 2, 3, 4, 5, 6, 7) + B(9, 8, 7, 6) + B(1, 5, 3, 0), flags=B(1)))
spec_fill = B(0, 1, 2, 3, 4, 5, 6, 7) + B(5, 6, 7, 0xB0) + B(1, 2, 3, 4) + B(11, 12) + B(0, 1)
put('fuzz_advance_step', 'valid_spec', adv(1, 2, 2, 4, 4, 1, fills=spec_fill))
put('fuzz_advance_step', 'regress_04_spec_positions_stride0',
    adv(1, 2, 2, 4, 4, 1, t={'pos': Ts(sm=6, smx=B(0))}, fills=spec_fill))
put('fuzz_advance_step', 'regress_10_spec_token_dim1_int64max',
    adv(1, 1, 1, 4, 4, 1, t={'spec': Ts(pert=B(0xE1) + I(2**63 - 1))}, fills=spec_fill))

# ----------------------------------------------------------- scatter_pa_kv_cache
def sc(layout, T, H, Dk, Dv, nb, bs, has_v=True, key=None, kc=None, vc=None, slot=None,
       kcd=0, vcd=0, slots=b'', scales=B(0, 0), val=None):
    out = B(layout) + I(T) + I(H) + I(Dk) + I(Dv) + I(nb) + I(bs) + (key or Ts())
    out += B(1 if has_v else 0)
    if has_v: out += val or Ts()
    out += B(kcd) + (kc or Ts())
    if not has_v: out += B(0)
    else: out += B(vcd) + (vc or Ts())
    return out + (slot or Ts()) + slots + scales + B(1)
put('fuzz_scatter_pa_kv_cache', 'valid_blocks', sc(0, 3, 2, 4, 4, 2, 2, slots=B(3, 0xB0, 1)))
put('fuzz_scatter_pa_kv_cache', 'valid_xsplit', sc(1, 2, 1, 16, 16, 2, 2, slots=B(2, 1)))
put('fuzz_scatter_pa_kv_cache', 'valid_nz', sc(2, 2, 2, 8, 8, 1, 4, slots=B(0, 3)))
put('fuzz_scatter_pa_kv_cache', 'valid_fp8_scales',
    sc(0, 2, 2, 4, 4, 2, 2, kcd=0xA0, vcd=0xA1, slots=B(0, 2),
       scales=B(2) + Ts(d=0) + B(64) + B(3) + Ts(d=0) + B(32, 96)))
put('fuzz_scatter_pa_kv_cache', 'valid_k_only', sc(0, 2, 1, 4, 0, 2, 2, has_v=False, slots=B(1, 2)))
# KC is g_tensors[2] (key, value, key_cache); its block is 2*2*1*4 f16 = 32 bytes
put('fuzz_scatter_pa_kv_cache', 'regress_01_slot_mapping_overlaps_key_cache',
    sc(0, 2, 1, 4, 4, 2, 2, slot=Ts(a=0xF2, off=B(0)), slots=B(0, 1)))
put('fuzz_scatter_pa_kv_cache', 'regress_05_empty_H_2e63m2',
    sc(0, 0, 2**63 - 2, 1, 1, 0, 1, has_v=False))
put('fuzz_scatter_pa_kv_cache', 'regress_06_value_D0_xsplit', sc(1, 2, 1, 8, 0, 2, 2, slots=B(0, 1)))

# ------------------------------------------------------------ gather_pa_kv_cache
def ga(layout, Bn, H, Dk, Dv, nb, bs, mb, bt, seqs, has_v=True, vo=None, odt=0):
    out = B(layout) + I(Bn) + I(H) + I(Dk) + I(Dv) + I(nb) + I(bs) + I(mb) + B(odt)
    out += B(1 if has_v else 0) + B(0) + Ts()
    if has_v: out += B(0) + Ts()
    out += Ts() + b''.join(X(v, nb) for v in bt) + Ts() + b''.join(X(v, mb * bs + 1) for v in seqs)
    out += B(0, 0) + Ts()
    out += (vo or Ts()) if has_v else B(0)
    return out + B(1)
put('fuzz_gather_pa_kv_cache', 'valid_blocks', ga(0, 2, 2, 4, 4, 3, 2, 2, [0, 2, 1, 0], [3, 2]))
put('fuzz_gather_pa_kv_cache', 'valid_xsplit', ga(1, 1, 1, 16, 16, 2, 2, 2, [1, 0], [4]))
put('fuzz_gather_pa_kv_cache', 'valid_nz', ga(2, 1, 2, 8, 8, 2, 4, 1, [1], [3], odt=0))
put('fuzz_gather_pa_kv_cache', 'valid_k_only', ga(0, 1, 1, 4, 0, 2, 2, 2, [1, 0], [3], has_v=False))
# BT is g_tensors[2] (key_cache, value_cache, block_tables): 1x2 i64 = 16 bytes
put('fuzz_gather_pa_kv_cache', 'regress_03_value_out_overlaps_block_tables',
    ga(0, 1, 1, 2, 2, 2, 2, 2, [0, 1], [3], vo=Ts(a=0xF2, off=B(0))))

# ------------------------------------------------------------ apply_top_k_top_p
def tk(entry, Bn, V, body, flags=B(0)): return B(entry) + I(Bn) + I(V) + body + flags
P2 = B(1) + Ts() + B(120, 200)        # p present, [0.5, 0.83]
K2 = B(1) + Ts() + B(3, 0)            # k present, [3, 0]
put('fuzz_apply_top_k_top_p', 'valid_apply', tk(0, 2, 8, Ts(fill=3) + P2 + K2 + B(0x80) + Ts()))
put('fuzz_apply_top_k_top_p', 'valid_apply_inplace', tk(0, 2, 40, Ts(d=1, fill=0) + P2 + K2 + B(0)))
put('fuzz_apply_top_k_top_p', 'valid_min_p',
    tk(1, 2, 8, Ts(fill=3) + P2 + B(0) + B(1) + Ts() + B(24, 48) + B(0x80) + Ts() + B(1) + Ts()))
put('fuzz_apply_top_k_top_p', 'valid_with_sorted',
    tk(2, 2, 8, B(3) + Ts() + Ts() + B(1) + Ts(fill=3) + P2 + K2 + Ts()))
put('fuzz_apply_top_k_top_p', 'valid_sample',
    tk(3, 2, 8, Ts(fill=3) + P2 + K2 + B(0) + B(1) + Ts() + B(200, 0) + Ts(fill=1) + B(0) + Ts()))
put('fuzz_apply_top_k_top_p', 'regress_08_with_sorted_not_ascending',
    tk(2, 2, 8, B(2) + Ts(fill=3, seed=7) + Ts() + B(0) + P2 + B(0) + Ts()))

# ----------------------------------------------------------- fused_causal_conv1d
def cv(three, batch, dim, K, lines, C, opts, S=None, lens=(), body=b'', x=None):
    out = B(1 if three else 0) + I(batch) + I(dim) + I(K) + I(lines) + I(C) + B(opts)
    out += B(1) + B(1) + B(0) + B(0) + B(0) + B(1)  # pad -1, mql -1, res 0, bsz 0, mode 0, silu
    if three: out += I(S) + (x or Ts())
    else: out += bytes(lens) + (x or Ts())
    out += Ts() + Ts()
    out += B(0) if three else Ts() + B(0)
    return out + body + B(0)
put('fuzz_fused_causal_conv1d', 'valid_varlen',
    cv(False, 2, 4, 3, 2, 2, 1, lens=(3, 2), body=Ts() + B(1, 0)))
put('fuzz_fused_causal_conv1d', 'valid_3d_mtp',
    cv(True, 2, 8, 4, 3, 4, 1 | 2 | 16, S=2, body=Ts() + B(2, 0) + Ts() + B(1, 2) + Ts()))
put('fuzz_fused_causal_conv1d', 'regress_07_3d_x_zero_tokens', cv(True, 2, 4, 3, 2, 2, 0, S=0))
put('fuzz_fused_causal_conv1d', 'regress_09_3d_x_2e62_1_0', cv(True, 2**62, 0, 3, 2, 2, 0, S=1))

# ------------------------------------------------------------------------ aclnn
# entry 5 (scatter), modes NULL; key_cache [2,2,1,16] f16 = one 128-byte block; key and
# slotMapping are views at its start (g_tensors[0] is the key cache).
put('fuzz_aclnn', 'regress_02_scatter_views_at_block_start',
    B(5, 0, 0) + I(2) + I(1) + I(16) + I(2) + I(2) + Ts() + Ts(a=0xF0, off=B(0)) +
    Ts(a=0xF0, off=B(0)) + B(0, 1) + B(0) + B(0, 0, 0) + B(0, 0))
put('fuzz_aclnn', 'valid_scatter',
    B(5, 1, 1) + I(2) + I(1) + I(16) + I(2) + I(2) + Ts() + Ts() + Ts() + B(3, 1) + B(1) + Ts() + Ts() +
    B(0) * 5 + B(0, 1))
put('fuzz_aclnn', 'valid_topk', B(0) + I(2) + I(8) + Ts(fill=3) + B(1, 1) + Ts() + B(100, 200) + Ts() +
    B(3, 0) + Ts() + B(0) * 4 + B(1, 2))
put('fuzz_aclnn', 'valid_advance_step', B(1) + I(4) + I(3) + I(4) + I(2) + Ts() + B(0, 1, 2, 3, 4, 5, 6, 7) +
    Ts() + Ts() + Ts() + Ts() + Ts() + B(9, 8, 7) + B(1, 5, 7, 0) + B(0) * 6 + B(0, 2))
put('fuzz_aclnn', 'valid_conv', B(3, 0) + I(2) + I(64) + I(2) + I(4) + Ts(d=0) + B(3, 2) + Ts() + Ts() +
    Ts() + B(1) + Ts() + B(0, 1) + B(0, 1, 0) + I(8) + B(0, 1, 0) + I(0) + B(0) * 5 + B(0, 3))
# entry 6 (aclnnTopKTopPSampleV2): logits [2, 8] f16, topK, topP, q and minPs given,
# the four outputs; inputIsLogits; ksMax 1024.
put('fuzz_aclnn', 'valid_topk_sample_v2', B(6) + I(2) + I(8) + Ts(fill=3) + Ts() + B(3, 9) +
    Ts() + B(100, 200) + B(1, 1) + Ts() + Ts() + B(20, 40) + Ts() * 4 + B(2) + I(32) +
    B(1) + B(0) * 9 + B(1, 2))

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus')
for target, files in corpus.items():
    d = os.path.join(root, target)
    os.makedirs(d, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(d, name), 'wb') as f: f.write(data)
print('gen_corpus: %d files' % sum(len(f) for f in corpus.values()))
