"""The machinery of the spec-catches self-tests: run an acceptance family on an edited copy of a lab with
a degradation injected into what the run itself started, and read its verdicts back.

Used by selftests/integration/test_local_spec_catches.py (criteria/local.yaml on the local lab) and
selftests/integration/test_netns_spec_catches.py (criteria/netns.yaml on a copy of the netns lab).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
LOCAL_LAB = ROOT / "labs" / "local.yaml"


def our_processes(workdir: Path, name: str, also: str = "") -> list[int]:
    """PIDs of processes named `name` whose command line holds this test's workdir (and `also`): never another run's."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        text = b" ".join(argv).decode(errors="replace")
        if argv and Path(argv[0].decode(errors="replace")).name == name and str(workdir) in text and also in text:
            pids.append(int(entry.name))
    return pids


class Injection:
    """A degradation done to what one run started, `after_s` after its anchor: the run's own fio (its command
    line holds the test's workdir and `also`), or a file matching the glob `once_exists` under the workdir."""

    def __init__(self, *, after_s: float, also: str = "", once_exists: str = "", timeout_s: float = 600) -> None:
        self.after_s, self.also, self.once_exists, self.timeout_s = after_s, also, once_exists, timeout_s

    def anchored(self, workdir: Path) -> bool:
        if self.once_exists:
            return any(workdir.glob(self.once_exists))
        return bool(our_processes(workdir, "fio", self.also))

    def act(self, workdir: Path) -> None:
        raise NotImplementedError

    def start(self, workdir: Path) -> threading.Thread:
        def run() -> None:
            deadline = time.monotonic() + self.timeout_s
            while not self.anchored(workdir):
                if time.monotonic() > deadline:
                    print(f"{type(self).__name__}: its anchor never appeared: nothing injected", flush=True)
                    return
                time.sleep(0.05)
            time.sleep(self.after_s)
            self.act(workdir)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread


def signal_all(pids: list[int] | set[int], sig: signal.Signals) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:  # a process that ended meanwhile
            pass


class Stall(Injection):
    """SIGSTOP the run's own `name` processes `after_s` after its fio appears, SIGCONT `for_s` later."""

    def __init__(self, name: str, *, after_s: float, for_s: float, also: str = "") -> None:
        super().__init__(after_s=after_s, also=also)
        self.name, self.for_s = name, for_s
        self.stopped: list[int] = []

    def act(self, workdir: Path) -> None:
        self.stopped = our_processes(workdir, self.name)
        print(f"stall: SIGSTOP {self.name} {self.stopped} for {self.for_s:g} s", flush=True)
        signal_all(self.stopped, signal.SIGSTOP)
        try:
            time.sleep(self.for_s)
        finally:
            signal_all(self.stopped, signal.SIGCONT)


def run_family(tmp_path: Path, family: str, *, lab_edit: Callable[[dict[str, Any]], None] | None = None,
               args: tuple[str, ...] = (), stall: Injection | None = None, base: Path = LOCAL_LAB) -> dict[str, list[dict[str, Any]]]:
    """Run one acceptance family on an edited copy of a lab file (`base`, the local lab unless given) whose
    workdir is the test's; verdict rows per check (name without [..])."""
    workdir = tmp_path / "work"
    lab = yaml.safe_load(base.read_text())
    lab["workdir"] = str(workdir)
    if lab_edit:
        lab_edit(lab)
    lab_file = tmp_path / "lab.yaml"
    lab_file.write_text(yaml.safe_dump(lab, sort_keys=False))
    out = tmp_path / "verdicts.jsonl"
    argv = [sys.executable, "-m", "pytest", "tests", "-m", family, "--lab", str(lab_file), "--profile", "smoke",
            "--verdicts-jsonl", str(out), "-q", "-p", "no:cacheprovider", *args]
    thread = stall.start(workdir) if stall else None
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=900)
    if thread:
        thread.join(timeout=60)
    rows: dict[str, list[dict[str, Any]]] = {}
    for line in out.read_text().splitlines() if out.exists() else []:
        row = json.loads(line)
        rows.setdefault(row["criterion"].split("[", 1)[0], []).append(row)
    assert rows, f"no verdicts: the family did not reach a judgement\n{done.stdout[-3000:]}"
    return rows


def failed(rows: dict[str, list[dict[str, Any]]], *, with_invalid: bool = False) -> set[str]:
    """Checks with a failed verdict that stands; `with_invalid` adds those the test reported as an invalid
    measurement (a saturated generator: plugins/verdicts.py), which are neither pass nor fail. A row's `passed`
    is its criterion's judgement: a pass judged on a saturated generator (measurement_invalid set) is no
    failure here, and no catch either."""
    return {name for name, verdicts in rows.items()
            if any(not v["passed"] and (with_invalid or not v.get("measurement_invalid")) for v in verdicts)}


def invalid(rows: dict[str, list[dict[str, Any]]]) -> dict[str, str]:
    """Check -> why its failed verdicts were an invalid measurement, for the checks that failed only so."""
    return {name: next(v["measurement_invalid"] for v in rows[name] if not v["passed"])
            for name in failed(rows, with_invalid=True) - failed(rows)}


def details(rows: dict[str, list[dict[str, Any]]], check: str) -> str:
    return " | ".join(f"measured {v['measured']} bound {v['bound']}: {v['detail']}"
                      + (f" [invalid: {v['measurement_invalid']}]" if v.get("measurement_invalid") else "")
                      for v in rows[check] if not v["passed"])


def assert_caught(rows: dict[str, list[dict[str, Any]]], target: set[str], also: frozenset[str] | set[str] = frozenset()) -> None:
    """The target checks fail; nothing fails beyond them and the checks the same degradation also
    trips by construction (`also`, each named in the test)."""
    failing, standing = failed(rows, with_invalid=True), failed(rows)
    report = {name: details(rows, name) for name in failing}
    # The injected degradation must make its check fail, on a saturated generator too (the verdict failed;
    # the plugin only declines to blame the array for it); a check that failed beyond it only on a
    # saturated generator measured this machine's load, not the degradation.
    assert target <= failing, f"not caught: {sorted(target - failing)}; failed: {report}"
    assert standing <= target | also, f"failed beyond the expected: {sorted(standing - target - also)}; {report}"
