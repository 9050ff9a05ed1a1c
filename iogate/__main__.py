"""`python -m iogate COMMAND`: cleanup, percentiles, report, lab, labvm, export, vdbench-parse, parse."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from iogate.errors import IOGateError

# Subcommands that live in their own modules: name -> "module:function" taking argv.
DELEGATED = {
    "percentiles": "iogate.metrics.percentiles_cli:main",
    "report": "iogate.report:main",
    "lab": "iogate.lab.cli:main",
    "labvm": "iogate.labs.labvm.cli:main",
    "export": "iogate.results.cli:main",
    "vdbench-parse": "iogate.engines.vdbench.cli:main",
    "parse": "iogate.parse_cli:main",
}


def _cleanup(argv: list[str]) -> int:
    from iogate.lab import load_lab
    from iogate.run.resources import cleanup

    parser = argparse.ArgumentParser(prog="python -m iogate cleanup", description="Remove what killed or crashed runs left behind.")
    parser.add_argument("--lab", help="lab file whose workdir to clean (default: labs/local.yaml)")
    parser.add_argument("--workdir", help="work directory to clean (overrides the lab's)")
    parser.add_argument("--include-live", action="store_true", help="also runs whose process still lives")
    args = parser.parse_args(argv)
    workdir = Path(args.workdir) if args.workdir else Path(load_lab(args.lab).workdir)
    lines = cleanup(workdir, include_live=args.include_live)
    for line in lines:
        print(line)
    print(f"cleanup of {workdir}: {len(lines)} action(s)" if lines else f"cleanup of {workdir}: nothing left behind")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = ["cleanup", *DELEGATED]
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in commands:
        print(f"usage: python -m iogate {{{','.join(commands)}}} ...", file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    try:
        if command == "cleanup":
            return _cleanup(rest)
        module, _, function = DELEGATED[command].partition(":")
        return int(getattr(importlib.import_module(module), function)(rest))
    except IOGateError as exc:
        print(f"iogate {command}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
