"""A bake-off of three emulated vendor arrays in one pytest session, on one lab VM (the slow vendor tier).

`emulated_run pure,ontap,huawei --together` boots a lab VM of its own, serves the three backed, spec-checked
fakes at once over one pool in the guest (each its own iSCSI target and LV names: emulate.py), and runs
`pytest tests -m baseline --profile smoke --lab pure --lab ontap --lab huawei` once. The three are the cheapest
to emulate together: all three reach their volumes over iSCSI (the same protocol set, so every row lines up
across the columns; PowerStore and VAST are NVMe/TCP), and their drivers wait on no polled array jobs
(Hitachi does). Pure and ONTAP have counters (METRICS); the emulated Huawei has its statistics switch off:
the array-side latency rows show both a figure (or why none) and "n/a: huawei has no latency counters".
Then:
- every test ran on the three labs;
- the session wrote exports/<run>/bakeoff.csv with one column per array;
- every check cell is the stored verdict row of the same run and array (plain SQL, not the bake-off code):
  its figure, PASS/FAIL, INVALID where the point is stored invalid;
- the array-side latency rows hold a figure or say why not for every array (never a blank);
- `iogate bakeoff --runs <run>` rebuilt from the store writes the same matrix, cell for cell.
The emulators end clean (no spec violation, nothing left in the guest): emulated_run exits 1 otherwise.
Under TCG: one VM boot, three labs' baselines one after another (they share the guest): about 15 min.
"""

from __future__ import annotations

import csv
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from iogate.results.bakeoff_session import run_of_results

pytestmark = [pytest.mark.labvm, pytest.mark.vendors, pytest.mark.timeout(3600)]
REPO = Path(__file__).resolve().parents[3]
VENDORS = ("pure", "ontap", "huawei")
ARRAYS = [f"{v}-emulated" for v in VENDORS]


@pytest.fixture(scope="module")
def bakeoff(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    for sdk in ("pypureclient", "netapp_ontap"):
        pytest.importorskip(sdk, reason="vendor SDK not installed: make vendors")
    work = tmp_path_factory.mktemp("emulated-bakeoff")
    store, allure = work / "results.sqlite", work / "allure-results"
    # env -C: the session's exports/ go under the work directory, not the repository.
    argv = [sys.executable, "-m", "selftests.vendors.emulated_run", ",".join(VENDORS), "--together",
            "--workdir", str(work / "emulated"), "--",
            "env", "-C", str(work), f"PYTHONPATH={REPO}", "CI=1",
            sys.executable, "-m", "pytest", str(REPO / "tests"), "-m", "baseline", "--profile", "smoke",
            # each lab file names criteria/emulated.yaml (resolved from the repository root)
            "{labs}", "--rootdir", str(REPO), "-c", str(REPO / "pytest.ini"),
            "-p", "no:cacheprovider", "--results-db", str(store), "--alluredir", str(allure), "-rA"]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=3300, check=False)
    (work / "session.log").write_text(done.stdout + done.stderr)
    # 0, or 1 for a failed verdict or a failing emulator: the emulator's own end is asserted below.
    assert allure.exists() and store.exists(), done.stdout[-4000:] + done.stderr[-4000:]
    run = run_of_results(allure)
    return {"work": work, "store": store, "run": run, "out": work / "exports" / run, "done": done}


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_emulators_ended_clean(bakeoff: dict[str, Any]) -> None:
    done = bakeoff["done"]
    assert "emulator (spec violations or a backing left behind)" not in done.stderr, done.stderr[-4000:]
    assert "spec violation:" not in done.stderr and "left behind:" not in done.stderr, done.stderr[-4000:]


def test_every_test_ran_on_the_three_labs(bakeoff: dict[str, Any]) -> None:
    with sqlite3.connect(bakeoff["store"]) as db:
        per_lab = dict(db.execute("SELECT lab, COUNT(*) FROM run_points WHERE run_id = ? GROUP BY lab", [bakeoff["run"]]))
    assert sorted(per_lab) == sorted(ARRAYS) and len(set(per_lab.values())) == 1, per_lab  # lab names = array names


def _stored(bakeoff: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(array, test without lab, criterion) -> the stored verdict row, read with plain SQL."""
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    with sqlite3.connect(bakeoff["store"]) as db:
        for lab, array, test_id, verdicts, invalid in db.execute(
                "SELECT lab, array_name, test_id, verdicts_json, measurement_invalid FROM run_points WHERE run_id = ?",
                [bakeoff["run"]]):
            node = test_id.rsplit("::", 1)[0].replace(f"[{lab}-", "[").replace(f"[{lab}]", "")
            for verdict in json.loads(verdicts):
                rows.setdefault((array, node.split("::", 1)[-1], str(verdict["criterion"])), {**verdict, "invalid": invalid})
    return rows


def test_one_column_per_array_and_every_cell_is_the_stored_verdict_row(bakeoff: dict[str, Any]) -> None:
    matrix = _csv(bakeoff["out"] / "bakeoff.csv")
    assert matrix and all(array in matrix[0] and f"{array} verdict" in matrix[0] for array in ARRAYS), list(matrix[0])
    stored = _stored(bakeoff)
    checked = 0
    for row in (r for r in matrix if r["kind"] == "check"):
        for array in ARRAYS:
            truth = stored.get((array, row["test"], row["check"]))
            assert truth is not None, (array, row)  # the same tests on every lab: no "missing" cell
            want = "INVALID" if truth["invalid"] or truth.get("measurement_invalid") else \
                "PASS" if truth["passed"] is True else "FAIL"
            assert row[f"{array} verdict"] == want, row
            measured = truth["measured"]
            if isinstance(measured, (int, float)) and measured == measured:
                assert float(row[array]) == round(float(measured), 4), row
            checked += 1
    assert checked >= 3 * len(ARRAYS), f"only {checked} cells checked"  # the baseline judges 4 checks per lab


def test_array_side_latency_is_beside_the_hosts_for_every_array(bakeoff: dict[str, Any]) -> None:
    side = [r for r in _csv(bakeoff["out"] / "bakeoff.csv") if r["kind"] == "array vs host latency"]
    assert side, "no array-side latency rows: the drivers' counters did not reach the store"
    assert all(row[array] != "" and row[f"{array} verdict"] != "" for row in side for array in ARRAYS), side


def test_the_matrix_rebuilt_from_the_store_is_the_sessions(bakeoff: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "rebuilt"
    done = subprocess.run([sys.executable, "-m", "iogate", "bakeoff", "--runs", bakeoff["run"], "--store",
                           str(bakeoff["store"]), "--out", str(out)], cwd=REPO, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _csv(out / "bakeoff.csv") == _csv(bakeoff["out"] / "bakeoff.csv")
