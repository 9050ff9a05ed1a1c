"""Soak: repeat a chosen set of tests N times from a fresh clone and print pass counts.

    python tools/soak.py --n 5 -- selftests/labvm/test_events_in_guest.py
    make soak N=5 TESTS="selftests/unit selftests/integration/test_load_control.py"
    make soak N=10 TESTS="tests -m baseline --profile smoke"

The clone is of this repository's committed HEAD (`git clone`), in a temporary
directory removed afterwards, so what is soaked is what a new user gets, not
the working tree. pytest runs there with this checkout's interpreter (the venv
holds the dependencies). A lab file whose workdir is the shared default gets
--lab pointing at a copy with the workdir under the clone's temp dir, so a
soak never shares a run directory. Every repetition prints its outcome and
time; the end prints "passed K of N" and exits 0 only when K == N.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def clone(into: Path) -> Path:
    target = into / "iogate"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(target)], check=True)
    head = subprocess.run(["git", "-C", str(target), "log", "--oneline", "-1"], capture_output=True, text=True, check=True)
    print(f"fresh clone of {ROOT} at {head.stdout.strip()} in {target}", flush=True)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5)
    parser.add_argument("--workdir", default="", help="lab workdir for acceptance runs (default: under the temp dir)")
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER, help="what to run (after --): paths, -m, -k ...")
    args = parser.parse_args(argv)
    tests = [a for a in args.pytest_args if a != "--"] or ["selftests/unit"]
    outcomes: list[tuple[int, float, str]] = []
    with tempfile.TemporaryDirectory(prefix="iogate-soak-") as scratch:
        repo = clone(Path(scratch))
        extra: list[str] = []
        if tests[0].startswith("tests") and "--lab" not in tests:
            lab = repo / "labs" / "local.yaml"
            workdir = args.workdir or str(Path(scratch) / "work")
            lab.write_text(lab.read_text().replace("workdir: /var/tmp/iogate", f"workdir: {workdir}"))
            extra = ["--lab", str(lab)]
        argv_run = [sys.executable, "-m", "pytest", *tests, *extra, "-q", "-p", "no:cacheprovider"]
        print(f"running {args.n} x: {shlex.join(argv_run)}", flush=True)
        for index in range(args.n):
            began = time.monotonic()
            done = subprocess.run(argv_run, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            took = time.monotonic() - began
            last = (done.stdout.strip().splitlines() or [""])[-1]
            outcomes.append((done.returncode, took, last))
            print(f"  {index + 1}/{args.n}: {'PASS' if done.returncode == 0 else 'FAIL'} in {took:.0f} s: {last}", flush=True)
            if done.returncode != 0:
                lines = done.stdout.splitlines()
                failed = [line for line in lines if line.startswith(("FAILED", "ERROR"))]
                verdicts = list(dict.fromkeys(line for line in lines if line.startswith("verdict failed:")))
                for line in failed[:10] + verdicts[:20]:
                    print(f"      {line}", flush=True)
    passed = sum(1 for rc, _, _ in outcomes if rc == 0)
    times = sorted(t for _, t, _ in outcomes)
    print(f"soak: passed {passed} of {args.n} ({' '.join(tests)}); time per run min {times[0]:.0f} s, "
          f"median {times[len(times) // 2]:.0f} s, max {times[-1]:.0f} s")
    return 0 if passed == args.n else 1


if __name__ == "__main__":
    sys.exit(main())
