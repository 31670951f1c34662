/* advance_step on 1024 sequences, one thread: time per call of a repeatable plan,
 * of plan + run, and of a bare loop with the same dtypes that checks nothing (the
 * floor), all measured side by side in this run. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bench_util.h"
#include "llmk/llmk.h"

enum { NUM_SEQS = 1024, BLOCK = 16, MAX_BLOCKS = 256, CALLS = 200, REPEATS = 31 };

/* The arrays sit at staggered offsets of one arena: arrays that start at the same
 * offset modulo 4 KiB make loads wait on unrelated stores (4K aliasing) and would
 * measure that instead of the op. */
static int64_t *tokens, *sampled, *positions, *slots;
static int32_t *seq_lens, *seq_lens0, *tables;
static _Alignas(4096) unsigned char arena[8 * 16384 + NUM_SEQS * MAX_BLOCKS * 4 + 8192];

static void bare_loop(void) {
  for (int q = 0; q < NUM_SEQS; q++) {
    int64_t pos = seq_lens[q];
    tokens[q] = sampled[q];
    positions[q] = pos;
    seq_lens[q] = (int32_t)(pos + 1);
    slots[q] = (int64_t)tables[q * MAX_BLOCKS + pos / BLOCK] * BLOCK + pos % BLOCK;
  }
}

int main(void) {
  tokens = (int64_t *)(void *)(arena + 0 * 16384 + 0 * 576);
  sampled = (int64_t *)(void *)(arena + 1 * 16384 + 1 * 576);
  positions = (int64_t *)(void *)(arena + 2 * 16384 + 2 * 576);
  slots = (int64_t *)(void *)(arena + 3 * 16384 + 3 * 576);
  seq_lens = (int32_t *)(void *)(arena + 4 * 16384 + 4 * 576);
  seq_lens0 = (int32_t *)(void *)(arena + 5 * 16384 + 5 * 576);
  tables = (int32_t *)(void *)(arena + 6 * 16384 + 6 * 576);
  uint64_t x = 12345;
  for (int i = 0; i < NUM_SEQS; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    seq_lens0[i] = (int32_t)((x >> 33) % ((MAX_BLOCKS - 20) * BLOCK));
    sampled[i] = (int64_t)((x >> 20) % 150000);
  }
  for (int i = 0; i < NUM_SEQS * MAX_BLOCKS; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    tables[i] = (int32_t)((x >> 33) % 100000);
  }
  int64_t n[1] = {NUM_SEQS}, ns1[2] = {NUM_SEQS, 1}, tb[2] = {NUM_SEQS, MAX_BLOCKS};
  llmk_tensor t_tok, t_samp, t_pos, t_lens, t_slots, t_tab;
  llmk_tensor_init(&t_tok, LLMK_I64, 1, n, NULL, tokens);
  llmk_tensor_init(&t_samp, LLMK_I64, 2, ns1, NULL, sampled);
  llmk_tensor_init(&t_pos, LLMK_I64, 1, n, NULL, positions);
  llmk_tensor_init(&t_lens, LLMK_I32, 1, n, NULL, seq_lens);
  llmk_tensor_init(&t_slots, LLMK_I64, 1, n, NULL, slots);
  llmk_tensor_init(&t_tab, LLMK_I32, 2, tb, NULL, tables);

  size_t ws;
  llmk_plan *plan;
  if (llmk_advance_step_get_workspace_size(&t_tok, &t_samp, &t_pos, &t_lens, &t_slots,
                                           &t_tab, NULL, NULL, NUM_SEQS, NUM_SEQS, BLOCK,
                                           &ws, &plan) != LLMK_SUCCESS ||
      llmk_plan_set_repeatable(plan) != LLMK_SUCCESS) {
    fprintf(stderr, "setup failed: %s\n", llmk_last_error());
    return 1;
  }
  double t_run[REPEATS], t_full[REPEATS], t_bare[REPEATS];
  for (int r = 0; r < REPEATS; r++) {
    memcpy(seq_lens, seq_lens0, NUM_SEQS * sizeof *seq_lens);
    double t0 = bench_now();
    for (int c = 0; c < CALLS; c++)
      if (llmk_advance_step(NULL, ws, plan, NULL) != LLMK_SUCCESS) {
        fprintf(stderr, "run failed: %s\n", llmk_last_error());
        return 1;
      }
    t_run[r] = (bench_now() - t0) / CALLS;

    memcpy(seq_lens, seq_lens0, NUM_SEQS * sizeof *seq_lens);
    t0 = bench_now();
    for (int c = 0; c < CALLS; c++) {
      llmk_plan *p;
      if (llmk_advance_step_get_workspace_size(&t_tok, &t_samp, &t_pos, &t_lens, &t_slots,
                                               &t_tab, NULL, NULL, NUM_SEQS, NUM_SEQS,
                                               BLOCK, &ws, &p) != LLMK_SUCCESS ||
          llmk_advance_step(NULL, ws, p, NULL) != LLMK_SUCCESS) {
        fprintf(stderr, "run failed: %s\n", llmk_last_error());
        return 1;
      }
    }
    t_full[r] = (bench_now() - t0) / CALLS;

    memcpy(seq_lens, seq_lens0, NUM_SEQS * sizeof *seq_lens);
    t0 = bench_now();
    for (int c = 0; c < CALLS; c++) {
      bare_loop();
      __asm__ volatile("" ::: "memory");
    }
    t_bare[r] = (bench_now() - t0) / CALLS;
  }
  double run = bench_median(t_run, REPEATS), full = bench_median(t_full, REPEATS);
  double bare = bench_median(t_bare, REPEATS);
  /* bench_median sorted the samples: [0] is the fastest repeat */
  double run_min = t_run[0], full_min = t_full[0], bare_min = t_bare[0];
  printf(
      "advance_step, %d sequences, block_size %d, tokens/positions/slots i64, seq_lens "
      "and "
      "block_tables i32, 1 thread, median of %d x %d calls\n",
      NUM_SEQS, BLOCK, REPEATS, CALLS);
  printf("  %-36s %8s %8s  %s\n", "", "median", "fastest", "median / bare loop's median");
  printf("  %-36s %8.3f %8.3f  %5.2fx  us/call\n", "run (repeatable plan)", run * 1e6,
         run_min * 1e6, run / bare);
  printf("  %-36s %8.3f %8.3f  %5.2fx  us/call\n", "get_workspace_size + run", full * 1e6,
         full_min * 1e6, full / bare);
  printf("  %-36s %8.3f %8.3f  us/call\n", "bare loop (no checks, fixed dtypes)",
         bare * 1e6, bare_min * 1e6);
  printf("  ISA %s\n", llmk_isa_name(llmk_get_isa()));
  llmk_plan_destroy(plan);
  return 0;
}
