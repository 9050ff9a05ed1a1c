"""What a reader sees: the Allure 3 HTML report (result-directory writers, the build and its CLI),
the charts and tables attached to it (charts.py, table.py) and the live progress line (progress.py).

Only the report build and its writers are imported here; charts (matplotlib) and progress (rich)
are imported from their modules by whoever draws them.
"""

from iogate.report.build import DEFAULT_HISTORY_PATH, AllureCliMissing, ReportError, build_report
from iogate.report.categories import category_rules, write_categories
from iogate.report.cli import main
from iogate.report.environment import write_environment

__all__ = [
    "DEFAULT_HISTORY_PATH",
    "AllureCliMissing",
    "ReportError",
    "build_report",
    "category_rules",
    "main",
    "write_categories",
    "write_environment",
]
