"""The Allure 3 HTML report: result-directory writers, the build and its CLI."""

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
