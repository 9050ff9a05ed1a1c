"""`iogate bakeoff --runs RUN RUN ...` | `--session allure-results`: several arrays side by side, as CSV, XLSX and HTML.

`--session DIR` takes the run of the session that wrote the Allure results DIR (its labs are the columns) and
also adds the "Bake-off" result with the page to DIR (`iogate report` then shows it); the session of several
labs does that itself at its end.

Built from the results store, so a bake-off can be rebuilt at any time from
the runs it holds. Each run's labs are its columns (one per array). The first
column (or --reference) is the reference = 100. Runs
not judged by the same spec, profile, engine and engine version, or whose shared
run points ran different workloads, are refused with one line naming the
difference; what differs without changing the workload heads the report.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from iogate.results.bakeoff import build_bakeoff
from iogate.results.bakeoff_output import write_all
from iogate.results.bakeoff_session import run_of_results, session_bakeoff
from iogate.results.store import DEFAULT_STORE_PATH, ResultsStore, StoreError


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="iogate bakeoff", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--runs", nargs="+", metavar="RUN",
                       help="run ids to compare: two or more, or one run of several labs (each lab a column)")
    which.add_argument("--session", metavar="ALLURE_RESULTS",
                       help="the session that wrote these Allure results (its labs): the matrix also goes into them")
    parser.add_argument("--reference", default=None, metavar="RUN",
                        help="the reference (= 100): a run id, a lab name or a column label (default: the first column)")
    parser.add_argument("--store", default=str(DEFAULT_STORE_PATH), help="results SQLite (default .iogate/results.sqlite)")
    parser.add_argument("--out", default=None, help="output directory (default exports/<reference run>)")
    args = parser.parse_args(list(argv))
    store_path = Path(args.store)
    if not store_path.exists():
        raise StoreError(f"results store {store_path} does not exist (run the suite first)")
    if args.session:
        results = Path(args.session)
        run_id = run_of_results(results)
        out_dir = Path(args.out) if args.out else Path("exports") / run_id
        written, lines = session_bakeoff(store_path, run_id, results, out_dir, args.reference)
        for line in lines:
            print(line if written else f"iogate bakeoff: {line}")
        return 0 if written else 1
    bakeoff = build_bakeoff(ResultsStore(store_path), args.runs, args.reference)
    reference_run = next(c.run_id for c in bakeoff.contenders if c.label == bakeoff.reference)
    out = Path(args.out) if args.out else Path("exports") / reference_run
    for line in bakeoff.differences:
        print(f"differs (workload unchanged): {line}")
    for path in write_all(bakeoff, out):
        print(f"{path}: {len(bakeoff.rows)} row(s), {len(bakeoff.labels)} arrays, reference {bakeoff.reference}")
    return 0
