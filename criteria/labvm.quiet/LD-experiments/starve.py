"""Finding: the protocols 32-VM point's last fio job got no I/O (iSCSI at depth 128 and NVMe/TCP, LD round 4).
32 fio jobs (4k randrw 75/25, iodepth 2, 8 MiB region each) on one volume, 5 s + 1 s ramp, straight over ssh:
per run the jobs' I/O counts, fewest first. Targets: iscsi, nvme-tcp, lv (the LV in the guest, no protocol)."""
import sys

from guest import Targets, ios, jobs_32, set_up

lab, run, array, guest = set_up()
steps = sys.argv[1:] or ["iscsi", "iscsi", "nvme-tcp", "nvme-tcp", "lv", "lv"]
targets = Targets(lab, run, array, guest, "st")
try:
    for i, target in enumerate(steps):
        with targets.device(target) as (dev, _):
            _rc, data = jobs_32(guest, dev, lambda n: (n - 1) * 8)
        counts = sorted((ios(j), j["jobname"], j["job_runtime"]) for j in data["jobs"])
        print(f"{i} {target} on {dev}: fewest {counts[:3]} most {counts[-1]}", flush=True)
finally:
    targets.close()
