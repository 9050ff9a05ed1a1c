"""Live progress for long runs: test k of N, ETA, live IOPS and latency from fio.

Quiet under CI, when stdout is not a terminal, or on pytest-xdist workers.
"""

from __future__ import annotations

import pytest

from fixtures.stash import PROGRESS, live_progress
from iogate.report.progress import Progress, progress_wanted


def pytest_collection_finish(session: pytest.Session) -> None:
    config = session.config
    if session.items and progress_wanted() and not hasattr(config, "workerinput") and config.option.capture != "no":
        config.stash[PROGRESS] = Progress(total_points=len(session.items))


def pytest_runtest_setup(item: pytest.Item) -> None:
    progress = live_progress(item.config)
    if progress is not None:
        progress.start_point(item.nodeid, item.session.items.index(item) + 1)


def pytest_sessionfinish(session: pytest.Session) -> None:
    progress = session.config.stash.get(PROGRESS, None)
    if progress is not None:
        progress.close()
