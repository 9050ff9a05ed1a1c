"""`iogate COMMAND` (or `python -m iogate COMMAND`): cleanup, percentiles, report, lab, labvm, export, vdbench-parse, parse.

`iogate --help` lists the commands; `iogate COMMAND --help` lists a command's options.
"""

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
    "bakeoff": "iogate.results.bakeoff_cli:main",
}

# One line per command for `iogate --help`; a command missing here shows its module's first docstring line.
SUMMARIES = {
    "cleanup": "remove what killed or crashed runs left behind (volumes, sessions, loop devices, processes)",
    "lab": "check a lab file before a run (lab check), or bring a netns lab up, down, or ask its status",
    "labvm": "build, boot and stop the qemu lab VM",
    "report": "build the Allure HTML report of a run",
    "export": "a run's points from the results store as CSV and XLSX",
    "percentiles": "completion-latency percentiles merged over fio json+ outputs",
    "vdbench-parse": "what IOGate reads from a vdbench output directory",
    "parse": "what IOGate reads from any fio output file or vdbench output directory, per job, host and run point",
    "bakeoff": "several arrays' runs of one spec side by side (% of a reference, best per row) as CSV, XLSX and HTML",
}


def _cleanup(argv: list[str]) -> int:
    from iogate.lab import load_lab
    from iogate.run.resources import cleanup

    parser = argparse.ArgumentParser(prog="iogate cleanup", description="Remove what killed or crashed runs left behind.")
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


def _summary(command: str) -> str:
    if command in SUMMARIES:
        return SUMMARIES[command]
    module = DELEGATED[command].partition(":")[0]
    try:
        doc = importlib.import_module(module).__doc__ or ""
    except ImportError:
        return ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def usage(commands: list[str]) -> str:
    width = max(len(c) for c in commands)
    lines = [
        f"usage: iogate {{{','.join(commands)}}} ...",
        "",
        "IOGate: storage performance acceptance on a lab (python -m iogate works the same).",
        "Runs themselves are pytest sessions: pytest tests --lab LAB --profile smoke|quick|full.",
        "",
        "commands:",
        *(f"  {c.ljust(width)}  {_summary(c)}" for c in commands),
        "",
        "options:",
        "  -h, --help  show this help and exit",
        "",
        "iogate COMMAND --help lists the options of a command; first: iogate lab check LAB_FILE",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = ["cleanup", *DELEGATED]
    if argv and argv[0] in ("-h", "--help"):
        print(usage(commands))
        return 0
    if not argv or argv[0] not in commands:
        print(usage(commands), file=sys.stderr)
        if argv:
            print(f"\niogate: unknown command {argv[0]!r}", file=sys.stderr)
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
    except SystemExit as exc:  # argparse: --help exits 0, a usage error 2
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)


if __name__ == "__main__":
    sys.exit(main())
