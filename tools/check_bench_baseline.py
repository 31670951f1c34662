# SPDX-License-Identifier: Apache-2.0
"""Checks `llmk bench --baseline OLD.json` against a crafted baseline: per case, the printed
ratio and the JSON's vs_baseline must be this run's median / the crafted median of the same
op, shape AND dtype (advance_step has two cases of one shape that differ only by dtype);
a case missing from the baseline, or with a null median there, gets "-" / null; unknown
fields, nesting, escapes and a case of the baseline that this run lacks are skipped; a
malformed baseline is a usage error (exit 2) that runs nothing.
Usage: check_bench_baseline.py WORKDIR [EMULATOR...] LLMK"""
import json
import os
import subprocess
import sys

work, llmk = sys.argv[1], sys.argv[2:]
os.makedirs(work, exist_ok=True)
args = llmk + ["bench", "advance_step", "--quick", "--no-one-thread"]


def run(extra, expect_rc=0):
    p = subprocess.run(args + extra, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=600)
    assert p.returncode == expect_rc, "exit %d (want %d): %s" % (p.returncode, expect_rc,
                                                                p.stderr[-2000:])
    return p


# the labels of the cases, from a first run
first = os.path.join(work, "baseline_first.json")
run(["--json", first])
with open(first) as f:
    labels = [(c["op"], c["shape"], c["dtype"]) for c in json.load(f)["cases"]]
assert len(labels) >= 3, "too few cases to check"
assert len({(o, s) for o, s, _ in labels}) < len(labels), \
    "no two cases share a shape: the dtype match is not exercised"

# the crafted baseline: distinct medians, the last case left out, the first given null
crafted, want = [], {}
for i, (op, shape, dtype) in enumerate(labels[:-1]):
    med = None if i == 0 else 1e-6 * (i + 1) * 1.37
    want[(op, shape, dtype)] = med
    # keys in another order, unknown fields and nesting around them
    crafted.append({"extra": [{"name": "x\"y", "median_s": 9.0}], "median_s": med,
                    "dtype": dtype, "nested": {"a": [1, 2, {"b": None}], "c": True},
                    "shape": shape, "op": op, "min_s": 1e-9})
crafted.append({"op": "advance_step", "shape": "not a case \u00e9 \\ \"", "dtype": "i64",
                "median_s": 1.0})
base = os.path.join(work, "baseline_crafted.json")
with open(base, "w") as f:
    json.dump({"tool": "llmk bench", "version": "0.0.0", "machine": {"cpu": "x"},
               "cases": crafted, "failed": 0, "later": [[], {}]}, f, indent=1,
              ensure_ascii=True)

out = os.path.join(work, "baseline_run.json")
p = run(["--baseline", base, "--json", out])
with open(out) as f:
    d = json.load(f)
assert d["baseline"] == base, "the JSON does not name the baseline"
section = p.stdout.split("against the baseline")
assert len(section) == 2, "no baseline section in the table"
lines = section[1].splitlines()
printed = {}
for c in d["cases"]:  # the row of each case: its labels, then time, baseline, ratio
    key = (c["op"], c["shape"], c["dtype"])
    prefix = "  %-20s %-48s %-19s " % key
    rows = [l for l in lines if l.startswith(prefix)]
    assert len(rows) == 1, "%d rows for %s in the baseline section" % (len(rows), key)
    printed[key] = rows[0].split()[-1]
checked = 0
for c in d["cases"]:
    key = (c["op"], c["shape"], c["dtype"])
    old = want.get(key)
    if old is None:
        assert c["baseline_median_s"] is None and c["vs_baseline"] is None, \
            "a case without a baseline median got one: %s" % (key,)
        assert printed[key] == "-", "printed %s for a case without a baseline" % printed[key]
        continue
    ratio = c["median_s"] / old
    assert abs(c["baseline_median_s"] - old) <= 1e-9 * old, \
        "baseline_median_s %r, crafted %r: %s" % (c["baseline_median_s"], old, key)
    assert abs(c["vs_baseline"] - ratio) <= 1e-6 * ratio, \
        "vs_baseline %r, want %r: %s" % (c["vs_baseline"], ratio, key)
    assert abs(float(printed[key]) - ratio) <= 0.0005 + 1e-6 * ratio, \
        "printed ratio %s, want %.4f: %s" % (printed[key], ratio, key)
    checked += 1
assert checked == len(labels) - 2, "checked %d of %d ratios" % (checked, len(labels) - 2)

# malformed or foreign files: usage errors, nothing run
bad = os.path.join(work, "baseline_bad.json")
for text in ('{"cases": [{"op": "advance_step", "median_s": 1e-6,}]}', '{"tool": 1}',
             '[1, 2]', '{"cases": [{"op": "a", "shape": "unterminated'):
    with open(bad, "w") as f:
        f.write(text)
    p = run(["--baseline", bad], expect_rc=2)
    assert "--baseline" in p.stderr and "[1/" not in p.stderr, \
        "a bad baseline was not refused up front: " + p.stderr[-500:]
p = run(["--baseline", os.path.join(work, "no_such_file.json")], expect_rc=2)
print("ok: %d ratios checked, a missing and a null case, 4 bad files refused" % checked)
