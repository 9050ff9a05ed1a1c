"""`python -m iogate report --results DIR --report DIR [--history FILE]`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from iogate.errors import IOGateError
from iogate.report.build import DEFAULT_HISTORY_PATH, DEFAULT_REPORT_NAME, build_report


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="iogate report", description="Build the Allure 3 HTML report of a run.")
    parser.add_argument("--results", type=Path, default=Path("allure-results"), help="allure-results directory (default: %(default)s)")
    parser.add_argument("--report", type=Path, default=Path("allure-report"), help="output directory (default: %(default)s)")
    parser.add_argument("--history", type=Path, default=DEFAULT_HISTORY_PATH,
                        help="history JSONL kept between runs for trends (default: %(default)s)")
    parser.add_argument("--history-limit", type=int, default=None, help="keep at most this many builds in the history")
    parser.add_argument("--name", default=DEFAULT_REPORT_NAME, help="report title (default: %(default)s)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        index = build_report(args.results, args.report, args.history, name=args.name, history_limit=args.history_limit)
    except IOGateError as exc:
        print(f"iogate report: {exc}", file=sys.stderr)
        return 2
    print(f"report: {index}")
    return 0
