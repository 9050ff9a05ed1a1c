"""LD-2's cause, second look (sched.py: not the scheduler, not start order: the job at the highest offset starves,
whichever job that is). Does the last region run past the end of the exported LUN? Per target: the sizes of the
thin LV, the md RAID1 and the initiator's device, md's data offset, then the 32 jobs with 8 MiB regions (vm032 at
248-256 MiB) and with 7 MiB regions at the same offsets (vm032 at 248-255 MiB): vm032's fio record each time."""
import json
import sys

from guest import set_up

from iogate.lab import registry
from iogate.run.resources import release_all

lab, run, array, guest = set_up()
steps = sys.argv[1:] or ["iscsi:8", "iscsi:7", "nvme-tcp:8", "nvme-tcp:7", "lv:8", "lv:7"]
volumes = {}
try:
    for i, step in enumerate(steps):
        target, region_mib = step.split(":")
        proto = "iscsi" if target == "lv" else target
        if proto not in volumes:
            volumes[proto] = array.create_volume(f"sz{proto.replace('-', '')}", 256 << 20, export=proto)
        volume = volumes[proto]
        connector = registry.connector_class(lab.protocol(proto).connector)(lab.protocol(proto), run)
        conn = connector.connect(guest, volume)
        owned = array._owned(volume)
        dev = conn.filename if target != "lv" else owned.device
        sizes = guest.run("for d in %s %s %s; do echo $d $(blockdev --getsize64 $(readlink -f $d)); done; "
                          "mdadm --examine /dev/%s/%s | grep -i 'data offset'",
                          f"/dev/{array.vg}/{owned.lv}", owned.device, dev, array.vg, owned.lv).stdout
        print(f"{i} {step} volume.size_bytes={volume.size_bytes}:", " | ".join(sizes.strip().splitlines()), flush=True)
        jobs = "".join(f"[vm{n:03d}]\noffset={(n - 1) * 8}m\n" for n in range(1, 33))
        text = (f"[global]\ndirect=1\nioengine=libaio\nfilename={dev}\ntime_based=1\nruntime=5\nramp_time=1\nrw=randrw\n"
                f"rwmixread=75\nbs=4k\niodepth=2\nsize={region_mib}m\n{jobs}")
        guest.run("printf '%%s' %s > /root/sz.fio", text)
        result = guest.run_unchecked("cd /root && fio --output-format=json sz.fio")
        out = result.stdout
        data = json.loads(out[out.index("{"):])
        last = next(j for j in data["jobs"] if j["jobname"] == "vm032")
        rest = [j["read"]["total_ios"] + j["write"]["total_ios"] for j in data["jobs"] if j["jobname"] != "vm032"]
        print(f"   fio rc={result.rc} stderr={result.stderr.strip()[-300:]!r}", flush=True)
        print(f"   vm032: ios={last['read']['total_ios'] + last['write']['total_ios']} error={last['error']} "
              f"short={last['read'].get('short_ios')}/{last['write'].get('short_ios')} runtime={last['job_runtime']} "
              f"ctx={last['ctx']}; the other 31: {min(rest)}-{max(rest)}", flush=True)
        connector.disconnect(guest, conn)
finally:
    for volume in volumes.values():
        array.delete_volume(volume)
    array.teardown()
    release_all(run.ledger)
