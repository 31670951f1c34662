# SPDX-License-Identifier: Apache-2.0
"""llmk.vllm.advance_step_flashattn against vLLM's kernel semantics
(csrc/prepare_inputs/advance_step.cu, removed from vLLM with the V0 multi-step runner; vLLM
had no kernel-level test for it, only end-to-end multi-step / draft-model tests). The grid
is therefore this test's own, shaped like vLLM's callers: vLLM's dtypes (i64 tokens,
positions, slots and sampled [num_queries, 1]; i32 seq_lens and block tables), CUDA-graph
padding (num_queries < num_seqs), block sizes 8 / 16 / 32, batch sizes up to 1024, tables
with spare columns, several steps in a row (the multi-step runner's loop), and the
differences kept (llmk's extra dtypes and strides accepted; out-of-table lookups refused).

Reference, from the kernel: for q < num_queries, token = sampled[q], position = seq_len,
seq_len + 1, slot = block_tables[q][pos // bs] * bs + pos % bs; rows num_queries..num_seqs-1
get token 0, position 0, slot -1 and keep their seq_len.

Run: LLMK_LIBRARY=build/libllmk.so PYTHONPATH=python python3 tests/python/vllm/test_advance_step.py
"""

import random
import sys

from _harness import Harness, llmk, ops, torch

H_ = Harness("test_advance_step")

NUM_SEQS = [1, 7, 64, 256, 1024]
PAD = [0, 1, 5]              # num_seqs - num_queries (CUDA-graph padding rows)
BLOCK_SIZES = [8, 16, 32]
STEPS = [1, 4]


def reference(num_seqs, num_queries, block_size, tok, samp, pos, sl, slot, bt):
    tok, pos, sl, slot = tok.clone(), pos.clone(), sl.clone(), slot.clone()
    for q in range(num_queries):
        p = int(sl[q])
        tok[q] = samp[q, 0]
        pos[q] = p
        sl[q] = p + 1
        slot[q] = int(bt[q, p // block_size]) * block_size + p % block_size
    for q in range(num_queries, num_seqs):
        tok[q] = 0
        pos[q] = 0
        slot[q] = -1
    return tok, pos, sl, slot


def make_inputs(num_seqs, block_size, steps, rng, idt=torch.long, sdt=torch.int,
                spare_cols=2):
    """vLLM's state after a prefill: seq_lens, block tables wide enough for `steps` more
    tokens (plus spare columns), distinct physical blocks."""
    seq_lens = [rng.randint(1, 200) for _ in range(num_seqs)]
    max_blocks = max((s + steps) // block_size + 1 for s in seq_lens) + spare_cols
    perm = list(range(num_seqs * max_blocks))
    rng.shuffle(perm)
    bt = torch.tensor(perm, dtype=sdt).view(num_seqs, max_blocks)
    tok = torch.tensor([rng.randint(0, 32000) for _ in range(num_seqs)], dtype=idt)
    pos = torch.tensor([s - 1 for s in seq_lens], dtype=idt)
    sl = torch.tensor(seq_lens, dtype=sdt)
    slot = torch.full((num_seqs,), 12345, dtype=idt)
    return tok, pos, sl, slot, bt


def run_case(num_seqs, pad, block_size, steps, group, idt=torch.long, sdt=torch.int,
             samp_1d=False, strided=False):
    if pad >= num_seqs:
        return
    H_.case(group)
    num_queries = num_seqs - pad
    rng = random.Random(num_seqs * 1000 + pad * 100 + block_size + steps)
    tok, pos, sl, slot, bt = make_inputs(num_seqs, block_size, steps, rng, idt, sdt)
    what = "advance_step_flashattn seqs=%d queries=%d bs=%d steps=%d %s/%s%s%s" % (
        num_seqs, num_queries, block_size, steps, idt, sdt, " sampled-1d" if samp_1d else "",
        " strided" if strided else "")
    if strided:  # views with a row stride / a padded block table
        big = torch.zeros(num_seqs, 3, dtype=idt)
        big[:, 1] = tok
        tok = big[:, 1]
        wide = torch.zeros(num_seqs, bt.shape[1] + 3, dtype=sdt)
        wide[:, :bt.shape[1]] = bt
        bt = wide[:, :bt.shape[1]]
    for step in range(steps):
        samp = torch.tensor([[rng.randint(0, 32000)] for _ in range(num_queries)], dtype=idt)
        exp = reference(num_seqs, num_queries, block_size, tok, samp, pos, sl, slot, bt)
        ret = ops.advance_step_flashattn(num_seqs, num_queries, block_size, tok,
                                         samp.view(-1) if samp_1d else samp, pos, sl, slot, bt)
        H_.check(ret is None, what + ": returns None")
        for name, got, e in zip(("input_tokens", "input_positions", "seq_lens",
                                 "slot_mapping"), (tok, pos, sl, slot), exp):
            H_.check(torch.equal(got, e), "%s step %d: %s" % (what, step, name))
        # the multi-step runner: padding rows stay padding, real rows go on
        H_.check(bool((slot[num_queries:] == ops.PAD_SLOT_ID).all()),
                 "%s step %d: padding slots are PAD_SLOT_ID" % (what, step))


def test_grid():
    for ns in NUM_SEQS:
        for pad in PAD:
            for bs in BLOCK_SIZES:
                for steps in STEPS:
                    run_case(ns, pad, bs, steps, "vllm_dtypes")


def test_llmk_extras():
    """Accepted by llmk beyond vLLM's checks: i32 everywhere, i64 everywhere, a 1-D
    sampled_token_ids, strided tensors."""
    for idt, sdt in ((torch.int, torch.int), (torch.long, torch.long), (torch.int, torch.long)):
        run_case(33, 3, 16, 3, "other_dtypes", idt, sdt)
    run_case(40, 2, 8, 2, "sampled_1d", samp_1d=True)
    run_case(40, 2, 8, 2, "strided", strided=True)


def test_errors():
    """vLLM reads past the block table (undefined); llmk refuses and writes nothing."""
    H_.case("errors")
    tok = torch.zeros(2, dtype=torch.long)
    pos = torch.zeros(2, dtype=torch.long)
    sl = torch.tensor([16, 3], dtype=torch.int)   # row 0: position 16 needs block 1
    slot = torch.full((2,), 7, dtype=torch.long)
    bt = torch.tensor([[4], [5]], dtype=torch.int)
    samp = torch.tensor([[11], [12]])
    try:
        ops.advance_step_flashattn(2, 2, 16, tok, samp, pos, sl, slot, bt)
        H_.check(False, "position past the block table: expected llmk.Error")
    except llmk.Error as e:
        print("note: past the block table: %s" % e)
        H_.check(e.status_name == "LLMK_ERROR_INVALID_VALUE", "past the table: %s" % e)
        H_.check(sl.tolist() == [16, 3] and slot.tolist() == [7, 7] and not tok.any(),
                 "past the table: nothing written")
    H_.case("errors")
    try:
        ops.advance_step_flashattn(2, 3, 16, tok, samp, pos, sl, slot, bt)
        H_.check(False, "num_queries > num_seqs: expected llmk.Error")
    except llmk.Error as e:
        H_.check(e.status_name == "LLMK_ERROR_INVALID_ATTRIBUTE", "num_queries > num_seqs: %s"
                 % e)


def main():
    print("llmk %s (%s), torch %s" % (llmk.version(), llmk.library_path(), torch.__version__))
    for fn in (test_grid, test_llmk_extras, test_errors):
        H_.run(fn)
    return H_.finish()


if __name__ == "__main__":
    sys.exit(main())
