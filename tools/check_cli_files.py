# SPDX-License-Identifier: Apache-2.0
"""Checks the files of `llmk bench --json FILE --plot FILE.svg`: valid JSON with the fields
the tool promises, and a well-formed standalone SVG. Usage: check_cli_files.py JSON SVG"""
import json
import sys
import xml.dom.minidom

with open(sys.argv[1]) as f:
    d = json.load(f)
cases = d["cases"]
assert cases, "no cases"
for c in cases:
    for k in ("op", "shape", "dtype", "kernel", "median_s", "min_s", "gbps", "copy_median_s",
              "copy_min_s", "copy_gbps", "pct_bandwidth", "pct_bandwidth_min", "spread",
              "copy_spread", "busy", "ref_s", "speedup_vs_ref", "check", "extra"):
        assert k in c, "case without " + k
    assert isinstance(c["busy"], bool), "busy is not a boolean"
    if c["check"] == "ok":
        assert c["min_s"] <= c["median_s"], "min above the median"
        assert c["copy_gbps"] > 0, "no copy beside " + c["shape"]
        assert abs(c["pct_bandwidth"] - 100 * c["copy_median_s"] / c["median_s"]) < 1e-3 * \
            c["pct_bandwidth"], "pct_bandwidth is not copy / op"
    # the 1-thread column, the small calls and the targets (issue 23)
    for k in ("one_thread_median_s", "vs_one_thread", "small_call", "targets"):
        assert k in c, "case without " + k
    if c["check"] == "ok" and c["one_thread_median_s"] is not None:
        assert abs(c["vs_one_thread"] - c["median_s"] / c["one_thread_median_s"]) < \
            1e-6 * c["vs_one_thread"], "vs_one_thread is not median / 1-thread median"
    if c["small_call"] is not None and c["check"] == "ok":
        assert c["small_call"]["whole_call_s"] > 0 and c["small_call"]["empty_call_s"] > 0, \
            "small call without its timings"
    for t in c["targets"]:
        for k in ("issue", "target", "value", "limit", "at_least", "holds"):
            assert k in t, "target without " + k
        if t["holds"] is not None:
            want = t["value"] >= t["limit"] if t["at_least"] else t["value"] <= t["limit"]
            assert t["holds"] == want, "verdict of %s on %s" % (t["target"], c["shape"])
assert d["targets_held"] + d["targets_missed"] == sum(
    t["holds"] is not None for c in cases for t in c["targets"]), "target counts"
assert d["copy"]["busy_spread"] > 1, "no busy threshold"
assert d["busy"] == sum(c["busy"] for c in cases), "busy count"
assert d["machine"]["isa"], "no isa"
svg = xml.dom.minidom.parse(sys.argv[2])
assert svg.documentElement.tagName == "svg", "not an svg"
assert len(svg.getElementsByTagName("rect")) >= len(cases), "bars missing"
print("ok: %d cases, %d busy, %% copy %s" % (len(cases), d["busy"], ", ".join(
    "%.1f" % c["pct_bandwidth"] for c in cases if c["pct_bandwidth"] is not None)))
