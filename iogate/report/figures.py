"""Figures as a reviewer reads them: three significant digits, no exponent.

A verdict table shows 1430 IOPS, 61.2 ms, 0.0123 ms, 125000 IOPS: enough to
compare a figure with its bound at a glance; the exact values stay in the
verdict rows (JSONL, results store) and in the cell's tooltip.
"""

from __future__ import annotations

import math

SIGNIFICANT_DIGITS = 3


def significant(value: float | None, digits: int = SIGNIFICANT_DIGITS) -> str:
    """`value` rounded to `digits` significant digits, in positional notation.

    >>> [significant(v) for v in (1434.6, 61.24, 50, 0.012345, 125432, 99.96, float("nan"))]
    ['1430', '61.2', '50.0', '0.0123', '125000', '100', 'nan']
    """
    if value is None:
        return "-"
    if math.isnan(value) or math.isinf(value):
        return str(value)
    if value == 0:
        return "0"
    rounded = round(value, digits - 1 - math.floor(math.log10(abs(value))))
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(rounded))))
    return f"{rounded:.{decimals}f}"
