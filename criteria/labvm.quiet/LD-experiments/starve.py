"""Finding: the protocols 32-VM point's last fio job got no I/O (iSCSI at depth 128 and NVMe/TCP, LD round 4).
32 fio jobs (4k randrw 75/25, iodepth 2, 8 MiB region each) on one volume, 5 s + 1 s ramp, straight over ssh:
per run the jobs' I/O counts, fewest first. Targets: iscsi, nvme-tcp, lv (the LV in the guest, no protocol)."""
import json
import sys

from guest import set_up

from iogate.lab import registry
from iogate.run.resources import release_all

lab, run, array, guest = set_up()
steps = sys.argv[1:] or ["iscsi", "iscsi", "nvme-tcp", "nvme-tcp", "lv", "lv"]
volumes = {}
try:
    for i, target in enumerate(steps):
        proto = "iscsi" if target == "lv" else target
        if proto not in volumes:
            volumes[proto] = array.create_volume(f"st{proto.replace('-', '')}", 256 << 20, export=proto)
        volume = volumes[proto]
        protocol = lab.protocol(proto)
        connector = registry.connector_class(protocol.connector)(protocol, run)
        conn = connector.connect(guest, volume)
        dev = conn.filename
        if target == "lv":
            dev = array._owned(volume).device  # the md RAID1 (or LV) the target exports
        jobs = "".join(f"[vm{n:03d}]\noffset={(n - 1) * 8}m\n" for n in range(1, 33))
        text = (f"[global]\ndirect=1\nioengine=libaio\nfilename={dev}\ntime_based=1\nruntime=5\nramp_time=1\nrw=randrw\n"
                f"rwmixread=75\nbs=4k\niodepth=2\nsize=8m\n{jobs}")
        guest.run("printf '%%s' %s > /root/st.fio", text)
        out = guest.run("cd /root && fio --output-format=json st.fio").stdout
        data = json.loads(out[out.index("{"):])
        ios = sorted((j["read"]["total_ios"] + j["write"]["total_ios"], j["jobname"], j["job_runtime"]) for j in data["jobs"])
        print(f"{i} {target} on {dev}: fewest {ios[:3]} most {ios[-1]}", flush=True)
        connector.disconnect(guest, conn)
finally:
    for volume in volumes.values():
        array.delete_volume(volume)
    array.teardown()
    release_all(run.ledger)
