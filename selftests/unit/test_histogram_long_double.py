"""fio's rank threshold `(long double) p / 100.0 * nr`, computed by this machine's C compiler, equals
iogate's rational emulation of it, bit for bit (x86-64 long double: 64-bit mantissa).

The expected values come from compiled C, not from the code under test; skipped where no C
compiler is installed or long double is not the x87 format.
"""

from __future__ import annotations

import platform
import random
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest

from iogate.metrics.histogram import fio_percentile_value, fio_rank_threshold

CC = shutil.which("cc") or shutil.which("gcc")
PROGRAM = r"""
#include <stdio.h>
#include <math.h>
int main(void) {
    double p; unsigned long long nr;
    while (scanf("%lf %llu", &p, &nr) == 2) {
        long double t = (long double) p / 100.0 * nr;   /* fio stat.c calc_clat_percentiles */
        int e; long double m = frexpl(t, &e);
        printf("%llu %d\n", (unsigned long long) ldexpl(m, 64), e);
    }
    return 0;
}
"""
DEFAULT_PCTS = (1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99)


@pytest.mark.skipif(CC is None or platform.machine() != "x86_64", reason="needs a C compiler with x87 long double")
def test_rank_threshold_equals_compiled_long_double_arithmetic(tmp_path: Path) -> None:
    source, binary = tmp_path / "ld.c", tmp_path / "ld"
    source.write_text(PROGRAM)
    subprocess.run([CC or "cc", "-O2", "-o", str(binary), str(source), "-lm"], check=True, capture_output=True)
    rng = random.Random(11)
    cases = [(p, n) for p in DEFAULT_PCTS for n in (1, 2, 3, 7, 100, 2000, 9999, 10**6 + 7, 123456789, 2**40 + 3)]
    cases += [(rng.uniform(0.001, 100), rng.randint(1, 2**50)) for _ in range(2000)]
    cases += [(round(rng.uniform(0.01, 100), rng.randint(1, 4)), rng.randint(1, 10**7)) for _ in range(2000)]
    text = "".join(f"{p!r} {n}\n" for p, n in cases)
    out = subprocess.run([str(binary)], input=text, capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == len(cases)
    for (pct, nr), line in zip(cases, out, strict=True):
        mantissa, exponent = map(int, line.split())
        compiled = Fraction(mantissa) * Fraction(2) ** (exponent - 64)
        assert fio_rank_threshold(fio_percentile_value(pct), nr) == compiled, (pct, nr)
    # The case: 99.95 % of 2000 lies just above 1999 in fio's arithmetic.
    assert fio_rank_threshold(fio_percentile_value(99.95), 2000) > 1999
