"""The live feed's read of a remote host: only the lines the feed uses cross the wire.

fio's json+ status report is ~10 kB per job (latency bins, percentiles, job
options), of which the live feed (iogate/engines/fio/live.py) reads a handful of
numbers per job: `timestamp_ms`, `jobname`, `error`, `job_runtime`, `elapsed`
and per direction `total_ios` and `clat_ns.mean`. At 256 jobs a host sends
2.7 MB a second and the controller spends ~30 ms parsing each report
(selftests/bench/test_bench_live_feed.py). So on a remote host the new bytes of
fio's output file go through a filter there (GNU grep -b, then any POSIX awk:
mawk, gawk, busybox awk) that keeps the JSON's structure and those keys, and
drops every other line. fio prints one member per line, so the filter is
line-wise; the comma of a kept line whose object then ends is dropped so that
what arrives is still JSON the feed's own parser reads. A host without them
(busybox grep has no -b) is read unreduced, as before.

The filter only consumes whole lines whose comma it could settle: the line fio
is still writing (when it could still become a kept one), and a kept line ending
in a comma whose next kept line has not been written yet, are left for the next
read. The filter's last line says how many
bytes of the file it consumed; the caller's offset moves by that, never by the
length of what it received.
"""

from __future__ import annotations

import shlex

TRAILER = "#iogate-consumed "

# The members the live feed reads (live.StatusTail._take); "mean" also keeps slat/lat means: a few bytes.
KEPT_KEYS = ("timestamp_ms", "jobname", "error", "job_runtime", "elapsed", "total_ios", "mean")

# What grep passes on, as an extended regexp: a kept member, a line that opens an object or array, one that
# closes it, and every beginning of a member line before its value (`  "ke`, `  "key" : `): a line fio is still
# writing is then either passed on (and left for the next read) or one that can never be kept.
_KEEP = (r'^[[:space:]]*("(' + "|".join(KEPT_KEYS) + r')" *:|.*[{[]$|[]}],?$|("[^"]*("[[:space:]]*(:[[:space:]]*)?)?)?$)')
_GREP_FAILED = "#grep-failed"

# POSIX awk over grep -b's "<byte offset>:<line>" (grep does the sifting: half the host CPU of awk alone).
# `n`: the bytes of the read; a line that reaches past them has no newline yet: it and what follows wait.
_AWK = r"""
$0 == "GREP_FAILED" { failed = 1; exit }
{
  c = index($0, ":"); start = substr($0, 1, c - 1) + 0; line = substr($0, c + 1)
  if (start + length(line) + 1 > n) { partial = 1; exit }
  sub(/^[ \t]+/, "", line)
  if (line == "") next
  first = substr(line, 1, 1)
  if (held != "") {
    if (first == "}" || first == "]") sub(/,$/, "", held)
    print held; held = ""
  }
  if (substr(line, length(line), 1) == ",") { held = line; heldstart = start } else print line
}
END {
  if (failed) exit 3
  printf "\nTRAILER%d\n", held != "" ? heldstart : (partial ? start : n)
}
""".replace("TRAILER", TRAILER).replace("GREP_FAILED", _GREP_FAILED)


def read_command(path: str, offset: int) -> str:
    """The shell command that prints the reduced new lines of `path` from byte `offset`, then the trailer.

    Six short processes a read (wc, tail, head, grep, awk and sh). A grep that fails (busybox's has no -b)
    says so to awk, which then prints no trailer: the caller reads unreduced (an empty grep into awk would
    otherwise say every byte was consumed)."""
    return (f"f={shlex.quote(path)}; [ -f \"$f\" ] || {{ echo '{TRAILER}0'; exit 0; }}; "
            f"n=$(( $(wc -c < \"$f\") - {int(offset)} )); [ \"$n\" -gt 0 ] || {{ echo '{TRAILER}0'; exit 0; }}; "
            f"tail -c +{int(offset) + 1} \"$f\" | head -c \"$n\" "
            f"| {{ LC_ALL=C grep -a -b -E {shlex.quote(_KEEP)}; [ $? -le 1 ] || echo '{_GREP_FAILED}'; }} "
            f"| LC_ALL=C awk -v n=\"$n\" {shlex.quote(_AWK)}")


def split_reply(stdout: str) -> tuple[str, int] | None:
    """The reduced text and the bytes of the file it consumed; None when the reply has no trailer
    (the filter could not run there: the caller reads the file unreduced)."""
    body, sep, last = stdout.rstrip("\n").rpartition("\n")
    if not last.startswith(TRAILER):
        return None
    try:
        consumed = int(last[len(TRAILER):])
    except ValueError:
        return None
    return (body + "\n" if sep and body else ""), consumed
