"""Calibrate a lab's spec: run each test family N times, record what every judged metric did.

    python tools/calibrate.py --n 20 --families baseline,kpi,tiles,events
    make calibrate N=20 FAMILIES=baseline,events

Each family runs N times (`pytest tests -m FAMILY --lab LAB --profile PROFILE
--criteria SPEC --verdicts-jsonl ...`, the lab's workdir replaced by --workdir so
calibration never shares a run directory with anything else). Every verdict's
measured value is collected per check; the record (criteria/local.calibration.md
by default) gives, per check, the observed min / median / max and the worst
value (the one nearest to failing: the max for an upper bound, the min for a
lower one), the spec's bound, the bound the margin rule proposes (worst x (1 +
margin) for an upper bound, worst x (1 - floor margin) for a lower one), and whether
the spec's bound is too tight (the worst run failed it) or looser than the rule.
The record also says how the machine was loaded while it was taken.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from iogate.judging.families import USES  # noqa: E402
from iogate.judging.registry import REGISTRY  # noqa: E402
from iogate.judging.spec import Check, load_spec  # noqa: E402

# Read from each criterion's declared bound (iogate/judging/registry.py; BOUND in its module):
# criteria whose bound is a floor (measured must stay above it); all others are ceilings.
LOWER_BOUNDS = frozenset(name for name, c in REGISTRY.items() if c.bound.floor)
# Criteria whose measured value is a relative change in % (a drop, a rise, a deviation from a baseline):
# near zero a multiplicative margin means nothing, so their margin is in percentage points.
POINTS = frozenset(name for name, c in REGISTRY.items() if c.bound.change_pct)
# Criteria whose measured value is not a distance from the bound (a share of intervals, a round count): recorded only.
NOT_PROPOSED = frozenset(name for name, c in REGISTRY.items() if not c.bound.proposed)
# Every family that measures runs, but scaling (it needs several hosts; its bounds are the lab's declared limits).
DEFAULT_FAMILIES = tuple(family for family in USES if family not in ("scaling", "regression"))


# The bound each criterion's measured value is compared with, in the verdict's unit (latency bounds in ms).
BOUND_KEY = {name: c.bound.key for name, c in REGISTRY.items() if c.bound.proposed and c.bound.key}


# The bound the record shows for criteria whose failures are counted at each run's own bounds (BOUND_KEY has
# no entry: the measured value depends on other bounds too), scaled to the verdict's unit: the spec's bound now,
# so the record's "spec" column says what the spec holds, not what its first run was judged at.
SHOWN_BOUND = {name: (c.bound.key, c.bound.shown_scale) for name, c in REGISTRY.items() if not c.bound.proposed and c.bound.key}


def current_bound(check: Check, recorded: float) -> float:
    """The spec's bound now (the record is re-rendered after bounds change); the run's own for the rest."""
    key = BOUND_KEY.get(check.criterion)
    if key is None:
        if check.criterion in SHOWN_BOUND:
            shown, scale = SHOWN_BOUND[check.criterion]
            return float(check.bound(shown)) * scale
        return recorded
    value = float(check.bound(key) or 0.0)
    return value / 1e6 if key.endswith("_ns") else value


@dataclass
class Observed:
    check: Check | None
    values: list[float]
    bound: float
    unit: str
    failed: int
    invalid: int = 0  # rows judged on a saturated generator, passed or failed: they measured this machine, not the lab; left out
    # Values per window a check judged ("" for the check's own window, "recovery" for `<check>[recovery]`, a VM's name for
    # `<check>[vm]`): one run judges an events check twice, so n alone would read as twice the runs.
    windows: dict[str, int] = field(default_factory=dict)
    worst_window: str = ""

    @property
    def count(self) -> str:
        own = self.windows.get("", 0)
        rest = [f"{n} [{name}]" for name, n in sorted(self.windows.items()) if name]
        return " + ".join(([str(own)] if own or not rest else []) + rest)

    @property
    def lower(self) -> bool:
        return self.check is not None and self.check.criterion in LOWER_BOUNDS

    @property
    def worst(self) -> float:
        return min(self.values) if self.lower else max(self.values)

    def proposed(self, margin: float, floor_margin: float, points: float) -> float | None:
        if self.check is None or self.check.criterion in NOT_PROPOSED:
            return None
        if self.check.criterion in POINTS:
            return max(self.worst, 0.0) + points
        return self.worst * (1 - floor_margin) if self.lower else self.worst * (1 + margin)


def lab_copy(lab: Path, workdir: Path) -> Path:
    """The lab file with its workdir replaced, beside the original (its relative `criteria:` still resolves)."""
    data = yaml.safe_load(lab.read_text())
    data["workdir"] = str(workdir)
    handle, name = tempfile.mkstemp(prefix=f".{lab.stem}-calibrate-", suffix=".yaml", dir=lab.parent)
    with os.fdopen(handle, "w") as out:
        yaml.safe_dump(data, out, sort_keys=False)
    return Path(name)


def run_family(family: str, lab: Path, spec: Path, profile: str, out: Path, extra: list[str], log: Path) -> tuple[int, float]:
    """One pytest session; its whole output is kept in `log` (a round that failed must be readable afterwards: a
    test that errored leaves no verdict row), and its failed and errored tests are named on the console."""
    argv = [sys.executable, "-m", "pytest", "tests", "-m", family, "--lab", str(lab), "--profile", profile,
            "--criteria", str(spec), "--verdicts-jsonl", str(out), "-q", "-p", "no:randomly", *extra]
    began = time.monotonic()
    done = subprocess.run(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log.write_text(done.stdout)
    lines = done.stdout.strip().splitlines()
    tail = lines[-1:] or [""]
    print(f"    {family}: rc {done.returncode}, {time.monotonic() - began:.0f} s: {tail[0]} (output: {log})", flush=True)
    for line in lines:
        if line.startswith(("FAILED ", "ERROR ")):
            print(f"      {line[:300]}", flush=True)
    return done.returncode, time.monotonic() - began


def run_together(families: list[str], lab: Path, spec: Path, profile: str, rows_dir: Path,
                 extra: list[str], round_number: int) -> tuple[int, float]:
    """One pytest session for every family (one set-up and prefill per round instead of one per family); each
    verdict row goes to its family's file by the test that gave it (pytest's own -m selection, collected once)."""
    out = rows_dir / "together.jsonl"
    out.unlink(missing_ok=True)
    result = run_family(" or ".join(families), lab, spec, profile, out, extra, rows_dir / f"round-{round_number}.log")
    owner = tests_by_family(families, lab, spec, profile)
    for row in load_rows(out):
        family = owner.get(row["test"])
        if family is None:
            raise SystemExit(f"calibrate: verdict row of {row['test']} belongs to none of {families}")
        with (rows_dir / f"{family}.jsonl").open("a") as sink:
            sink.write(json.dumps(row) + "\n")
    out.unlink(missing_ok=True)  # a round that judged nothing (interrupted, or failed to collect) wrote no rows
    return result


_OWNERS: dict[tuple[str, ...], dict[str, str]] = {}


def tests_by_family(families: list[str], lab: Path, spec: Path, profile: str) -> dict[str, str]:
    key = tuple(families)
    if key not in _OWNERS:
        owner: dict[str, str] = {}
        for family in families:
            argv = [sys.executable, "-m", "pytest", "tests", "-m", family, "--lab", str(lab), "--profile", profile,
                    "--criteria", str(spec), "--collect-only", "-q", "-p", "no:randomly"]
            done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=True)
            for line in done.stdout.splitlines():
                if "::" in line:
                    if owner.setdefault(line.strip(), family) != family:
                        raise SystemExit(f"calibrate: {line.strip()} is in families {owner[line.strip()]} and {family}")
        _OWNERS[key] = owner
    return _OWNERS[key]


def load_rows(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def collect(rows: list[dict], spec_path: Path, family: str) -> dict[str, Observed]:
    """Measured values per check; "p99_latency_max[sql]" is a row of check p99_latency_max."""
    family_spec = load_spec(spec_path).for_family(family)
    observed: dict[str, Observed] = {}
    for row in rows:
        name = row["criterion"]
        base, _, suffix = name.partition("[")
        window = suffix.rstrip("]")
        check = family_spec.checks.get(base)
        if check is None:
            continue  # a check of another family (regression) or none of this spec
        value = row["measured"]
        if value is None or value != value:  # NaN: no data, counted as a failure only
            value_list: list[float] = []
        else:
            value_list = [float(value)]
        entry = observed.setdefault(base, Observed(check, [], current_bound(check, float(row["bound"])), row["unit"], 0))
        if row.get("measurement_invalid"):
            entry.invalid += 1  # neither a value of the lab nor a failure of its bound, whatever `passed` says (plugins/verdicts.py)
            continue
        if value_list:
            entry.windows[window] = entry.windows.get(window, 0) + 1
            worse = not entry.values or (value_list[0] < entry.worst if entry.lower else value_list[0] > entry.worst)
            if worse:
                entry.worst_window = window
        entry.values.extend(value_list)
        if check.criterion not in BOUND_KEY:
            entry.failed += 0 if row["passed"] else 1  # judged at the run's bounds (a share of intervals, rounds)
        elif not value_list or (value_list[0] < entry.bound if entry.lower else value_list[0] > entry.bound):
            entry.failed += 1  # judged against the spec's current bound
    return observed


def shown(path: Path | None) -> str:
    """A path as the record names it: relative to the checkout, so a record reads the same in every clone."""
    if path is None:
        return ""
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def machine_load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min) / {five:.1f} (5 min) on {os.cpu_count()} CPUs"


def record(results: dict[str, dict[str, Observed]], runs: dict[str, list[tuple[int, float]]], args: argparse.Namespace,
           loads: list[str]) -> str:
    now = time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())
    if getattr(args, "render_only", False):
        # The rows were taken earlier (their runs, loads and the note say when and how): this run only rendered them.
        taken = (f"Rendered {now} from rows taken by earlier runs, with `python tools/calibrate.py --render-only "
                 f"--rows {shown(args.rows)} --spec {shown(args.spec)}` on {os.uname().nodename} ({os.cpu_count()} CPUs).")
    else:
        taken = (f"Taken {now} with `python tools/calibrate.py --n {args.n} "
                 f"{' '.join(f'--n-for {item}' for item in args.n_for)}{' --together' if getattr(args, 'together', False) else ''} "
                 f"--families {','.join(results)} --profile {args.profile} "
                 f"--lab {args.lab.name}` on {os.uname().nodename} ({os.cpu_count()} CPUs).")
    lines = [f"# Calibration record of {shown(args.spec)}", "", taken, f"Machine load while it ran: {'; '.join(loads)}."]
    if args.note:
        lines += ["", f"**Note:** {args.note}"]
    lines += [
        "",
        f"Margin rule: an upper bound sits at worst x (1 + {args.margin:g}), a lower bound at worst x (1 - {args.floor_margin:g}), "
        f"a relative change (drop, rise, deviation in %) at max(worst, 0) + {args.points:g} percentage points, "
        "where worst is the observed value nearest to failing; no looser. \"proposed\" is that value; \"spec\" is the bound "
        "criteria file holds; \"status\" says whether the spec's bound failed an observed run (too tight) or lies "
        "beyond the proposed value (looser than the rule).",
        "",
    ]
    for family, observed in results.items():
        passes = sum(1 for rc, _ in runs[family] if rc == 0)
        times = [t for _, t in runs[family]]
        lines += [f"## {family}", "",
                  f"{passes} of {len(times)} runs passed; {statistics.median(times):.0f} s median per run." if times else "no runs.", "",
                  "| check | criterion | n | min | median | max | worst | spec | proposed | unit | failed | status |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for name, obs in observed.items():
            left_out = f" ({obs.invalid} left out: generator saturated)" if obs.invalid else ""
            if not obs.values:
                lines.append(f"| {name} | {obs.check.criterion if obs.check else ''} | 0 | | | | | {obs.bound:.4g} | | {obs.unit} "
                             f"| {obs.failed} | no data{left_out} |")
                continue
            proposed = obs.proposed(args.margin, args.floor_margin, args.points)
            worst_in = f" [{obs.worst_window}]" if obs.worst_window else ""
            if obs.failed and obs.check is not None and obs.check.criterion not in BOUND_KEY:
                status = f"{obs.failed} run(s) failed at the run's bounds"
            elif obs.failed:
                status = "TOO TIGHT"
            elif proposed is not None and (obs.bound < proposed * 0.999 if obs.lower else obs.bound > proposed * 1.001):
                status = "looser than rule"
            else:
                status = "ok"
            lines.append(
                f"| {name} | {obs.check.criterion if obs.check else ''} | {obs.count} | {min(obs.values):.4g} | "
                f"{statistics.median(obs.values):.4g} | {max(obs.values):.4g} | {obs.worst:.4g}{worst_in} | {obs.bound:.4g} | "
                f"{'' if proposed is None else f'{proposed:.4g}'} | {obs.unit} | {obs.failed} | {status}{left_out} |")
        lines.append("")
    return "\n".join(lines)


def pool(sources: list[Path], rows_dir: Path, families: list[str]) -> None:
    """One calibration from several: every family's rows and run outcomes of each source, in order."""
    rows_dir.mkdir(parents=True, exist_ok=True)
    runs: dict[str, list[list[float]]] = defaultdict(list)
    loads: list[str] = []
    for source in sources:
        saved = json.loads((source / "runs.json").read_text())
        for family, outcomes in saved["runs"].items():
            runs[family] += outcomes
        loads += saved["loads"]
    for family in families:
        text = "".join((s / f"{family}.jsonl").read_text() for s in sources if (s / f"{family}.jsonl").exists())
        (rows_dir / f"{family}.jsonl").write_text(text)
    (rows_dir / "runs.json").write_text(json.dumps({"runs": runs, "loads": loads}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20, help="runs per family (>= 20 for a record that sets bounds)")
    parser.add_argument("--families", default=",".join(DEFAULT_FAMILIES))
    parser.add_argument("--lab", type=Path, default=ROOT / "labs" / "local.yaml")
    parser.add_argument("--spec", type=Path, default=ROOT / "criteria" / "local.yaml")
    parser.add_argument("--profile", default="smoke")
    parser.add_argument("--workdir", type=Path, default=Path("/var/tmp/iogate-calibrate"))
    parser.add_argument("--margin", type=float, default=0.25, help="margin beyond the worst observed value of a ceiling (latency, drop)")
    parser.add_argument("--floor-margin", type=float, default=0.05,
                        help="margin below the worst observed value of a floor (IOPS: the caps make it exact)")
    parser.add_argument("--points", type=float, default=5.0,
                        help="margin in percentage points above the worst relative change (drop, rise, deviation), worst < 0 counted as 0")
    parser.add_argument("--n-for", action="append", default=[], metavar="FAMILY=N", help="runs for one family (e.g. baseline=20)")
    parser.add_argument("--out", type=Path, default=ROOT / "criteria" / "local.calibration.md")
    parser.add_argument("--note", default="", help="a line for the record (e.g. 'taken under load: N below 20')")
    parser.add_argument("--rows", type=Path, default=None,
                        help="keep every verdict row and run outcome in this directory (default: a temporary one)")
    parser.add_argument("--render-only", action="store_true",
                        help="run nothing: re-render the record from --rows against the spec's current bounds")
    parser.add_argument("--merge", action="append", type=Path, default=[], metavar="DIR",
                        help="pool the rows of several calibrations (their --rows directories, e.g. one per emulated "
                        "vendor) into --rows and render the record of the union; runs nothing")
    parser.add_argument("--together", action="store_true",
                        help="run every family in one pytest session per round (N rounds; --n-for does not apply)")
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = parser.parse_args(argv)
    families = [f for f in args.families.split(",") if f]
    n_for = {name: int(count) for name, count in (item.split("=", 1) for item in args.n_for)}
    if args.merge:
        if args.rows is None:
            parser.error("--merge needs --rows DIR (where the pooled rows go)")
        pool(args.merge, args.rows, families)
        args.render_only = True
    if args.render_only:
        if args.rows is None:
            parser.error("--render-only needs --rows DIR")
        saved = json.loads((args.rows / "runs.json").read_text())
        runs = {family: [tuple(r) for r in saved["runs"].get(family, [])] for family in families}
        results = {family: collect(load_rows(args.rows / f"{family}.jsonl"), args.spec, family) for family in families}
        args.out.write_text(record(results, runs, args, saved["loads"]))
        print(f"calibration record: {args.out}")
        return 0
    lab = lab_copy(args.lab.resolve(), args.workdir)
    results: dict[str, dict[str, Observed]] = {}
    runs: dict[str, list[tuple[int, float]]] = defaultdict(list)
    loads: list[str] = []
    try:
        with tempfile.TemporaryDirectory(prefix="iogate-calibrate-") as scratch:
            rows_dir = args.rows or Path(scratch)
            rows_dir.mkdir(parents=True, exist_ok=True)
            if args.together:
                for family in families:
                    (rows_dir / f"{family}.jsonl").unlink(missing_ok=True)
                for index in range(args.n):
                    print(f"  round {index + 1}/{args.n}: {', '.join(families)}", flush=True)
                    outcome = run_together(families, lab, args.spec, args.profile, rows_dir, args.pytest_args, index + 1)
                    for family in families:
                        runs[family].append(outcome)
                    loads.append(machine_load())
            for family in [] if args.together else families:
                out = rows_dir / f"{family}.jsonl"
                out.unlink(missing_ok=True)  # a record is one calibration, never mixed with an earlier one
                count = n_for.get(family, args.n)
                print(f"{family}: {count} runs", flush=True)
                for index in range(count):
                    print(f"  run {index + 1}/{count}", flush=True)
                    runs[family].append(run_family(family, lab, args.spec, args.profile, out, args.pytest_args,
                                                   rows_dir / f"{family}-{index + 1}.log"))
                    loads.append(machine_load())
                results[family] = collect(load_rows(out), args.spec, family)
            for family in families if args.together else []:
                results[family] = collect(load_rows(rows_dir / f"{family}.jsonl"), args.spec, family)
            (rows_dir / "runs.json").write_text(json.dumps({"runs": runs, "loads": [loads[0], loads[-1]] if loads else []}))
    finally:
        lab.unlink(missing_ok=True)
    loads_summary = [loads[0], loads[-1]] if loads else []
    args.out.write_text(record(results, runs, args, loads_summary))
    print(f"calibration record: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
