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
    for k in ("op", "shape", "dtype", "median_s", "gbps", "pct_bandwidth", "ref_s",
              "speedup_vs_ref", "check"):
        assert k in c, "case without " + k
assert d["bandwidth"]["gbps"] > 0, "no bandwidth"
assert d["machine"]["isa"], "no isa"
svg = xml.dom.minidom.parse(sys.argv[2])
assert svg.documentElement.tagName == "svg", "not an svg"
assert len(svg.getElementsByTagName("rect")) >= len(cases), "bars missing"
print("ok: %d cases, %.2f GB/s" % (len(cases), d["bandwidth"]["gbps"]))
