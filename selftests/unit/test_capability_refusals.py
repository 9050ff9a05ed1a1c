"""A test that needs a capability its array lacks is skipped with the driver's reason, not only the
capability's name (iogate.arrays.base.lacking): which lab option to set, or why the driver never offers it."""

from __future__ import annotations

from pathlib import Path

from iogate.arrays.base import Capability, lacking
from iogate.arrays.linux_target import LinuxTarget
from iogate.arrays.local import LocalArray
from iogate.lab import load_lab
from iogate.run import Run

ROOT = Path(__file__).resolve().parents[2]


def test_the_local_lab_names_why_it_has_no_mirror(tmp_path: Path) -> None:
    array = LocalArray(load_lab(ROOT / "labs/local.yaml"), Run.start(tmp_path, "local"))
    assert lacking(array, "local", [Capability.SNAPSHOT]) == ""
    assert lacking(array, "local", [Capability.MIRROR]) == (
        "array driver local lacks capability mirror: a loop device has no second leg to attach "
        "(the lab VM's linux_target mirrors over md RAID1)"
    )


def test_the_lab_vm_without_vdo_or_mirror_names_the_option_to_set(tmp_path: Path) -> None:
    lab = load_lab(ROOT / "labs/labvm.yaml")
    options = {**lab.array.options, "vdo": False, "mirror": False}
    array = LinuxTarget(lab.model_copy(update={"array": lab.array.model_copy(update={"options": options})}), Run.start(tmp_path, "t"))
    assert lacking(array, "linux_target", [Capability.DEDUPE, Capability.MIRROR]) == (
        "array driver linux_target lacks capability dedupe: the lab does not set array.options.vdo (volumes on dm-vdo); "
        "mirror: the lab does not set array.options.mirror (volumes as md RAID1)"
    )
    with_both = LinuxTarget(lab, Run.start(tmp_path / "b", "t"))  # labs/labvm.yaml sets vdo and mirror
    assert lacking(with_both, "linux_target", [Capability.DEDUPE, Capability.MIRROR]) == ""
