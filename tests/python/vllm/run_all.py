# SPDX-License-Identifier: Apache-2.0
"""Runs every llmk.vllm test file (each in its own interpreter, with this interpreter) and
prints one line per file: PASS / FAIL / SKIP, its case counts and time.

Exit: 0 when no file failed (skipped files do not fail, nor do they count as passing),
1 when one did, 77 when torch is missing (every file skipped).

Run: LLMK_LIBRARY=build/libllmk.so python3 tests/python/vllm/run_all.py [file ...]
"""

import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = ["test_cache.py", "test_topk_topp.py", "test_advance_step.py", "test_causal_conv1d.py"]


def main():
    files = [a for a in sys.argv[1:] if a.endswith(".py")] or FILES
    env = dict(os.environ)
    py = os.path.join(HERE, "..", "..", "..", "python")
    env["PYTHONPATH"] = py + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    t0 = time.time()
    results = []
    for f in files:
        t = time.time()
        p = subprocess.run([sys.executable, os.path.join(HERE, f)], cwd=HERE, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        dt = time.time() - t
        out = p.stdout
        summary = [ln for ln in out.splitlines() if re.match(r"^test_\w+: \d+ cases", ln)]
        skips = [ln for ln in out.splitlines() if ln.startswith("SKIP")]
        if p.returncode == 0:
            status = "PASS"
        elif p.returncode == 77:
            status = "SKIP"
        else:
            status = "FAIL"
            sys.stdout.write(out[-6000:])
        detail = summary[-1] if summary else (skips[0] if skips else "(no summary)")
        for ln in skips:
            if ln != detail:
                detail += " | " + ln
        results.append((f, status, dt, detail))
        print("%-22s %s  %6.1f s  %s" % (f, status, dt, detail), flush=True)
    n = {s: sum(1 for r in results if r[1] == s) for s in ("PASS", "FAIL", "SKIP")}
    print("run_all: %d passed, %d failed, %d skipped, %.1f s" % (n["PASS"], n["FAIL"],
                                                                 n["SKIP"], time.time() - t0))
    if n["FAIL"]:
        return 1
    if n["SKIP"] == len(results) and results:
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
