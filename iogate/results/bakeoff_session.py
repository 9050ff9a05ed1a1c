"""The bake-off of one session's labs: built at the session's end (plugins/report.py) or later from its Allure
results (`iogate bakeoff --session allure-results`), from the results store, never from memory.

Writes the matrix to OUT/bakeoff.{csv,xlsx,html} (OUT: exports/<run>) and adds to the Allure results one test
result "Bake-off" (suite "Bake-off") whose attachment is the same HTML page: the report shows it on a page of
its own. A refused comparison (iogate/results/bakeoff_guard.py) writes no matrix; the "Bake-off" result is then
broken, its message the refusal's one line.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from pathlib import Path

from iogate.errors import IOGateError
from iogate.results.bakeoff import Bakeoff, build_bakeoff
from iogate.results.store import ResultsStore, StoreError

RUN_KEY = "iogate.run"  # environment.properties: the session's run id (plugins/report.py writes it)
BAKEOFF_NAME = "Bake-off"


def run_of_results(results_dir: Path) -> str:
    """The run id an Allure results directory was written by (its environment.properties `iogate.run`)."""
    path = results_dir / "environment.properties"
    try:
        lines = path.read_text(encoding="ascii").splitlines()
    except OSError as exc:
        raise StoreError(f"{path}: cannot read the session's environment ({exc}): run the suite with --alluredir") from None
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == RUN_KEY and value.strip():
            return value.strip()
    raise StoreError(f"{path}: no {RUN_KEY} entry (written by a session before bake-offs; rebuild with --runs RUN ...)")


def allure_result(results_dir: Path, run_id: str, *, status: str, message: str, page: str | None) -> Path:
    """A test result "Bake-off" in the Allure results, its attachment the page (when there is one)."""
    results_dir.mkdir(parents=True, exist_ok=True)
    now = int(time.time() * 1000)
    attachments = []
    if page is not None:
        source = f"{uuid.uuid4()}-attachment.html"
        (results_dir / source).write_text(page, encoding="utf-8")
        attachments.append({"name": "bake-off matrix", "source": source, "type": "text/html"})
    result = {
        "uuid": str(uuid.uuid4()),
        "historyId": hashlib.md5(b"iogate-bakeoff").hexdigest(),  # one history across sessions
        "testCaseId": hashlib.md5(b"iogate-bakeoff").hexdigest(),
        "name": BAKEOFF_NAME, "fullName": "iogate.bakeoff", "status": status, "stage": "finished",
        "statusDetails": {"message": message},
        "description": f"Run {run_id}: every lab of the session side by side (a summary of the tests' verdicts, "
                       "not a verdict of its own). The same page: exports/<run>/bakeoff.html.",
        "start": now, "stop": now,
        "labels": [{"name": "suite", "value": BAKEOFF_NAME}, {"name": "parentSuite", "value": "IOGate"},
                   {"name": "feature", "value": "bake-off"}, {"name": "tag", "value": "bakeoff"}],
        "attachments": attachments, "parameters": [], "steps": [],
    }
    target = results_dir / f"{result['uuid']}-result.json"
    target.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return target


def session_bakeoff(store_path: Path, run_id: str, results_dir: Path | None, out_dir: Path,
                    reference: str | None = None) -> tuple[bool, list[str]]:
    """Build, write and attach the bake-off of `run_id`'s labs: (written, the lines to print). Refused or
    impossible (a run the store lacks): nothing written, the one line why."""
    from iogate.results.bakeoff_output import html_page, write_all  # matplotlib: only when written

    try:
        bakeoff = build_bakeoff(ResultsStore(store_path), [run_id], reference)
    except IOGateError as exc:
        line = str(exc)
        if results_dir is not None:
            allure_result(results_dir, run_id, status="broken", message=f"bake-off refused: {line}", page=None)
        return False, [line]
    written = write_all(bakeoff, out_dir)
    lines = [*(f"differs (workload unchanged): {d}" for d in bakeoff.differences),
             *(f"{path}: {len(bakeoff.rows)} row(s), {len(bakeoff.labels)} arrays, reference {bakeoff.reference}"
               for path in written)]
    if results_dir is not None:
        page = html_page(bakeoff, _charts(bakeoff, out_dir))
        allure_result(results_dir, run_id, status="passed", message=summary(bakeoff), page=page)
        lines.append(f"{results_dir}: Allure result {BAKEOFF_NAME!r} with the matrix")
    return True, lines


def _charts(bakeoff: Bakeoff, out_dir: Path) -> dict[str, bytes]:
    from iogate.results.bakeoff_output import page_charts

    return page_charts(bakeoff, out_dir)


def summary(bakeoff: Bakeoff) -> str:
    """One line: the arrays, the reference, rows, and per array its FAIL / INVALID counts."""
    parts = []
    for label in bakeoff.labels:
        statuses = [row.cells.get(label) for row in bakeoff.rows]
        fails = sum(1 for c in statuses if c is not None and c.status == "FAIL")
        invalid = sum(1 for c in statuses if c is not None and c.status == "INVALID")
        parts.append(f"{label}: {fails} FAIL, {invalid} INVALID")
    return (f"{len(bakeoff.rows)} rows, reference {bakeoff.reference} = 100; " + "; ".join(parts))
