"""Which vdbench wrote an output directory, and what that version changes in reading it.

logfile.html names the distribution on its first lines ("Vdbench distribution:
vdbench50407"). IOGate reads 5.04.01 to 5.04.07; another version is refused by
name, since its layouts are unknown (fail closed).

What differs between versions, as observed in real outputs (selftests/unit/
test_vdbench_real_outputs.py runs over every directory; ../shared/data/
real-outputs/SOURCES.md names where each comes from):

- Which intervals the `avg_X-Y` row averages. 5.04.01 and 5.04.07: X..Y, as
  labelled (e.g. 5.04.07 oceanstor avg_2-10 = 268932/9 = 29881.3333, interval 1
  left out). 5.04.06 (this machine's build, its source read in window.py): X-1..Y
  through a race in its Reporter. window.py tries the version's window first and
  the others after it, keeping whichever reproduces the printed average.
- What histogram.html counts. 5.04.06: every interval, the warmup included
  (run1: avg_3-12, histogram = sum of intervals 1-12). 5.04.01 and 5.04.07 (block
  and file system; 5.04.07 file-system sections say "since warmup"): the avg row's
  window X..Y (5.04.07 rd1 on macOS: histogram 421 = intervals 2-5, 102+115+107+97;
  5.04.01 rd1: 2951 = intervals 2-60).
- 5.04.02-5.04.05: no real output of them was found; they are read as 5.04.01 and
  5.04.07 are (the releases on either side that agree), which is an inference.

Layout differences that need no version (each file says which it is): 5.04.07's
separate read/write max columns in the SD/WD/host reports (reports.py), the
file-system flatfile's `Rate`/`Resp` (5.04.07) or `rate`/`resp` (5.04.06) columns
and 5.04.01's flatfile without `timestamp` (flatfile.py), the error log's preamble
wording (errorlog.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from iogate.engines.vdbench.source import read_lines
from iogate.errors import EngineError

SUPPORTED = ("50401", "50402", "50403", "50404", "50405", "50406", "50407")
_DISTRIBUTION = re.compile(r"Vdbench distribution: vdbench(\d{5})")


@dataclass(frozen=True)
class Version:
    number: str  # "50407", as vdbench names its distribution

    @property
    def name(self) -> str:
        """"5.04.07"."""
        return f"{self.number[0]}.{self.number[1:3]}.{self.number[3:]}"

    @property
    def avg_covers_interval_before_label(self) -> bool:
        """5.04.06's avg_X-Y averages X-1..Y (window.py); the others average X..Y."""
        return self.number == "50406"

    @property
    def histogram_counts_warmup(self) -> bool:
        """5.04.06's histograms count intervals 1..N; the others the avg row's window X..Y."""
        return self.number == "50406"


def read_version(outdir: Path) -> Version:
    """The version logfile.html names; an unnamed or unsupported one is an EngineError naming it."""
    logfile = outdir / "logfile.html"
    for line in read_lines(logfile)[:50]:
        match = _DISTRIBUTION.search(line.text)
        if match is None:
            continue
        version = Version(match.group(1))
        if version.number not in SUPPORTED:
            raise line.fail(f"vdbench {version.name} is not a version IOGate reads "
                            f"(supported: {Version(SUPPORTED[0]).name} to {Version(SUPPORTED[-1]).name})")
        return version
    raise EngineError(f"{logfile}: no 'Vdbench distribution: vdbenchNNNNN' line, so the vdbench version "
                      "(and with it what the averages and histograms cover) is unknown")
