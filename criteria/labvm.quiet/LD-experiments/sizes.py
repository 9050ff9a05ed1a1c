"""LD-2's cause, second look (sched.py: not the scheduler, not start order: the job at the highest offset starves,
whichever job that is). Does the last region run past the end of the exported LUN? Per target: the sizes of the
thin LV, the md RAID1 and the initiator's device, md's data offset, then the 32 jobs with 8 MiB regions (vm032 at
248-256 MiB) and with 7 MiB regions at the same offsets (vm032 at 248-255 MiB): vm032's fio record each time."""
import sys

from guest import Targets, ios, jobs_32, set_up

lab, run, array, guest = set_up()
steps = sys.argv[1:] or ["iscsi:8", "iscsi:7", "nvme-tcp:8", "nvme-tcp:7", "lv:8", "lv:7"]
targets = Targets(lab, run, array, guest, "sz")
try:
    for i, step in enumerate(steps):
        target, region_mib = step.split(":")
        with targets.device(target) as (dev, volume):
            owned = array._owned(volume)
            sizes = guest.run("for d in %s %s %s; do echo $d $(blockdev --getsize64 $(readlink -f $d)); done; "
                              "mdadm --examine /dev/%s/%s | grep -i 'data offset'",
                              f"/dev/{array.vg}/{owned.lv}", owned.device, dev, array.vg, owned.lv).stdout
            print(f"{i} {step} volume.size_bytes={volume.size_bytes}:", " | ".join(sizes.strip().splitlines()), flush=True)
            rc, data = jobs_32(guest, dev, lambda n: (n - 1) * 8, int(region_mib))
        last = next(j for j in data["jobs"] if j["jobname"] == "vm032")
        rest = [ios(j) for j in data["jobs"] if j["jobname"] != "vm032"]
        print(f"   fio rc={rc}", flush=True)
        print(f"   vm032: ios={ios(last)} error={last['error']} short={last['read'].get('short_ios')}/{last['write'].get('short_ios')} "
              f"runtime={last['job_runtime']} ctx={last['ctx']}; the other 31: {min(rest)}-{max(rest)}", flush=True)
finally:
    targets.close()
