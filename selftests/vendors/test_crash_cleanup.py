"""A run SIGKILLed after provisioning on the array: `python -m iogate cleanup` (a fresh
process, credentials by reference from the environment) leaves nothing behind on the
array: no volume, host/igroup/subsystem, mapping or snapshot. One test per vendor driver."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from selftests.vendors.conftest import INITIATORS, PASSWORD_ENV
from selftests.vendors.server import ContractServer

pytestmark = pytest.mark.vendors
REPO = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from iogate.lab import ArrayConfig, HostConfig, Lab, ProtocolConfig
    from iogate.run import Run
    import importlib
    driver, cls, options, initiators, workdir = json.loads(sys.argv[1])
    module = importlib.import_module(f"iogate.arrays.{driver}")
    importlib.import_module("iogate.arrays.vendor_base").read_initiator_ids = lambda lab: initiators  # the drivers read them there
    lab = Lab(name="crash", array=ArrayConfig(name="crash", driver=driver, options=options),
              hosts=[HostConfig(name="h1")], protocols=[ProtocolConfig(name="iscsi", connector="iscsi")], workdir=workdir)
    run = Run.start(workdir, "crash")
    array = getattr(module, cls)(lab, run)
    array.setup()
    volume = array.create_volume("vol0", 1 << 30)
    array.create_volume("vol1", 1 << 30, export="nvme-tcp")
    array.snapshot_create(volume, "s1")
    print("provisioned", flush=True)
    time.sleep(600)
    """
)


def _powerstore(tmp_path: Path, canary: str) -> tuple[Any, Any, Callable[[Any], bool]]:
    from selftests.vendors.contract_md import PowerStoreContract
    from selftests.vendors.fake_powerstore import FakePowerStore

    fake = FakePowerStore("iogate", canary)
    empty = lambda f: not (f.volumes or f.hosts or f.mappings)  # noqa: E731
    return fake, PowerStoreContract(), empty


def _ontap(tmp_path: Path, canary: str) -> tuple[Any, Any, Callable[[Any], bool]]:
    from selftests.vendors.fake_ontap import FakeOntap
    from selftests.vendors.test_ontap import contract

    fake = FakeOntap("iogate", canary)
    empty = lambda f: not (any(f.objects.values()) or f.lun_maps or f.ns_maps or f.snapshots)  # noqa: E731
    return fake, contract(), empty


def _pure(tmp_path: Path, canary: str) -> tuple[Any, Any, Callable[[Any], bool]]:
    from selftests.vendors.fake_pure import FakePure
    from selftests.vendors.test_pure import contract

    fake = FakePure(canary)
    empty = lambda f: not (f.volumes or f.hosts or f.connections or f.snapshots)  # noqa: E731
    return fake, contract(), empty


def _huawei(tmp_path: Path, canary: str) -> tuple[Any, Any, Callable[[Any], bool]]:
    from selftests.vendors.fake_huawei import FakeHuawei, HuaweiContract
    from selftests.vendors.test_huawei import SERIAL, nothing_left

    return FakeHuawei("iogate", canary, serial=SERIAL), HuaweiContract(), lambda f: nothing_left(f) == {}


def _hitachi(tmp_path: Path, canary: str) -> tuple[Any, Any, Callable[[Any], bool]]:
    from selftests.vendors.fake_hitachi import FakeHitachi, HitachiContract
    from selftests.vendors.test_hitachi import nothing_left

    return FakeHitachi("iogate", canary), HitachiContract(), lambda f: nothing_left(f) == {}


# VAST (NVMe/TCP only) has its own: test_vast.py test_cleanup_after_sigkill_leaves_nothing_on_the_array.
CASES = {
    "powerstore": ("PowerStore", _powerstore, "PyPowerStore"),
    "ontap": ("Ontap", _ontap, "netapp_ontap"),
    "pure": ("Pure", _pure, "pypureclient"),
    "huawei": ("Huawei", _huawei, "requests"),
    "hitachi": ("Hitachi", _hitachi, "requests"),
}


@pytest.mark.parametrize("driver", sorted(CASES))
def test_cleanup_after_sigkill_leaves_nothing_on_the_array(driver: str, tmp_path: Path, canary: str) -> None:
    cls, make, sdk = CASES[driver]
    pytest.importorskip(sdk, reason="vendor SDK not installed: pip install -r requirements-vendors.txt")
    fake, contract, empty = make(tmp_path, canary)
    workdir = tmp_path / "work"
    with ContractServer(fake, contract, tmp_path) as server:
        from selftests.vendors.test_hitachi import options as hitachi_options
        from selftests.vendors.test_huawei import options as huawei_options
        from selftests.vendors.test_ontap import options as ontap_options
        from selftests.vendors.test_powerstore import options as powerstore_options
        from selftests.vendors.test_pure import options as pure_options

        options = {"powerstore": powerstore_options, "ontap": ontap_options, "pure": pure_options, "huawei": huawei_options,
                   "hitachi": hitachi_options}[driver](server)
        options = {k: v for k, v in options.items() if k not in ("protection_policy_id", "protection_group")}
        env = {**os.environ, PASSWORD_ENV: canary}
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, json.dumps([driver, cls, options, INITIATORS, str(workdir)])],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            line = child.stdout.readline() if child.stdout else ""
            assert line.strip() == "provisioned", child.stderr.read() if child.stderr else ""
            assert not empty(fake)
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
        done = subprocess.run(
            [sys.executable, "-m", "iogate", "cleanup", "--workdir", str(workdir)],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert empty(fake), f"left on the array after cleanup: {fake.__dict__}"
        assert canary not in done.stdout + done.stderr
        assert server.violations == [], "\n".join(server.violations)
