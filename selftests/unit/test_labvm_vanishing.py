"""A lab VM's lab names the qemu process its resources vanish with (iogate/labs/labvm/vanishing.py), so cleanup after
a killed session skips what went with the VM instead of running its undo over ssh on whatever answers the port."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from iogate.lab import load_lab
from iogate.labs.labvm import cli as labvm_cli
from iogate.labs.labvm.vanishing import vanishing_with

ROOT = Path(__file__).resolve().parents[2]


def test_the_lab_vms_hosts_and_array_are_marked() -> None:
    lab = load_lab(ROOT / "labs" / "labvm.yaml")
    assert lab.array.options.get("vanishes_with") is None and lab.hosts[0].vanishes_with is None
    marked = vanishing_with(lab, "iogate-labvm-20261207-1")
    assert [h.vanishes_with for h in marked.hosts] == ["iogate-labvm-20261207-1"]
    assert marked.array.options["vanishes_with"] == "iogate-labvm-20261207-1"
    assert marked.array.options["transport"] == "ssh://root@127.0.0.1:10022"  # the rest as the file says
    assert marked.path == lab.path


def test_an_array_driver_without_the_option_keeps_its_options() -> None:
    lab = load_lab(ROOT / "labs" / "local.yaml")
    marked = vanishing_with(lab, "iogate-labvm-x")
    assert marked.array.options == lab.array.options
    assert {h.vanishes_with for h in marked.hosts} == {"iogate-labvm-x"}


def test_the_running_vms_marker_comes_from_its_state_while_it_runs(tmp_path: Path) -> None:
    assert labvm_cli.running_marker(tmp_path) is None  # no state
    stand_in = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "iogate-labvm-stand-in"])
    try:
        (tmp_path / "labvm.json").write_text(json.dumps({"pid": stand_in.pid, "marker": "iogate-labvm-stand-in"}))
        while stand_in.poll() is None and b"iogate-labvm-stand-in" not in Path(f"/proc/{stand_in.pid}/cmdline").read_bytes():
            time.sleep(0.01)  # forked, not yet exec'd: it still carries this process's command line
        assert labvm_cli.running_marker(tmp_path) == "iogate-labvm-stand-in"
    finally:
        stand_in.kill()
        stand_in.wait()
    assert labvm_cli.running_marker(tmp_path) is None  # its process gone
