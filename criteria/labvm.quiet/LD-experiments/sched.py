"""LD-2's cause: is it the block layer's elevator, not fio's start order? The same 32 jobs as starve.py (vm001 at
offset 0 ... vm032 at 248 MiB, the highest LBAs), with every block device in the guest at its default I/O scheduler
and then at `none`. Per run: the schedulers in use, the jobs' I/O counts fewest first with their offsets (MiB).
A step is TARGET:WHICH[:rev] (rev: vm001 at the highest offset), WHICH one of default, none, none@PREFIX
(none only on queues whose name starts so)."""
import json
import sys

from guest import set_up

from iogate.lab import registry
from iogate.run.resources import release_all

lab, run, array, guest = set_up()
steps = sys.argv[1:] or ["iscsi:default", "iscsi:none", "nvme-tcp:default", "nvme-tcp:none", "lv:default", "lv:none"]
SCHEDULERS = "for f in /sys/block/*/queue/scheduler; do d=${f%/queue/scheduler}; echo ${d#/sys/block/} $(cat $f); done"
defaults = {line.split()[0]: next(w[1:-1] for w in line.split()[1:] if w.startswith("["))
            for line in guest.run(SCHEDULERS).stdout.splitlines() if "[" in line}
print("defaults:", defaults, flush=True)


def set_all(which: str) -> None:
    """default | none (every queue) | none@PREFIX (only queues named PREFIX..., the rest at their default)."""
    chosen, _, prefix = which.partition("@")
    for queue, default in defaults.items():
        wanted = chosen if chosen != "default" and queue.startswith(prefix) else default
        guest.run_unchecked("echo %s > /sys/block/%s/queue/scheduler", wanted, queue)


def _offset_mib(n: int, rev: bool) -> int:
    return (32 - n) * 8 if rev else (n - 1) * 8


volumes = {}
try:
    for i, step in enumerate(steps):
        target, which, *order = step.split(":")
        rev = order == ["rev"]  # vm001 at the highest offset: start order and LBA order apart
        proto = "iscsi" if target == "lv" else target
        if proto not in volumes:
            volumes[proto] = array.create_volume(f"sc{proto.replace('-', '')}", 256 << 20, export=proto)
        volume = volumes[proto]
        connector = registry.connector_class(lab.protocol(proto).connector)(lab.protocol(proto), run)
        conn = connector.connect(guest, volume)
        dev = conn.filename if target != "lv" else array._owned(volume).device
        defaults.update({line.split()[0]: next(w[1:-1] for w in line.split()[1:] if w.startswith("["))
                         for line in guest.run(SCHEDULERS).stdout.splitlines() if "[" in line and line.split()[0] not in defaults})
        set_all(which)
        in_use = " ".join(f"{q}={s}" for q, s in ((ln.split()[0], next((w[1:-1] for w in ln.split()[1:] if w.startswith("[")), "-"))
                                                  for ln in guest.run(SCHEDULERS).stdout.splitlines()) if not q.startswith(("loop", "ram")))
        jobs = "".join(f"[vm{n:03d}]\noffset={_offset_mib(n, rev)}m\n" for n in range(1, 33))
        text = (f"[global]\ndirect=1\nioengine=libaio\nfilename={dev}\ntime_based=1\nruntime=5\nramp_time=1\nrw=randrw\n"
                f"rwmixread=75\nbs=4k\niodepth=2\nsize=8m\n{jobs}")
        guest.run("printf '%%s' %s > /root/sc.fio", text)
        out = guest.run("cd /root && fio --output-format=json sc.fio").stdout
        data = json.loads(out[out.index("{"):])
        ios = sorted((j["read"]["total_ios"] + j["write"]["total_ios"], j["jobname"], _offset_mib(int(j["jobname"][2:]), rev))
                     for j in data["jobs"])
        print(f"{i} {step} [{in_use}]: fewest {ios[:3]} most {ios[-3:]} total {sum(n for n, _, _ in ios)}", flush=True)
        set_all("default")
        connector.disconnect(guest, conn)
finally:
    for volume in volumes.values():
        array.delete_volume(volume)
    array.teardown()
    release_all(run.ledger)
