"""Live progress for long runs: test k of N, ETA, live IOPS and latency from fio.

Quiet under CI, when stdout is not a terminal, or on pytest-xdist workers.
"""

from __future__ import annotations

import pytest

from fixtures.session import live_progress, suite_of
from iogate.report.progress import Progress, progress_wanted


def pytest_collection_finish(session: pytest.Session) -> None:
    config = session.config
    suite = suite_of(config)
    if suite is not None and session.items and progress_wanted() and not hasattr(config, "workerinput") \
            and config.option.capture != "no":
        suite.progress = Progress(total_points=len(session.items))


def pytest_runtest_setup(item: pytest.Item) -> None:
    progress = live_progress(item.config)
    if progress is not None:
        progress.start_point(item.nodeid, item.session.items.index(item) + 1)


def pytest_sessionfinish(session: pytest.Session) -> None:
    progress = live_progress(session.config)
    if progress is not None:
        progress.close()
