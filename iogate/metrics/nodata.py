"""NoData: a statistic was asked of zero samples.

No data is never a pass. Every statistic over an empty input (a histogram with
no bins, a window with no expected intervals, a second whose latency could not
be paired) raises NoData with a message naming what was missing; criteria turn
it into a FAIL verdict that quotes that message. It is a *product* outcome
(the array delivered nothing to measure), not an infrastructure error: it
does not derive from IOGateError.

>>> raise NoData("no latency samples in window event (write)")
"""

from __future__ import annotations


class NoData(ValueError):
    """A statistic over zero samples; the message says which input was missing."""
