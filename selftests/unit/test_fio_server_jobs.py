"""Which of a fio server's processes run jobs (client_server.job_pids_in), from listings taken on the
netns lab with fio 3.33 (listener 16103, connection handler 16109, backend 16118, job 16120)."""

from __future__ import annotations

from iogate.engines.fio.client_server import job_pids_in

SERVER = "fio --server=ip:10.110.1.2,8765 --output=/var/tmp/iogate/runs/lab-netns-100/netns/h1/fio-server.log"
OTHER = "fio --server=ip:10.110.2.2,8765 --output=/var/tmp/iogate/runs/lab-netns-100/netns/h2/fio-server.log"


def _ps(*rows: tuple[int, int, str]) -> str:
    return "\n".join(f"{pid:>7} {ppid:>7} {args}" for pid, ppid, args in rows)


def test_a_connected_client_whose_job_has_not_begun_has_no_job_process() -> None:
    # 0.3 s after `fio --client`: only the connection handler below the listener.
    assert job_pids_in(_ps((16103, 1, SERVER), (16109, 16103, SERVER)), "10.110.1.2") == []


def test_a_backend_still_setting_up_its_jobs_has_none() -> None:
    assert job_pids_in(_ps((16103, 1, SERVER), (16109, 16103, SERVER), (16118, 16109, SERVER)), "10.110.1.2") == []


def test_the_job_processes_are_three_generations_below_the_listener() -> None:
    listing = _ps((16103, 1, SERVER), (16109, 16103, SERVER), (16118, 16109, SERVER), (16120, 16118, SERVER),
                  (16121, 16118, SERVER), (16200, 1, OTHER), (16201, 16200, OTHER), (16202, 16201, OTHER),
                  (16203, 16202, OTHER), (9, 1, "bash -c fio --server x"))
    assert job_pids_in(listing, "10.110.1.2") == [16120, 16121]
    assert job_pids_in(listing, "10.110.2.2") == [16203]


def test_an_idle_server_has_none() -> None:
    assert job_pids_in(_ps((16103, 1, SERVER)), "10.110.1.2") == []
