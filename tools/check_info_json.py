#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`llmk info --json` is one JSON object that agrees with the text form of `llmk info`.
Arguments: the tool, after the emulator that runs it in a cross build (if any)."""
import json
import re
import subprocess
import sys

exe = sys.argv[1:]
d = json.loads(subprocess.run(exe + ["info", "--json"], check=True, capture_output=True,
                              text=True).stdout)
text = subprocess.run(exe + ["info"], check=True, capture_output=True, text=True).stdout
for key in ("version", "isa", "native_isa", "threading", "thread_rule", "cpu_features"):
    assert isinstance(d[key], str) and d[key], key
m = re.search(r"default (\d+) threads? \(([^;]+);", text)
assert m and int(m.group(1)) == d["default_threads"] and m.group(2) == d["thread_rule"], m
assert 1 <= d["default_threads"] <= 256 and d["allowed_cpus"] <= d["online_cpus"]
assert d["kernels"], "no kernels"
for k in d["kernels"]:
    assert re.search(r"^\s+%s\s+%s\s" % (re.escape(k["name"]), k["chosen"]), text, re.M), k
    assert k["chosen"] in [v["isa"] for v in k["variants"]], k
print("info --json: %d kernels, %d default threads (%s)" %
      (len(d["kernels"]), d["default_threads"], d["thread_rule"]))
