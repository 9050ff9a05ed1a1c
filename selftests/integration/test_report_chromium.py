"""The report end to end: pytest + allure-pytest -> allure-results -> Allure 3 HTML -> headless Chromium.

A generated acceptance-like test file attaches a verdict table (HTML) and a
timeline chart (PNG from iogate.report.charts) and fails one test the way a criterion
does ("verdict failed: latency_bound FAIL: ..."); another breaks with a HostError.
The built report is served on 127.0.0.1 and opened in headless Chromium (Selenium
and Debian's chromedriver, report_browser.py): the failed verdict's evidence
(criterion, measured, bound) and the chart must be reachable in the rendered
single-page app, and the failure must sit in the product-defect category, the
HostError in the infrastructure one. The browser must reach 127.0.0.1 and nothing else.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from iogate.report import build_report, write_environment
from iogate.report.build import ReportError
from iogate.report.categories import (
    INFRASTRUCTURE,
    MEASUREMENT_INVALID,
    NOTHING_JUDGED,
    PRODUCT_DEFECT,
    classify,
    write_categories,
)
from selftests.integration.report_browser import headless_chromium, missing_browser_commands, wait_for

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(90),
    pytest.mark.skipif(shutil.which("allure") is None or bool(missing_browser_commands()),
                       reason="needs the Allure 3 CLI (npm allure@3), chromium and chromedriver; `make setup` installs them"),
]

GENERATED_TESTS = textwrap.dedent('''
    import allure

    from iogate.report import charts
    from iogate.errors import HostError
    from iogate.metrics.types import Dir, Sample, Series

    START_MS = 1_700_000_000_000


    def _series():
        samples = [Sample(START_MS + i * 1000, "vm1", "localhost", Dir.READ, 9000 - (3000 if 20 < i <= 40 else 0),
                          (3_200_000 if 20 < i <= 40 else 900_000)) for i in range(1, 61)]
        return Series(tuple(samples))


    def test_latency_verdict():
        table = ("<table id='verdicts'><tr><th>criterion</th><th>measured</th><th>bound</th></tr>"
                 "<tr><td>latency_bound</td><td>3.2 ms</td><td>2 ms</td></tr></table>")
        allure.attach(table, name="verdict table", attachment_type=allure.attachment_type.HTML)
        png = charts.timeline_png(_series(), [("snapshot", START_MS + 20_000, START_MS + 40_000)], start_ms=START_MS)
        allure.attach(png, name="iops and latency chart", attachment_type=allure.attachment_type.PNG)
        assert False, "verdict failed: latency_bound FAIL: measured 3.2 ms, bound 2 ms, window measure, 20/60 intervals failing"


    def test_iops_verdict():
        allure.attach("<table><tr><td>iops_floor</td><td>9000</td><td>5000</td></tr></table>", name="verdict table",
                      attachment_type=allure.attachment_type.HTML)


    def test_host_unreachable():
        raise HostError("host h3: ssh connection refused")
''')


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def _serving(directory: Path, host: str = "127.0.0.1") -> Iterator[str]:
    """Serve `directory` over HTTP on host (a free port) for the block; yields the base URL."""
    server = ThreadingHTTPServer((host, 0), functools.partial(_QuietHandler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def served_report(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, dict[str, float]]]:
    """(base URL, report dir, timings) of a report built from the generated tests, once per module."""
    tmp_path = tmp_path_factory.mktemp("report")
    timings: dict[str, float] = {}
    work = tmp_path / "suite"
    work.mkdir()
    (work / "pytest.ini").write_text("[pytest]\n")  # pin the rootdir: the repo's pytest.ini must not apply
    (work / "test_generated_verdicts.py").write_text(GENERATED_TESTS)
    results = tmp_path / "allure-results"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    started = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "allure_pytest", "--alluredir", str(results),
                          "-p", "no:cacheprovider", "test_generated_verdicts.py"],
                         cwd=work, env=env, capture_output=True, text=True, timeout=60, check=False)
    timings["pytest_s"] = time.perf_counter() - started
    assert run.returncode == 1, f"generated tests should fail (2 of 3):\n{run.stdout}\n{run.stderr}"
    assert "1 passed" in run.stdout and "2 failed" in run.stdout, run.stdout
    write_environment(results, {"lab": "labs/local.yaml", "array": "local (loop devices)", "suite": "iogate 0.1.0"})

    started = time.perf_counter()
    index = build_report(results, tmp_path / "allure-report", tmp_path / "history.jsonl")
    timings["build_s"] = time.perf_counter() - started
    report = index.parent

    with _serving(report) as base_url:
        yield base_url, report, timings


def _test_result_id(report: Path, name: str) -> str:
    """The id the report routes a test result by (#/<id>), read from the report's own data."""
    for path in (report / "data" / "test-results").glob("*.json"):
        data = json.loads(path.read_text())
        if data.get("name") == name:
            return str(data["id"])
    raise AssertionError(f"test result {name} not in report {report}")


# JavaScript helpers: text of the attachment section, and the content of expanded previews.
# The first button of an attachment header toggles its inline preview (the others open a modal, download...).
# _EXPAND_ATTACHMENTS and _SCROLL_TO_CHART are script bodies (execute_script), the others expressions (wait_for).
_EXPAND_ATTACHMENTS = """
  document.querySelectorAll('[data-testid=test-result-attachment-header]').forEach(h => h.querySelector('button').click());
"""
_SCROLL_TO_CHART = "document.querySelector('[data-testid=test-result-attachment] img').scrollIntoView({block: 'center'});"
_VERDICT_TABLE_ROWS = """
  [...document.querySelectorAll('iframe')]
    .map(f => f.contentDocument ? [...f.contentDocument.querySelectorAll('tr')] : [])
    .map(rows => rows.map(tr => [...tr.cells].map(c => c.textContent.trim())))
    .find(rows => rows.length >= 2 && rows[0].includes('criterion'))
"""
_CHART_SIZE = """
  (() => { const img = [...document.querySelectorAll('[data-testid=test-result-attachment] img')]
             .find(i => i.complete && i.naturalWidth > 0);
           return img ? [img.naturalWidth, img.naturalHeight] : null; })()
"""


def test_failed_verdict_evidence_and_chart_render_in_chromium(served_report: tuple[str, Path, dict[str, float]], tmp_path: Path) -> None:
    base_url, report, timings = served_report
    started = time.perf_counter()
    failed_id = _test_result_id(report, "test_latency_verdict")
    with headless_chromium() as browser:
        # The overview: the run's results and environment are listed.
        browser.get(f"{base_url}/index.html")
        overview = wait_for(browser, "document.body.innerText.includes('test_latency_verdict') && document.body.innerText")
        assert "test_host_unreachable" in overview
        assert "labs/local.yaml" in overview, "environment.properties should show in the overview"

        # The failed test's page: status, category and the verdict line with measured and bound.
        browser.get(f"{base_url}/index.html#/{failed_id}")
        page = wait_for(browser, "document.body.innerText.includes('verdict failed') && document.body.innerText")
        assert "Failed" in page
        assert PRODUCT_DEFECT in page
        assert "latency_bound FAIL: measured 3.2 ms, bound 2 ms" in page

        # Its attachments: the verdict table renders as a table, the chart as a decoded image.
        browser.get(f"{base_url}/index.html#/{failed_id}/attachments")
        wait_for(browser, "document.querySelectorAll('[data-testid=test-result-attachment-header]').length >= 2")
        browser.execute_script(_EXPAND_ATTACHMENTS)
        header, row = wait_for(browser, _VERDICT_TABLE_ROWS)
        assert header == ["criterion", "measured", "bound"]
        assert row == ["latency_bound", "3.2 ms", "2 ms"]
        width, height = wait_for(browser, _CHART_SIZE)
        assert (width, height) == (1000, 600), "the timeline chart is 10x6 in at 100 dpi"
        browser.execute_script(_SCROLL_TO_CHART)
        screenshot = tmp_path / "failed-verdict.png"
        assert browser.save_screenshot(str(screenshot))
    timings["chromium_s"] = time.perf_counter() - started
    assert screenshot.stat().st_size > 10_000
    keep = os.environ.get("IOGATE_KEEP_SCREENSHOT")
    if keep:  # lets a developer look at what the browser saw
        shutil.copy(screenshot, keep)
    print(f"report timings: {json.dumps({k: round(v, 2) for k, v in timings.items()})}")


# Resolves to 'reached' or 'blocked' (execute_async_script): no-cors, so only the network decides.
_FETCH = """
  const done = arguments[arguments.length - 1];
  fetch(arguments[0], {mode: 'no-cors', cache: 'no-store'}).then(() => done('reached'), () => done('blocked'));
"""


def test_the_page_reaches_127_0_0_1_only(served_report: tuple[str, Path, dict[str, float]]) -> None:
    """The browser cannot leave the machine: a host name (localhost, the same server) and any other
    address (127.0.0.2, a second server on this machine) are as unreachable as the outside world."""
    base_url, report, _ = served_report
    port = base_url.rsplit(":", 1)[1]
    with _serving(report, "127.0.0.2") as other_address, headless_chromium() as browser:
        browser.get(f"{base_url}/index.html")
        urls = (f"{base_url}/index.html", f"http://localhost:{port}/index.html", f"{other_address}/index.html")
        reached = {url: browser.execute_async_script(_FETCH, url) for url in urls}
    assert list(reached.values()) == ["reached", "blocked", "blocked"], reached


def test_categories_split_product_defects_from_infrastructure(served_report: tuple[str, Path, dict[str, float]]) -> None:
    _, report, _ = served_report
    categories = json.loads((report / "widgets" / "categories.json").read_text())
    nodes = categories["nodes"]

    def tests_under(category_name: str) -> set[str]:
        (root,) = [nodes[r] for r in categories["roots"] if nodes[r]["name"] == category_name]
        found, pending = set(), list(root.get("childrenIds", []))
        while pending:
            node = nodes[pending.pop()]
            if node["type"] == "tr":
                found.add(node["name"])
            pending.extend(node.get("childrenIds", []))
        return found

    assert tests_under(PRODUCT_DEFECT) == {"test_latency_verdict"}
    assert tests_under(INFRASTRUCTURE) == {"test_host_unreachable"}


def test_history_is_kept_between_builds(tmp_path: Path, served_report: tuple[str, Path, dict[str, float]]) -> None:
    _, report, _ = served_report
    results = report.parent / "allure-results"
    history = tmp_path / "state" / "history.jsonl"  # parent directory does not exist yet
    for build in (1, 2):
        index = build_report(results, tmp_path / "report", history)
        lines = history.read_text().splitlines()
        assert len(lines) == build, "each build appends one history entry for the trend widgets"
    assert all(json.loads(line) for line in lines)
    assert "googletagmanager" not in index.read_text(), "the report must not call out of the lab"


def test_build_refuses_to_overwrite_a_directory_that_is_not_a_report(tmp_path: Path,
                                                                     served_report: tuple[str, Path, dict[str, float]]) -> None:
    _, report, _ = served_report
    precious = tmp_path / "not-a-report"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me")
    with pytest.raises(ReportError, match="refusing to overwrite"):
        build_report(report.parent / "allure-results", precious, tmp_path / "history.jsonl")
    assert (precious / "notes.txt").read_text() == "keep me"


TRICKY_ENVIRONMENT = {"lab": "labs/netns.yaml", "array url": "https://array:8443/api?x=1", "note": " leading space # and = : signs",
                      "operator": "Zoë Ünal", "multi": "line one\nline two", "path\\win": "C:\\lab"}


def test_environment_values_survive_allures_own_reader(tmp_path: Path) -> None:
    results = tmp_path / "allure-results"
    write_environment(results, TRICKY_ENVIRONMENT)
    index = build_report(results, tmp_path / "report", tmp_path / "history.jsonl")
    shown = {entry["name"]: entry["values"][0] for entry in json.loads((index.parent / "widgets" / "allure_environment.json").read_text())}
    assert shown == TRICKY_ENVIRONMENT


@pytest.mark.parametrize(("status", "message", "trace", "expected"), [
    ("failed", "AssertionError: verdict failed: latency_bound FAIL: measured 3.2 ms, bound 2 ms\nassert False", "", PRODUCT_DEFECT),
    ("failed", "verdict failed: iops_floor FAIL", "", PRODUCT_DEFECT),
    ("failed", "AssertionError: verdict failed: nothing judged: spec criteria/poc.yaml has no check", "", NOTHING_JUDGED),
    ("broken", "plugins.verdicts.MeasurementInvalid: measurement invalid: generator saturated: host h1 was 97.0 % CPU busy",
     "subprocess.CalledProcessError in a trace", MEASUREMENT_INVALID),
    ("failed", "AssertionError: verdict failed: iops_min FAIL\nmeasurement invalid: generator saturated", "", PRODUCT_DEFECT),
    ("broken", "iogate.errors.HostError: host h3: ssh connection refused", "", INFRASTRUCTURE),
    ("broken", "RuntimeError: wrapped", "raise ArrayError('pool full')\nE   iogate.errors.ArrayError: pool full", INFRASTRUCTURE),
    ("broken", "iogate.errors.GuardRefused: refusing /dev/sdb", "", INFRASTRUCTURE),
    ("broken", "subprocess.CalledProcessError: fio exited 1", "", INFRASTRUCTURE),
    ("broken", "iogate.engines.fio.runner.FioOutputError: no json in output", "", INFRASTRUCTURE),
    # Not ours to classify: a plain failing assertion and a verdict text that is not at the start.
    ("failed", "AssertionError: expected 3 VMs", "", None),
    ("failed", "AssertionError: note: verdict failed: later in the text", "", None),
    ("broken", "KeyError: 'x'", "", None),
    ("passed", "", "", None),
])
def test_categories_separate_product_defects_from_broken_infrastructure(status: str, message: str, trace: str,
                                                                        expected: str | None) -> None:
    assert classify(status, message, trace) == expected


def test_categories_json_lists_every_iogate_error(tmp_path: Path) -> None:
    rules = json.loads(write_categories(tmp_path).read_text())
    assert [r["name"] for r in rules] == [NOTHING_JUDGED, PRODUCT_DEFECT, MEASUREMENT_INVALID, INFRASTRUCTURE, INFRASTRUCTURE]
    for name in ("IOGateError", "ArrayError", "HostError", "EngineError", "GuardRefused", "LabFileError", "LedgerError", "ReportError"):
        assert name in rules[3]["messageRegex"]
