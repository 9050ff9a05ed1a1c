"""Results: every run point in SQLite, baselines and regressions, CSV/XLSX exports."""

from iogate.results.compare import Baseline, choose_baseline, regression_verdict
from iogate.results.export import to_csv, to_xlsx
from iogate.results.store import DEFAULT_STORE_PATH, ResultsStore, RunPoint, metrics_from_run

__all__ = [
    "DEFAULT_STORE_PATH",
    "Baseline",
    "ResultsStore",
    "RunPoint",
    "choose_baseline",
    "metrics_from_run",
    "regression_verdict",
    "to_csv",
    "to_xlsx",
]
