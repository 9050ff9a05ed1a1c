"""Results: every run point in SQLite, baselines and regressions, CSV/XLSX exports."""

from iogate.results.compare import (
    NO_BASELINE,
    Baseline,
    NoBaseline,
    check_baseline_option,
    choose_baseline,
    regression_verdict,
    regression_verdicts,
)
from iogate.results.export import to_csv, to_xlsx
from iogate.results.store import DEFAULT_STORE_PATH, ResultsStore, RunPoint, metrics_from_run

__all__ = [
    "DEFAULT_STORE_PATH",
    "NO_BASELINE",
    "Baseline",
    "NoBaseline",
    "ResultsStore",
    "RunPoint",
    "check_baseline_option",
    "choose_baseline",
    "metrics_from_run",
    "regression_verdict",
    "regression_verdicts",
    "to_csv",
    "to_xlsx",
]
