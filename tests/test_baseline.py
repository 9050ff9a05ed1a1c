"""The spine's acceptance test: 4 KiB random 70/30 on every volume of the lab.

Verdicts: every check of the spec's `baseline` family (criteria/poc.yaml: total
IOPS >= bound, p99 completion latency <= bound per direction, no I/O errors),
judged on the whole measured run after warmup, and the rules every family gets
(no_errors, no_stall), applied by the judge (iogate/judging/judge.py): a whole-run mean hides 10 s at 0 IOPS, the stall check does not.
"""

import allure
import pytest

from iogate.engines.workload import JobSpec, RunPlan, WorkloadSpec


@pytest.mark.baseline
@allure.epic("Spine")
@allure.feature("baseline")
@allure.story("4 KiB random 70/30 on the lab's volumes")
def test_baseline(lab, prefilled, connect, measure, judge, profile):
    workload = WorkloadSpec("rand70-4k", read_pct=70, random_pct=100, bs=4 << 10, iodepth=8,
                            runtime_s=profile.runtime_s, ramp_s=profile.ramp_s)
    allure.dynamic.parameter("protocol", lab.baseline)
    for key, value in workload.params().items():
        allure.dynamic.parameter(key, value)
    with allure.step(f"connect {len(prefilled)} volume(s) over {lab.baseline}"):
        jobs = tuple(JobSpec(v.name, workload, connect(lab.baseline, v, lab.spread(i))) for i, v in enumerate(prefilled))
    result = measure(RunPlan("baseline", jobs))
    judge.run("baseline", result)
