"""Turn a test's verdicts into the one line a failing test reports."""

from __future__ import annotations

from collections.abc import Iterable

from iogate.verdict import Verdict


def failures(verdicts: Iterable[Verdict]) -> list[Verdict]:
    return [v for v in verdicts if not v.passed]


def failure_message(verdicts: Iterable[Verdict]) -> str:
    """"" when every verdict passed; else the failing verdicts' lines joined by " | ".

    >>> failure_message([Verdict("p99_latency_max", False, 61.2, 50, Unit.MS)])
    'p99_latency_max FAIL: measured 61.2 ms, bound 50 ms, window measure'
    """
    verdicts = list(verdicts)
    failed = failures(verdicts)
    if not failed:
        return ""
    head = f"{len(failed)} of {len(verdicts)} criteria failed: " if len(verdicts) > 1 else ""
    return head + " | ".join(v.line() for v in failed)


def summary(verdicts: Iterable[Verdict]) -> str:
    """Every verdict's line, one per line (console and report)."""
    return "\n".join(v.line() for v in verdicts)
