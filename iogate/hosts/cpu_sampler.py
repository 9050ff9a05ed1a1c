"""A per-second /proc/stat sampler on a lab host, over a run point (iogate/metrics/cpu_window.py).

One bash process per host and point, started before the engine and stopped after it; it forks
nothing per sample (bash's own `read` of /proc/stat, $EPOCHREALTIME, `read -t 1` on a FIFO as
its clock; `date` only under bash < 5), so it costs the host next to nothing while the engine
measures. It ends by itself after max_s samples: a sampler a crashed run left behind dies on its
own as well as by the journal (iogate/hosts/processes.py, marker: its output path).

Given block devices' stat files, it reads those too with the same clock, one line each
(`<epoch us> dev <index> <fields>`): the live feed of a client/server point
(iogate/metrics/device_feed.py). The CPU lines are unchanged (cpu_window.parse_samples skips the rest).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from iogate.errors import HostError
from iogate.hosts import processes
from iogate.hosts.initiator import Initiator
from iogate.metrics.cpu_window import CpuSample, parse_samples
from iogate.run.ledger import Entry, Ledger

# $1 = the output path (the marker), $2 = how many samples at most, then the device stat files to read.
SCRIPT = (
    'f="$1.fifo"; m="$2"; shift 2; rm -f "$f"; mkfifo "$f" && exec 9<>"$f" || exit 1; n=0; '
    'while [ "$n" -lt "$m" ]; do read -r l </proc/stat; t=${EPOCHREALTIME:-}; t=${t/[.,]/}; '
    '[ -n "$t" ] || t=$(date +%s%6N); printf "%s %s\\n" "$t" "$l"; '
    'i=0; for p in "$@"; do read -r d <"$p" && printf "%s dev %s %s\\n" "$t" "$i" "$d"; i=$((i+1)); done; '
    'n=$((n+1)); read -t 1 -u 9 _ || :; done; rm -f "$f"'
)


@dataclass
class CpuSampler:
    host: Initiator
    path: str
    entry: Entry

    @classmethod
    def start(cls, ledger: Ledger, host: Initiator, path: str, max_s: float, devices: Sequence[str] = ()) -> CpuSampler:
        """Start sampling into `path` on the host (its directory exists), for at most max_s seconds; `devices`:
        block stat files (/sys/class/block/<dev>/stat) read each second too, numbered in this order."""
        entry = processes.journal(ledger, host, "cpu sampler", path)
        q = shlex.quote  # the script holds printf's % signs: the line is built here, not by run()'s % args
        stats = "".join(f" {q(device)}" for device in devices)
        host.run(f"nohup bash -c {q(SCRIPT)} iogate-cpu-sampler {q(path)} {int(max_s) + 1}{stats} > {q(path)} 2>/dev/null < /dev/null &")
        return cls(host, path, entry)

    def finish(self, ledger: Ledger) -> list[CpuSample]:
        """Stop the sampler and read what it wrote ([] where the host could not be read: the caller keeps
        the whole point's figure)."""
        try:
            # The path split in two: this shell's own command line must not carry the marker the kill looks for.
            folder, name = (shlex.quote(part) for part in self.path.rsplit("/", 1))
            text = self.host.run(f"{processes.kill_script(self.path)}; d={folder}; n={name}; "
                                 'cat "$d/$n"; rm -f "$d/$n" "$d/$n.fifo"', attempts=1).stdout
        except HostError:
            processes.ended(ledger, self.entry, self.host, exited_cleanly=False)
            return []
        ledger.released(self.entry)
        return parse_samples(text)

    def abandon(self, ledger: Ledger) -> None:
        """The host is lost: no command goes to it. A sampler that shares this machine's processes (local,
        netns) is killed here; one on a remote host stays journalled for the teardown or `iogate cleanup`
        (it also ends by itself after its max_s)."""
        if processes.shares_processes(self.host):
            processes.ended(ledger, self.entry, self.host, exited_cleanly=False)
