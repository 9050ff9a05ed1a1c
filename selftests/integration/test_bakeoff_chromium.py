"""The bake-off page read in headless Chromium: every matrix cell the browser shows is the CSV's, and a screenshot is taken.

The store is the unit tests' three-array store (selftests/unit/test_bakeoff.py); the page is opened from
disk (file://), nothing is served.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from iogate.results.bakeoff import build_bakeoff
from iogate.results.bakeoff_output import write_all
from iogate.results.store import ResultsStore
from selftests.integration.report_browser import headless_chromium, missing_browser_commands, wait_for
from selftests.unit.test_bakeoff import _fill

pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(90),
    pytest.mark.skipif(bool(missing_browser_commands()), reason="needs chromium and chromedriver (make setup)"),
]

_MATRIX_CELLS = """
const tables = document.querySelectorAll('table');
const matrix = tables[tables.length - 1];
return Array.from(matrix.rows).map(r => Array.from(r.cells).map(c => c.innerText.trim()));
"""


def test_chromium_shows_the_matrix_cell_for_cell(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "results.sqlite")
    _fill(store)
    write_all(build_bakeoff(store, ["r-a", "r-b", "r-c"]), tmp_path / "out")
    with (tmp_path / "out" / "bakeoff.csv").open(newline="") as handle:
        from_csv = list(csv.reader(handle))
    with headless_chromium() as driver:
        driver.get((tmp_path / "out" / "bakeoff.html").as_uri())
        wait_for(driver, "document.readyState === 'complete' && document.images.length === 1 && document.images[0].complete")
        shown = driver.execute_script(_MATRIX_CELLS)
        assert driver.execute_script("return document.images[0].naturalWidth") > 0  # the knee chart decoded
        driver.save_screenshot(str(tmp_path / "bakeoff.png"))
    assert shown == from_csv
    assert (tmp_path / "bakeoff.png").stat().st_size > 0
