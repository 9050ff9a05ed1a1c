"""Several labs in one session: `--lab a.yaml --lab b.yaml` runs the same tests on each, the lab first in every id.

A probe session (its own pytest, IOGate's options/parametrize/scheduling plugins, no provisioning) runs on the
embedded local lab and a copy named `other` with one protocol only; expected ids and orders written by hand:
- test_plain runs once per lab: test_plain[local], test_plain[other];
- test_proto once per protocol of *its* lab: [local-block], [local-nbd], [other-block] (not other-nbd);
- test_grid with per_lab values of its lab: local g0 g1, other g0 only;
- the session-scoped fixture that depends on the lab is set up once per lab, the first lab's torn down before
  the second's is set up (labs never overlap in one process), tests ordered lab by lab.
The session refuses labs judged by different specs or engines, and a lab name given twice, naming the difference.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures.session import LabSession, Suite, host_key
from iogate.judging.spec import load_spec
from iogate.lab import load_lab
from iogate.lab.profiles import resolve_profile
from plugins.options import lab_files
from plugins.scheduling import group_names

ROOT = Path(__file__).resolve().parents[2]
LOCAL = ROOT / "labs" / "local.yaml"

CONFTEST = 'pytest_plugins = ["plugins.options", "plugins.parametrize", "plugins.scheduling"]\n'
PROBE = '''
import os

import pytest

from fixtures.session import per_lab

LOG = os.environ["PROBE_LOG"]


def log(line):
    with open(LOG, "a") as out:
        out.write(line + "\\n")


def pytest_generate_tests(metafunc):
    if "grid" in metafunc.fixturenames:
        per_lab(metafunc, "grid", lambda s: [(f"g{i}", i) for i in range(2 if s.name == "local" else 1)])


@pytest.fixture(scope="session")
def lab_thing(lab):
    log(f"up {lab.name}")
    yield lab.name
    log(f"down {lab.name}")


def test_plain(lab_thing, lab):
    log(f"test_plain {lab.name}")
    assert lab_thing == lab.name


def test_proto(protocol, lab, lab_thing):
    log(f"test_proto {lab.name} {protocol}")
    assert protocol in [p.name for p in lab.protocols]


def test_grid(grid, lab, lab_thing):
    log(f"test_grid {lab.name} {grid}")
'''


def _other_lab(tmp_path: Path, *, criteria: str = "criteria/local.yaml", name: str = "other", engine: str = "") -> Path:
    text = LOCAL.read_text().replace("name: local\n", f"name: {name}\n", 1)
    text = text.replace("  - name: nbd\n    connector: nbd\n", "")  # one protocol only
    text = text.replace("criteria: criteria/local.yaml", f"criteria: {criteria}")
    if engine:
        text += f"engine: {engine}\n"
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def _probe(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_probe.py").write_text(PROBE)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PROBE_LOG": str(tmp_path / "log.txt")}
    return subprocess.run([sys.executable, "-m", "pytest", "test_probe.py", "-p", "no:cacheprovider", "-p", "no:randomly",
                           "--rootdir", str(tmp_path), "--results-db", str(tmp_path / "r.sqlite"), *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


def test_ids_name_the_lab_first_and_each_lab_gets_its_own_grid(tmp_path: Path) -> None:
    done = _probe(tmp_path, "--collect-only", "-q", "--lab", str(LOCAL), "--lab", str(_other_lab(tmp_path)))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ids = [line.split("::", 1)[1] for line in done.stdout.splitlines() if line.startswith("test_probe.py::")]
    assert ids == [
        "test_plain[local]", "test_proto[local-block]", "test_proto[local-nbd]", "test_grid[local-g0]", "test_grid[local-g1]",
        "test_plain[other]", "test_proto[other-block]", "test_grid[other-g0]",
    ]


def test_one_lab_still_names_its_lab(tmp_path: Path) -> None:
    done = _probe(tmp_path, "--collect-only", "-q", "--lab", str(LOCAL))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ids = [line.split("::", 1)[1] for line in done.stdout.splitlines() if line.startswith("test_probe.py::")]
    assert ids == ["test_plain[local]", "test_proto[local-block]", "test_proto[local-nbd]", "test_grid[local-g0]",
                   "test_grid[local-g1]"]


def test_labs_run_one_after_another_their_session_fixtures_once_each(tmp_path: Path) -> None:
    done = _probe(tmp_path, "-q", "-p", "no:xdist", "--lab", f"{LOCAL} {_other_lab(tmp_path)}")  # make accept LAB="a b"
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (tmp_path / "log.txt").read_text().splitlines() == [
        "up local", "test_plain local", "test_proto local block", "test_proto local nbd", "test_grid local 0",
        "test_grid local 1", "down local",
        "up other", "test_plain other", "test_proto other block", "test_grid other 0", "down other",
    ]


@pytest.mark.parametrize(("change", "says"), [
    ({"criteria": "criteria/poc.yaml"}, "refused: labs judged by different specs cannot be compared in one session: "
                                        "lab local "),
    ({"engine": "vdbench"}, "refused: labs driven by different engines cannot be compared in one session: lab local fio; "
                            "lab other vdbench"),
    ({"name": "local"}, "--lab: lab name local given twice"),
])
def test_a_session_refuses_labs_it_cannot_compare(tmp_path: Path, change: dict[str, str], says: str) -> None:
    done = _probe(tmp_path, "--collect-only", "-q", "--lab", str(LOCAL), "--lab", str(_other_lab(tmp_path, **change)))
    assert done.returncode == 4, done.stdout[-3000:] + done.stderr[-3000:]  # pytest's usage error: nothing ran
    assert says in done.stderr
    if "criteria" in change:
        assert "criteria/poc.yaml" in done.stderr and "criteria/local.yaml" in done.stderr


def test_lab_files_split_like_make_accept() -> None:
    assert lab_files(None) == [str(ROOT / "labs" / "local.yaml")]
    assert lab_files(["labs/local.yaml labs/local-btrfs.yaml", "c.yaml"]) == ["labs/local.yaml", "labs/local-btrfs.yaml", "c.yaml"]


def _session(name: str, hosts: list[dict[str, str]], driver: str = "static") -> LabSession:
    lab = load_lab(LOCAL).model_copy(update={"name": name})
    lab = lab.model_copy(update={"hosts": [lab.hosts[0].model_copy(update=h) for h in hosts],
                                 "array": lab.array.model_copy(update={"driver": driver})})
    return LabSession(lab=lab, spec=load_spec(ROOT / "criteria" / "local.yaml"), profile=resolve_profile("smoke", None))


def test_labs_sharing_a_host_are_one_group_disjoint_labs_another() -> None:
    a = _session("a", [{"name": "h1", "transport": "ssh://root@10.0.0.1"}])
    b = _session("b", [{"name": "x", "transport": "paramiko://root@10.0.0.1:2222"}])  # the same machine as a's h1
    c = _session("c", [{"name": "h3", "transport": "ssh://root@10.0.0.3"}])
    d = _session("d", [{"name": "n1", "transport": "local://", "namespace": "iogate-d1"}])
    suite = Suite(labs=(a, b, c, d), profile=a.profile, results_db=Path("r.sqlite"), baseline=None, run_id="r1")
    assert [[s.name for s in g] for g in suite.groups()] == [["a", "b"], ["c"], ["d"]]
    # Two local-array labs share this machine's CPUs whatever their hosts: one group.
    e = _session("local", [{"name": "localhost", "transport": "local://"}], driver="local")
    f = _session("local-btrfs", [{"name": "n1", "transport": "local://", "namespace": "iogate-f1"}], driver="local")
    pair = Suite(labs=(e, f), profile=e.profile, results_db=Path("r.sqlite"), baseline=None, run_id="r2")
    assert [[s.name for s in g] for g in pair.groups()] == [["local", "local-btrfs"]]


def test_a_lab_chain_joins_groups() -> None:
    """a shares with c, b with c: a, b and c are one group though a and b share nothing."""
    a = _session("a", [{"name": "h1", "transport": "ssh://root@h1"}])
    b = _session("b", [{"name": "h2", "transport": "ssh://root@h2"}])
    c = _session("c", [{"name": "h1", "transport": "ssh://root@h1"}, {"name": "h2", "transport": "ssh://root@h2"}])
    suite = Suite(labs=(a, b, c), profile=a.profile, results_db=Path("r.sqlite"), baseline=None, run_id="r1")
    assert [[s.name for s in g] for g in suite.groups()] == [["a", "b", "c"]]


def test_xdist_group_names() -> None:
    class Config:
        def __init__(self, suite: Suite) -> None:
            from fixtures.session import SUITE

            self.stash = pytest.Stash()
            self.stash[SUITE] = suite

    a = _session("a", [{"name": "h1", "transport": "ssh://root@h1"}])
    b = _session("b", [{"name": "h2", "transport": "ssh://root@h2"}])
    suite = Suite(labs=(a, b), profile=a.profile, results_db=Path("r.sqlite"), baseline=None, run_id="r1")
    assert group_names(Config(suite)) == {"a": "labs-a", "b": "labs-b"}  # type: ignore[arg-type]


def test_host_key() -> None:
    assert host_key("ssh://root@h1:22") == host_key("paramiko://root@h1") == "h1"
    assert host_key("local://") == "local://"
    assert host_key("local://", "iogate-n1") == "netns:iogate-n1"


def test_environment_of_several_labs_names_each_lab() -> None:
    from plugins.report import environment_values

    a = _session("a", [{"name": "h1", "transport": "ssh://root@h1"}])
    b = _session("b", [{"name": "h2", "transport": "ssh://root@h2"}])
    a.facts["host.h1.kernel"] = "6.1.0"
    b.facts["host.h2.kernel"] = "6.8.0"
    values = environment_values(Suite(labs=(a, b), profile=a.profile, results_db=Path("r.sqlite"), baseline=None, run_id="r9"))
    assert (values["labs"], values["iogate.run"], values["a: host.h1.kernel"], values["b: host.h2.kernel"]) == \
        ("a, b", "r9", "6.1.0", "6.8.0")
    assert values["a: criteria"] == values["b: criteria"] and "lab" not in values
    one = environment_values(Suite(labs=(a,), profile=a.profile, results_db=Path("r.sqlite"), baseline=None, run_id="r1"))
    assert (one["lab"], one["host.h1.kernel"], one["iogate.run"]) == ("a", "6.1.0", "r1")  # one lab: the keys as ever
