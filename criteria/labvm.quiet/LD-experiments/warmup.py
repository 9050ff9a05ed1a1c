"""Finding 3 / queue depth experiment on one lab VM (`labvm up --workdir /var/tmp/iogate-exp --port 10122`):
one iSCSI LUN, fio straight over one ssh command (no controller activity during the run), per-second IOPS.
Steps: argv like 128:plain 128:plain 32:plain 32:plain 128:plain (queue depth : variant)."""
import sys

from guest import set_up

from iogate.lab import registry
from iogate.run.resources import release_all

lab, run, array, guest = set_up()
volume = array.create_volume("exp", 256 << 20, export="iscsi")
VERIFY = """[verify]
rw=randwrite
bs=4k
iodepth=1
size=32m
offset=224m
rate_iops=50,50
rate_process=linear
verify=crc32c
verify_backlog=64
verify_fatal=0
"""
filled = False
steps = sys.argv[1:] or ["128:plain", "128:plain", "32:plain", "32:plain", "128:plain"]
try:
    for i, step in enumerate(steps):
        depth, variant = step.split(":")
        base = lab.protocol("iscsi")
        protocol = base.model_copy(update={"options": {**base.options, "node_settings": {"node.session.queue_depth": depth}}})
        connector = registry.connector_class(protocol.connector)(protocol, run)
        conn = connector.connect(guest, volume)
        dev = conn.filename
        seen = guest.run("cat /sys/block/$(basename $(readlink -f %s))/device/queue_depth", dev).stdout.strip()
        if not filled:
            guest.run("fio --name=fill --filename=%s --rw=write --bs=256k --direct=1 --ioengine=libaio --iodepth=8 >/dev/null", dev)
            filled = True
        name = f"r{i}-q{depth}-{variant}"
        rw = "randread" if variant == "read" else "randwrite"
        text = (f"[global]\ndirect=1\nlog_avg_msec=1000\nlog_unix_epoch=1\nper_job_logs=1\nioengine=libaio\nfilename={dev}\n"
                f"time_based=1\nruntime=20\nramp_time=1\n[load]\nrw={rw}\nbs=4k\niodepth=8\nsize=8m\nwrite_iops_log=/root/{name}\n"
                + (VERIFY if variant == "verify" else ""))
        guest.run("printf '%%s' %s > /root/job.fio", text)
        guest.run("cd /root && fio --output-format=json --output=%s.json job.fio", name)
        out = guest.run("cat /root/%s_iops.1.log", name).stdout
        by: dict[int, int] = {}
        for line in out.splitlines():
            t, iops = line.split(",")[:2]
            by[int(t) // 1000] = by.get(int(t) // 1000, 0) + int(iops)
        series = [by[t] for t in sorted(by)]
        print(f"{name} device queue_depth {seen}: mean {sum(series) / len(series):.0f} first5 {sum(series[:5]) / 5:.0f} "
              f"last5 {sum(series[-5:]) / 5:.0f} | {' '.join(map(str, series))}", flush=True)
        connector.disconnect(guest, conn)
finally:
    array.delete_volume(volume)
    array.teardown()
    release_all(run.ledger)
