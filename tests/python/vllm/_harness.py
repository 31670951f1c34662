# SPDX-License-Identifier: Apache-2.0
"""Shared bits of the llmk.vllm tests: imports, a tiny check harness, fp8 formats, memory
pools. Plain scripts (no pytest): exit 0 pass, 1 fail, 77 skip (torch missing)."""

import os
import sys
import time

try:
    import torch
except Exception as e:  # pragma: no cover
    print("SKIP: torch not importable (%s)" % e)
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "python"))
import llmk  # noqa: E402,F401
from llmk import vllm as ops  # noqa: E402,F401

# LLMK_VLLM_FULL_GRID=1 runs vLLM's grids unreduced (minutes to hours on 2 cores).
FULL = os.environ.get("LLMK_VLLM_FULL_GRID", "") not in ("", "0")


class Harness:
    """Counts cases and failed checks; a case fails if any of its checks fails."""

    def __init__(self, name):
        self.name = name
        self.cases = 0
        self.failed_cases = 0
        self.checks = 0
        self.fails = []
        self.t0 = time.time()
        self._case_failed = False
        self.groups = {}

    def case(self, group):
        self._end_case()
        self.cases += 1
        self.groups[group] = self.groups.get(group, 0) + 1
        self._case_failed = False

    def _end_case(self):
        if self._case_failed:
            self.failed_cases += 1
        self._case_failed = False

    def check(self, cond, what):
        self.checks += 1
        if not cond:
            self._case_failed = True
            self.fails.append(what)
            if len(self.fails) <= 40:
                print("FAIL:", what)
        return cond

    def close_fn(self, got, exp, what, atol=None, rtol=None):
        """torch.testing.assert_close as a check (defaults: torch's dtype tolerances)."""
        try:
            if atol is None:
                torch.testing.assert_close(got, exp)
            else:
                torch.testing.assert_close(got, exp, atol=atol, rtol=rtol)
            return self.check(True, what)
        except AssertionError as e:
            msg = str(e).strip().splitlines()
            return self.check(False, "%s: %s" % (what, " | ".join(msg[:4])))

    def run(self, fn):
        try:
            fn()
        except Exception as e:  # a crash is a failed case; the other groups still run
            import traceback
            traceback.print_exc()
            self._case_failed = True
            self.fails.append("%s raised %r" % (fn.__name__, e))

    def finish(self):
        self._end_case()
        dt = time.time() - self.t0
        per = ", ".join("%s %d" % kv for kv in self.groups.items())
        print("%s: %d cases (%s), %d checks, %d failed cases, %.1f s" % (
            self.name, self.cases, per, self.checks, self.failed_cases, dt))
        if self.fails:
            print("FAILED (%d):" % len(self.fails))
            for f in self.fails[:30]:
                print("  " + f)
            return 1
        print("PASS")
        return 0


# ----------------------------------------------------------------------------- fp8

_TABLES = {}


def fp8_values(fmt):
    """f64 value of each of the 256 codes of 'fp8_e4m3fn' / 'fp8_e5m2' (NaN codes NaN),
    decoded from the bit layout: sign, exponent (4 / 5 bits, bias 7 / 15), mantissa."""
    if fmt in _TABLES:
        return _TABLES[fmt]
    eb, mb, bias = (4, 3, 7) if fmt == "fp8_e4m3fn" else (5, 2, 15)
    out = []
    for code in range(256):
        sign = -1.0 if code >> 7 else 1.0
        e = (code >> mb) & ((1 << eb) - 1)
        m = code & ((1 << mb) - 1)
        if fmt == "fp8_e4m3fn" and e == 15 and m == 7:
            v = float("nan")                      # e4m3fn: only S.1111.111 is NaN, no inf
        elif fmt == "fp8_e5m2" and e == 31:
            v = float("inf") if m == 0 else float("nan")
        elif e == 0:
            v = m * 2.0 ** (1 - bias - mb)        # subnormal
        else:
            v = (1.0 + m / 2.0 ** mb) * 2.0 ** (e - bias)
        out.append(sign * v)
    _TABLES[fmt] = torch.tensor(out, dtype=torch.float64)
    return _TABLES[fmt]


def fp8_encode(x, fmt):
    """Any float tensor -> uint8 codes: round to nearest, ties to the even code,
    saturating to the largest finite value (vLLM's conversions saturate), NaN -> NaN."""
    tab = fp8_values(fmt)
    top = 126 if fmt == "fp8_e4m3fn" else 123          # largest finite positive code
    mags = tab[:top + 1]                                 # increasing, codes 0..top
    a = x.double().reshape(-1)
    mag = a.abs()
    hi = torch.searchsorted(mags, mag).clamp(max=top)    # first code >= |x|
    lo = (hi - 1).clamp(min=0)
    d_hi = mags[hi] - mag
    d_lo = mag - mags[lo]
    take_hi = (d_hi < d_lo) | ((d_hi == d_lo) & (hi % 2 == 0))
    code = torch.where(take_hi, hi, lo)
    code = torch.where(mag >= mags[top], torch.full_like(code, top), code)
    code = code + torch.signbit(a).long() * 128
    nan = 0x7F if fmt == "fp8_e4m3fn" else 0x7F
    code = torch.where(torch.isnan(a), torch.full_like(code, nan), code)
    return code.to(torch.uint8).reshape(x.shape)


def fp8_decode(codes, fmt):
    return fp8_values(fmt)[codes.long()]


# ----------------------------------------------------------------------------- memory pools

class Pool:
    """Re-used, pre-faulted byte buffers. First-touch page faults cost ~25 ns per 4-byte
    element on the test machine (ten times a random fill), so every cache is a view of a
    buffer that only grows. A new buffer is filled with random bytes 0..63: read as f32,
    bf16, f16 or fp8 every element is then finite, so the caches can be compared with
    torch.equal whatever dtype a case views them as (their content is noise that a correct
    op must leave alone outside the written slots)."""

    def __init__(self):
        self.bufs = {}

    def get(self, role, shape, dtype):
        n = 1
        for s in shape:
            n *= s
        nbytes = n * torch.tensor([], dtype=dtype).element_size()
        buf = self.bufs.get(role)
        if buf is None or buf.numel() < nbytes:
            self.bufs.pop(role, None)
            buf = torch.randint(0, 64, (max(nbytes, 16),), dtype=torch.uint8)
            self.bufs[role] = buf
        return buf[:nbytes].view(dtype).view(shape)


POOL = Pool()
