"""Build the Allure 3 HTML report with the npm `allure` CLI.

Allure 3 takes its settings from a config file, not flags: the build writes a
throw-away allurerc.json (report name, output, categories, history file) and runs
`allure generate <results> --config <it>`. History lives in one JSONL file outside
allure-results (default .iogate/history.jsonl) and Allure appends one line per
build, so trend widgets work across runs as long as the file is kept.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from iogate.errors import IOGateError
from iogate.report.categories import allure3_categories, write_categories

DEFAULT_HISTORY_PATH = Path(".iogate/history.jsonl")
DEFAULT_REPORT_NAME = "IOGate storage acceptance"

# The awesome plugin's index.html loads Google Tag Manager; a lab report must not
# call out of the lab network (and a reviewer's browser need not either).
_ANALYTICS = re.compile(
    r"<script async src=\"https://www\.googletagmanager\.com/[^\"]*\"></script>\s*<script>\s*window\.dataLayer.*?</script>",
    re.DOTALL,
)


class ReportError(IOGateError):
    """The Allure CLI failed to build the report."""


class AllureCliMissing(ReportError):
    """The `allure` (Allure 3, npm) command is not installed."""


def allure_config(report_dir: Path, history_path: Path, name: str, history_limit: int | None) -> dict[str, Any]:
    config: dict[str, Any] = {
        "name": name,
        "output": str(report_dir),
        "historyPath": str(history_path),
        "categories": allure3_categories(),
        # The tree reads like the methodology: procedure (epic) > family (feature) > story.
        "plugins": {"awesome": {"options": {"reportName": name, "singleFile": False, "groupBy": ["epic", "feature", "story"]}}},
    }
    if history_limit is not None:
        config["historyLimit"] = history_limit
    return config


def _prepare_output(report_dir: Path) -> None:
    """Start from an empty report directory, but only ever delete an old report."""
    if not report_dir.exists():
        return
    entries = list(report_dir.iterdir())
    if entries and not (report_dir / "index.html").exists():
        raise ReportError(f"report directory {report_dir} is not empty and holds no report (index.html); refusing to overwrite it")
    shutil.rmtree(report_dir)


def strip_analytics(index_html: Path) -> bool:
    """Remove the analytics tag from a built report; True if one was removed."""
    text = index_html.read_text(encoding="utf-8")
    stripped, count = _ANALYTICS.subn("", text)
    if count:
        index_html.write_text(stripped, encoding="utf-8")
    return bool(count)


def build_report(results_dir: Path | str, report_dir: Path | str, history_path: Path | str | None = DEFAULT_HISTORY_PATH, *,
                 name: str = DEFAULT_REPORT_NAME, history_limit: int | None = None, allure: str = "allure",
                 timeout_s: float = 600.0) -> Path:
    """Build the HTML report of `results_dir` into `report_dir`; returns the report's index.html.

    Writes categories.json into `results_dir` (product defect vs infrastructure)
    and appends this build to the history file (parent directories created).
    """
    results = Path(results_dir).resolve()
    report = Path(report_dir).resolve()
    history = Path(history_path if history_path is not None else DEFAULT_HISTORY_PATH).resolve()
    if not results.is_dir():
        raise ReportError(f"allure results directory {results} does not exist (did the run pass --alluredir?)")
    executable = shutil.which(allure)
    if executable is None:
        raise AllureCliMissing(f"'{allure}' not found on PATH: install Allure 3 with `npm install -g allure@3` (make setup does)")

    write_categories(results)
    history.parent.mkdir(parents=True, exist_ok=True)
    _prepare_output(report)
    report.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="iogate-allurerc-") as config_dir:
        config_path = Path(config_dir) / "allurerc.json"
        config_path.write_text(json.dumps(allure_config(report, history, name, history_limit), indent=2), encoding="utf-8")
        # NO_COLOR: the CLI's output ends up in logs and exception messages.
        env = {**os.environ, "NO_COLOR": "1", "FORCE_COLOR": "0"}
        try:
            completed = subprocess.run(
                [executable, "generate", str(results), "--config", str(config_path), "--output", str(report)],
                cwd=config_dir, env=env, capture_output=True, text=True, timeout=timeout_s, check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise ReportError(f"allure generate {results} did not finish within {timeout_s:.0f} s") from exc
    index = report / "index.html"
    if completed.returncode != 0 or not index.exists():
        output = (completed.stderr or completed.stdout).strip()[-2000:]
        raise ReportError(f"allure generate {results} -> {report} failed (exit {completed.returncode}): {output}")
    strip_analytics(index)
    return index
