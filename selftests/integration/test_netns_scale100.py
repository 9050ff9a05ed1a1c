"""The 100-host run of the scaling family (issue 32): `pytest tests -m scaling --lab labs/netns-100.yaml
--profile smoke` passes, its Allure results carry the stepping curve to 100 hosts, and nothing of the lab is
left: no namespace, veth, sshd or fio server of it, no loop device of the run, no ssh master.

About 30 min on the 2-core reference machine (docs/labs.md has the figures): its own tier, `make scale100`
(pytest -m scale100); it skips unless -m names scale100, so `make check` never runs it. It brings up the
lab's own namespaces (iogate-h1 .. iogate-h100, 10.110.N.2): a `lab up` of netns-100 must not be up.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from iogate.hosts.initiator import CONTROL_DIR
from iogate.lab import load_lab
from iogate.labs import netns

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "labs" / "netns-100.yaml"

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.scale100,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces and loop devices need root"),
    pytest.mark.timeout(5400),
]


@pytest.fixture(autouse=True)
def _only_when_asked(request: pytest.FixtureRequest) -> None:
    if "scale100" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("the 100-host run (~30 min) runs only when asked: make scale100 (pytest -m scale100)")


def _attachments(results: Path) -> dict[str, Path]:
    found = {}
    for path in results.glob("*-result.json"):
        for attachment in _walk(json.loads(path.read_text())):
            found[attachment["name"]] = results / attachment["source"]
    return found


def _walk(node: dict) -> list[dict]:  # type: ignore[type-arg]
    found = list(node.get("attachments", []))
    for step in node.get("steps", []):
        found += _walk(step)
    return found


def test_a_hundred_hosts_step_to_100_pass_and_leave_nothing(tmp_path: Path) -> None:
    lab = load_lab(LAB)
    assert len(lab.hosts) == 100
    assert not netns.is_up(lab), f"lab {lab.name} is up (`lab up`): this test brings it up itself"
    results = tmp_path / "allure-results"
    done = subprocess.run([sys.executable, "-m", "pytest", "tests", "-m", "scaling", "--lab", str(LAB), "--profile", "smoke",
                           "--alluredir", str(results), "-p", "no:randomly"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout, done.stdout[-3000:]

    attachments = _attachments(results)
    curve = attachments.get("seqread-1m: stepping curve")
    assert curve is not None and curve.read_bytes().startswith(b"\x89PNG"), sorted(attachments)[:20]
    table = attachments["seqread-1m: steps (CSV)"].read_text()
    assert "hosts-100," in table and "alone-h100," in table and "hosts-10," in table

    run_dir = netns.lab_run_dir(lab)
    assert not netns.leftovers(netns.plan_hosts(lab, run_dir), run_dir)
    names = set(subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout.split())
    assert not {h.namespace for h in lab.hosts} & names
    loops = subprocess.run(["losetup", "-a"], capture_output=True, text=True, check=True).stdout
    assert "-netns-100-" not in loops, loops
    masters = subprocess.run(["pgrep", "-af", str(CONTROL_DIR)], capture_output=True, text=True).stdout
    assert not [line for line in masters.splitlines() if "10.110." in line or "[mux]" in line], masters
