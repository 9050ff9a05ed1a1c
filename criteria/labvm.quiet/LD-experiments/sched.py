"""LD-2's cause: is it the block layer's elevator, not fio's start order? The same 32 jobs as starve.py (vm001 at
offset 0 ... vm032 at 248 MiB, the highest LBAs), with every block device in the guest at its default I/O scheduler
and then at `none`. Per run: the schedulers in use, the jobs' I/O counts fewest first with their offsets (MiB).
A step is TARGET:WHICH[:rev] (rev: vm001 at the highest offset), WHICH one of default, none, none@PREFIX
(none only on queues whose name starts so)."""
import sys

from guest import Targets, ios, jobs_32, set_up

lab, run, array, guest = set_up()
steps = sys.argv[1:] or ["iscsi:default", "iscsi:none", "nvme-tcp:default", "nvme-tcp:none", "lv:default", "lv:none"]
SCHEDULERS = "for f in /sys/block/*/queue/scheduler; do d=${f%/queue/scheduler}; echo ${d#/sys/block/} $(cat $f); done"


def schedulers() -> dict[str, str]:
    """Each queue's scheduler in use (the bracketed one)."""
    found = (line.split() for line in guest.run(SCHEDULERS).stdout.splitlines())
    return {words[0]: next((w[1:-1] for w in words[1:] if w.startswith("[")), "-") for words in found if words}


defaults = schedulers()
print("defaults:", defaults, flush=True)


def set_all(which: str) -> None:
    """default | none (every queue) | none@PREFIX (only queues named PREFIX..., the rest at their default)."""
    chosen, _, prefix = which.partition("@")
    for queue, default in defaults.items():
        wanted = chosen if chosen != "default" and queue.startswith(prefix) else default
        guest.run_unchecked("echo %s > /sys/block/%s/queue/scheduler", wanted, queue)


def _offset_mib(n: int, rev: bool) -> int:
    return (32 - n) * 8 if rev else (n - 1) * 8


targets = Targets(lab, run, array, guest, "sc")
try:
    for i, step in enumerate(steps):
        target, which, *order = step.split(":")
        rev = order == ["rev"]  # vm001 at the highest offset: start order and LBA order apart
        with targets.device(target) as (dev, _volume):
            defaults = {**schedulers(), **defaults}  # the LUN just connected keeps its own default
            set_all(which)
            in_use = " ".join(f"{q}={s}" for q, s in schedulers().items() if not q.startswith(("loop", "ram")))
            _rc, data = jobs_32(guest, dev, lambda n, rev=rev: _offset_mib(n, rev))
            set_all("default")
        counts = sorted((ios(j), j["jobname"], _offset_mib(int(j["jobname"][2:]), rev)) for j in data["jobs"])
        print(f"{i} {step} [{in_use}]: fewest {counts[:3]} most {counts[-3:]} total {sum(n for n, _, _ in counts)}", flush=True)
finally:
    targets.close()
