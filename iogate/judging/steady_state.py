"""steady_state: SNIA PTS steady-state detection over measurement rounds.

SNIA Solid State Storage Performance Test Specification: a device is steady
when, in a measurement window of `window_rounds` (5) consecutive rounds of the
tracking variable (e.g. 4 KiB random write IOPS of each round):
  * range:  max - min of the window <= max_range_pct (20 %) of the window mean;
  * slope:  the least-squares line fitted across the window changes by at most
            max_slope_pct (10 %) of the window mean from its first to its last
            round (|slope| x (window_rounds - 1), the spec's "slope excursion").
The first window that meets both (ending at round r, counted from 1) is the
steady-state window; pass when r <= max_rounds (the spec's 25). Rounds after
max_rounds are ignored: steady state reached too late is a failure. A round
that is NaN (not measured) fails the check, naming the round: rounds come
from the expected interval grid, where a silent interval is 0, not absent.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated

from pydantic import AfterValidator, Field, ValidationInfo

from iogate.judging.common import no_data
from iogate.judging.params import FINITE_OR_NOT, Bound, CriterionParams, Evidence, in_range
from iogate.verdict import Unit, Verdict

NAME = "steady_state"
EVIDENCE: tuple[Evidence, ...] = ("rounds",)  # what a test hands evaluate()
BOUND = Bound("max_rounds", floor=False, unit="rounds", proposed=False)


_SHARE_OF_MEAN = in_range(0, low_open=True, unit="% of the window's mean", why="at 0 only a perfectly flat window passes")


def _window_fits(max_rounds: int, info: ValidationInfo) -> int:
    window_rounds = info.data.get("window_rounds", 5)
    if max_rounds < window_rounds:
        raise ValueError(f"max_rounds {max_rounds} is refused: allowed max_rounds >= window_rounds ({window_rounds}, rounds): "
                         "no window of that many rounds fits, so the check could never pass")
    return max_rounds


class Params(CriterionParams):
    window_rounds: int = Field(5, ge=2)
    max_range_pct: Annotated[float, FINITE_OR_NOT, AfterValidator(_SHARE_OF_MEAN)] = 20.0
    max_slope_pct: Annotated[float, FINITE_OR_NOT, AfterValidator(_SHARE_OF_MEAN)] = 10.0
    max_rounds: Annotated[int, Field(ge=2), AfterValidator(_window_fits)] = 25


def least_squares_slope(values: Sequence[float]) -> float:
    n = len(values)
    mean_x = (n - 1) / 2
    mean_y = sum(values) / n
    num = sum((i - mean_x) * (v - mean_y) for i, v in enumerate(values))
    den = sum((i - mean_x) ** 2 for i in range(n))
    return num / den


def check_window(values: Sequence[float], max_range_pct: float, max_slope_pct: float) -> dict[str, float | bool]:
    mean = sum(values) / len(values)
    range_pct = 100.0 * (max(values) - min(values)) / mean if mean else float("inf")
    excursion_pct = 100.0 * abs(least_squares_slope(values)) * (len(values) - 1) / mean if mean else float("inf")
    return {"mean": mean, "range_pct": range_pct, "slope_excursion_pct": excursion_pct,
            "steady": range_pct <= max_range_pct and excursion_pct <= max_slope_pct}


def _closest(rows: Sequence[dict[str, object]], rounds: Sequence[float], window_rounds: int, params: Params) -> str:
    """The window nearest to steady (by the larger of its two ratios to their bounds), with its rounds' values."""
    def distance(row: dict[str, object]) -> float:
        return max(float(row["range_pct"]) / params.max_range_pct, float(row["slope_excursion_pct"]) / params.max_slope_pct)  # type: ignore[arg-type]
    end, row = min(enumerate(rows, window_rounds), key=lambda item: distance(item[1]))
    values = ", ".join(f"{v:.6g}" for v in rounds[end - window_rounds:end])
    return (f"closest rounds {row['rounds']}: range {row['range_pct']:.1f} %, slope excursion "
            f"{row['slope_excursion_pct']:.1f} % of mean {row['mean']:.6g} ({values})")


def evaluate(rounds: Sequence[float], params: Params) -> Verdict:
    window_rounds, max_rounds = params.window_rounds, params.max_rounds
    max_range_pct, max_slope_pct = params.max_range_pct, params.max_slope_pct
    considered = list(rounds[:max_rounds])
    unmeasured = [str(n) for n, value in enumerate(considered, 1) if value is None or math.isnan(value)]
    if unmeasured:
        return no_data(NAME, max_rounds, Unit.ROUNDS, f"rounds 1-{len(considered)}", f"round(s) {', '.join(unmeasured)} not measured")
    rows = []
    for end in range(window_rounds, len(considered) + 1):
        window = considered[end - window_rounds:end]
        row = {"rounds": f"{end - window_rounds + 1}-{end}", **check_window(window, max_range_pct, max_slope_pct)}
        rows.append(row)
        if row["steady"]:
            return Verdict(NAME, True, end, max_rounds, Unit.ROUNDS, f"rounds {row['rounds']}", evidence=tuple(rows),
                           detail=f"steady at round {end}: range {row['range_pct']:.1f} % (<= {max_range_pct:g}), "
                                  f"slope excursion {row['slope_excursion_pct']:.1f} % (<= {max_slope_pct:g}) of mean {row['mean']:.6g}")
    reason = (f"only {len(considered)} rounds, a window needs {window_rounds}" if len(considered) < window_rounds
              else f"no window of {window_rounds} rounds within {len(considered)} rounds met range <= {max_range_pct:g} % "
                   f"and slope excursion <= {max_slope_pct:g} %; {_closest(rows, considered, window_rounds, params)}")
    return Verdict(NAME, False, len(considered), max_rounds, Unit.ROUNDS, f"rounds 1-{len(considered)}", evidence=tuple(rows),
                   detail=reason)
