"""VdbenchEngine: run a plan's jobs with vdbench, parse its output directory into a RunResult.

Same public interface as FioEngine (run_plan(plan, control)). Per plan: the
guard admits every target by identity first; the ledger journals the output
directory and the vdbench processes (every JVM, master and slaves, carries the
parmfile path on its command line through VDBENCH_JVM_OPTS, the marker
`iogate cleanup` kills by) before they exist. vdbench runs on the jobs' host
(as fio does: on a remote host in a working directory there, journalled and
removed once its output is fetched (iogate/hosts/workdir.py); on this machine inside a
private loopback-only network namespace, so the master's wildcard port 5570 is
never open on an outside address); a plan
spanning hosts runs one master in its own network namespace with hd= per host
(netns_master.py), or is refused without one. On the netns lab (hosts that are
namespaces of this machine, opener.py) the engine brings that master up at the
first plan needing it, reuses it, and tears it down in close(); a plan on one
such host runs through it too.

LoadControl: the measured phase starts where vdbench's averaged window starts
(see window.py and parmfile.py: after the ramp), read from the flatfile as
vdbench writes it; a stop request writes `end_vdbench` to the run's monitor
file, and vdbench ends after the current interval with full reports.
"""

from __future__ import annotations

import base64
import io
import math
import re
import shlex
import tarfile
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from testinfra.backend.base import CommandResult

from iogate.engines.base import HostEngine, LoadControl, with_targets
from iogate.engines.vdbench import errorlog, health, parmfile
from iogate.engines.vdbench.clock import Clock, clock_of
from iogate.engines.vdbench.flatfile import parse_rows, stats
from iogate.engines.vdbench.locate import vdbench_home
from iogate.engines.vdbench.netns_master import (
    MASTER_SUBNET_BASE,
    MasterNet,
    bring_up,
    planned_systems,
    private_namespace,
    rsh_marker,
    tear_down,
)
from iogate.engines.vdbench.outdir import parse_outdir, stopped_by_errors, to_run_result
from iogate.engines.vdbench.source import Line
from iogate.engines.workload import RunPlan
from iogate.errors import EngineError, HostError
from iogate.hosts import processes
from iogate.hosts.cgroup import join, join_cgroup_shell
from iogate.hosts.guard import Guard, distinct
from iogate.hosts.initiator import Initiator
from iogate.hosts.workdir import RemoteWorkdir
from iogate.lab import HostConfig
from iogate.metrics.types import ALL_JOBS, Dir, RunResult, Sample
from iogate.run import Run
from iogate.run.resources import marker_pids, release
from iogate.units import ms_to_ns

# JVM start, slave connect and report writing take ~5-10 s around the run itself.
GRACE_S = 120
# vdbench's first statistics request of a run reaches a just-started slave late (0.1 s, seen on one
# host over SSH and on a multi-host master), and vdbench divides every interval's I/O count by the
# nominal interval (CollectSlaveStats.storeSdStats): interval 2 then counts 0.9 s of I/O as a second
# and reads 10 % short (270 IOPS under a 300 IOPS cap, every later interval 300.00). A ramp lasts at
# least this many intervals, so the judged window never starts at that late request.
MIN_RAMP_INTERVALS = 2
RD_NAME = parmfile.RD_NAME


class VdbenchEngine(HostEngine):
    name = "vdbench"

    def __init__(self, run: Run, initiators: Mapping[str, Initiator], guard: Guard, vdbench_home: str | None = None,
                 tolerated_warnings: tuple[re.Pattern[str], ...] = (), master: MasterNet | None = None,
                 master_namespaces: Mapping[str, str] | None = None, master_subnet: int = MASTER_SUBNET_BASE) -> None:
        """`tolerated_warnings`: vdbench warnings that do not fail the run (see health.py); none by default.
        `master`: the master namespace for plans spanning hosts (netns_master.py), owned by the caller.
        `master_namespaces` (lab host -> its network namespace on this machine): without `master`, the
        engine brings one up over these at the first plan spanning hosts, reuses it for every later one
        and tears it down in close(). Plans spanning hosts without either are refused."""
        super().__init__(initiators, guard)
        self.run = run
        self.configured_home = vdbench_home
        self.tolerated_warnings = tolerated_warnings
        self.master = master
        self.master_namespaces = dict(master_namespaces or {})
        self.master_subnet = master_subnet
        self._own_master = False
        # Event tests run plans from threads: one bring-up, never two.
        self._master_lock = threading.Lock()
        self._master_run_lock = threading.Lock()
        self._versions: dict[str, str] = {}  # host -> the vdbench version its last output directory named

    def _master_systems(self, plan: RunPlan) -> Mapping[str, str]:
        if self.master is not None:
            return self.master.systems
        missing = [h for h in plan.hosts if h not in self.master_namespaces]
        if missing:
            raise parmfile.Unsupported(f"vdbench: run point {plan.name} spans hosts {plan.hosts}: multi-host vdbench needs a "
                                       f"master namespace (hd= over the netns lab); hosts {missing} are not network "
                                       "namespaces on this machine")
        return planned_systems(self.master_namespaces, self.master_subnet)

    def check_plan(self, plan: RunPlan) -> None:
        """Unsupported (naming vdbench, the workload and the field) when vdbench cannot express the plan; runs nothing."""
        systems = self._master_systems(plan) if self._through_master(plan) else None
        parmfile.render(plan.jobs, monitor_file="monitor", systems=systems, vdbench_home=self.configured_home or "")

    def _through_master(self, plan: RunPlan) -> bool:
        """A plan spanning hosts, or one on a host that is a namespace of this machine: the latter's
        slaves run there too (hd= with one host), the path proven for the netns lab, rather than a
        second master inside the lab's namespace reached over SSH."""
        return len(plan.hosts) > 1 or plan.hosts[0] in self.master_namespaces

    def _ensure_master(self) -> MasterNet:
        """The master namespace: the caller's, or the one this engine brought up (once) over the lab's namespaces."""
        with self._master_lock:
            if self.master is None:
                self.master = bring_up(self.run, self.master_namespaces, vdbench_home(self.configured_home),
                                       subnet_base=self.master_subnet)
                self._own_master = True
            return self.master

    def close(self) -> None:
        """Tear down the master namespace this engine brought up (its daemons and links with it); idempotent.
        The ledger journals all of it, so `iogate cleanup` removes it after a crash."""
        with self._master_lock:
            if self._own_master and self.master is not None:
                net, self.master, self._own_master = self.master, None, False
                tear_down(self.run, net)

    def facts(self) -> dict[str, str]:
        """`host.<name>.vdbench`: the version (vdbench-5.04.06) the output directories of that host's run points
        name (logfile.html); a host that has run no point yet has none (a bake-off then refuses: not recorded)."""
        return {f"host.{host}.vdbench": version for host, version in sorted(self._versions.items())}

    def run_plan(self, plan: RunPlan, control: LoadControl | None = None) -> RunResult:
        self.check_plan(plan)
        point = self._next_point(plan)
        for target in distinct(job.target for job in plan.jobs):
            self.guard.check(self._initiator(target.host), target)
        timed = vdbench_timed(plan)
        try:
            if self._through_master(timed):
                self._ensure_master()
                # One master at a time: every master listens on port 5570 of the one master namespace.
                with self._master_run_lock:
                    result = self._run_multi(timed, point, control)
            else:
                result = self._run_host(timed, point, self._initiator(plan.hosts[0]), control)
            return replace(result, jobs=with_targets(plan, result.jobs))
        finally:
            if control is not None:
                control.measuring()  # vdbench ended (or never ran): whatever waits must not hang

    def _run_host(self, plan: RunPlan, point: str, initiator: Initiator, control: LoadControl | None) -> RunResult:
        """vdbench on the jobs' one host, as fio runs there."""
        local_dir = self.run.path("points", point, initiator.name, "parm.vdb").parent
        work = str(local_dir) if initiator.is_local else RemoteWorkdir.path_for(self.run, point, initiator.name)
        if not initiator.is_local and not self.configured_home:
            raise EngineError(f"host {initiator.name}: no vdbench home configured for a remote host (the lab's vdbench "
                              "home names where vdbench is installed there)")
        home = vdbench_home(self.configured_home) if initiator.is_local else Path(str(self.configured_home))
        text = parmfile.render(plan.jobs, monitor_file=f"{work}/monitor")
        cgroups = {job.target.cgroup for job in plan.jobs if job.target.cgroup}
        if len(cgroups) > 1:
            raise EngineError(f"host {initiator.name}: jobs of one vdbench run span cgroups {sorted(cgroups)}")
        join = f"{join_cgroup_shell(cgroups.pop())} && " if cgroups else ""
        if not initiator.is_local:
            workdir = RemoteWorkdir(self.run, initiator, point)
            try:
                result = self._execute(plan, initiator, local_dir, workdir.path, text, home, control, prefix=join,
                                       jvm_opts="", job_hosts={}, hd_hosts={})
            except BaseException:
                workdir.remove(failing=True)
                raise
            workdir.remove()  # its output directory, console and parmfile are fetched into the run's
            return result
        # On this machine the master's port 5570 (wildcard address) stays inside a private,
        # loopback-only namespace; master and slaves talk over its lo, the devices are shared.
        namespace = private_namespace(self.run, point)
        try:
            return self._execute(plan, initiator, local_dir, work, text, home, control,
                                 prefix=f"{join}exec ip netns exec {shlex.quote(namespace.attrs['name'])} ",
                                 jvm_opts="", job_hosts={}, hd_hosts={})
        finally:
            release(self.run.ledger, [namespace])

    def _run_multi(self, plan: RunPlan, point: str, control: LoadControl | None) -> RunResult:
        """One master in its namespace on this machine, slaves on every host through their rsh daemons."""
        assert self.master is not None
        for host in plan.hosts:
            cgroups = {j.target.cgroup for j in plan.jobs if j.target.host == host and j.target.cgroup}
            if len(cgroups) > 1:
                raise EngineError(f"host {host}: jobs of one vdbench slave span cgroups {sorted(cgroups)}")
            if cgroups:
                # The rsh daemon forks this host's slaves: in the cgroup, they inherit it (and the
                # cgroup's remover moves whatever is left in it out before deleting it).
                cgroup = cgroups.pop()
                if not join(cgroup, marker_pids(rsh_marker(self.master, host)), f"host {host}"):
                    raise HostError(f"host {host}: no vdbench rsh daemon to move into {cgroup}")
        controller = Initiator.from_config(HostConfig(name="controller"))
        local_dir = self.run.path("points", point, "vdbench", "parm.vdb").parent
        work = str(local_dir)
        home = vdbench_home(self.configured_home)
        text = parmfile.render(plan.jobs, monitor_file=f"{work}/monitor", systems=self.master.systems, vdbench_home=str(home))
        prefix = f"exec ip netns exec {shlex.quote(self.master.namespace)} "
        return self._execute(plan, controller, local_dir, work, text, home, control, prefix=prefix,
                             jvm_opts=f"-Djdk.net.hosts.file={self.master.hosts_file} ",
                             job_hosts={parmfile.wd_name(j): j.target.host for j in plan.jobs},
                             hd_hosts={parmfile.safe_name(h): h for h in plan.hosts})

    def _execute(self, plan: RunPlan, initiator: Initiator, local_dir: Path, work: str, text: str, home: Path,
                 control: LoadControl | None, *, prefix: str, jvm_opts: str, job_hosts: dict[str, str],
                 hd_hosts: dict[str, str]) -> RunResult:
        jobs = plan.jobs
        parm, monitor, out = f"{work}/parm.vdb", f"{work}/monitor", f"{work}/out"
        (local_dir / "parm.vdb").write_text(text)
        initiator.run("mkdir -p %s", work)
        if not initiator.is_local:
            initiator.write_text(parm, text)
        limit_s = int(plan.duration_s) + GRACE_S
        verify = " -v" if parmfile.validates(jobs) else ""
        # java.io.tmpdir: vdbench's data-validation map files go there, not into /tmp.
        opts = f"{jvm_opts}-Djava.io.tmpdir={work}/tmp -Diogate.parmfile={parm}"
        # The console takes the shell's own words too: a failure before vdbench starts (a cgroup it
        # cannot join, no java or vdbench on the host) is then reported, not an empty output directory.
        command = (
            f"cd {shlex.quote(work)} && exec > console.txt 2>&1 && : > monitor && mkdir -p tmp && "
            f"{prefix}env VDBENCH_JVM_OPTS={shlex.quote(opts)} "
            f"timeout --kill-after=10 {limit_s} {shlex.quote(str(home / 'vdbench'))} -f {shlex.quote(parm)} "
            f"-o {shlex.quote(out)}{verify}"
        )
        journal = [processes.journal(self.run.ledger, initiator, f"vdbench on {initiator.name}", parm)]
        if initiator.is_local:
            journal.append(self.run.ledger.intend("dir", path=f"{work}/tmp"))
            journal.append(self.run.ledger.intend("dir", path=out))
        stop = threading.Event()
        steer = thread = None
        if control is not None:
            ramp_s = max(j.workload.ramp_s for j in jobs)
            steer = _Steer(initiator, f"{out}/flatfile.html", monitor, ramp_s, control, stop)
            thread = threading.Thread(target=steer.run, daemon=True)
            thread.start()
        done: CommandResult | None = None
        try:
            done = initiator.run_unchecked("sh -c %s", command)
        finally:
            stop.set()
            if thread is not None:
                thread.join()
            # vdbench has exited: its processes are gone, and its output directory is the
            # run's evidence from now on, kept (cleanup removes it only if we die before this).
            processes.ended(self.run.ledger, journal[0], initiator, exited_cleanly=done is not None and done.rc == 0)
            release(self.run.ledger, journal[1:2])  # the map files' tmp dir
            if len(journal) > 2:
                self.run.ledger.released(journal[2])
        console = initiator.run_unchecked("cat %s", f"{work}/console.txt").stdout
        (local_dir / "console.txt").write_text(console)
        logfile = initiator.run_unchecked("cat %s", f"{out}/logfile.html").stdout
        where = f"host {initiator.name} ({parm})"
        out_dir = Path(out) if initiator.is_local else self._fetch(initiator, out, local_dir / "out")
        errors = _product_errors(out_dir)
        if not errors:
            health.check(where, done.rc, console, logfile, stop_requested=bool(control and control.stop_requested),
                         tolerated=self.tolerated_warnings)
            if parmfile.single_pass(jobs) and parmfile.SEQUENTIAL_DONE not in console:
                raise EngineError(f"{where}: vdbench ended the single pass (seekpct=eof) of {sorted(j.name for j in jobs)} "
                                  f"before every region's end: its console lacks {parmfile.SEQUENTIAL_DONE!r}")
        try:
            output = parse_outdir(out_dir)
            for host in (set(job_hosts.values()) | set(hd_hosts.values())) or {initiator.name}:
                self._versions[host] = f"vdbench-{output.version.name}"
            stopped = any(label.split(" ")[0] == RD_NAME for label in output.stopped)
        except EngineError:
            if not errors:
                raise
            stopped = True
        if stopped:
            # vdbench stopped on the array's errors before writing its averages: a product failure.
            since = control.wait_measuring(0) if control is not None else None
            start_ms = since if since is not None else int(time.time() * 1000)
            failed = stopped_by_errors(out_dir, errors, [j.name for j in jobs],
                                       {j.name: j.target.host for j in jobs}, initiator.name, start_ms)
            return replace(failed, name=plan.name)
        points = [p for p in output.points if p.rd == RD_NAME]
        if len(points) != 1:
            raise EngineError(f"{where}: {len(points)} run points named {RD_NAME} in {out_dir}")
        names = {parmfile.wd_name(j): j.name for j in jobs}
        if len(jobs) == 1:
            names[RD_NAME] = jobs[0].name  # one wd: vdbench writes no wd report, the totals are the job
            job_hosts = {RD_NAME: jobs[0].target.host, **job_hosts}
        # The intervals after the ramp (parmfile.py: warmup=ramp+1), whatever vdbench's avg covered.
        ramp_intervals = math.ceil(max(j.workload.ramp_s for j in jobs))
        result = to_run_result(output, points[0], initiator.name, names, job_hosts, hd_hosts,
                               first_interval=ramp_intervals + 1)
        artifacts = dict(result.artifacts)
        artifacts[f"{initiator.name} vdbench parmfile"] = str(local_dir / "parm.vdb")
        artifacts[f"{initiator.name} vdbench console"] = str(local_dir / "console.txt")
        return replace(result, name=plan.name, artifacts=artifacts)

    def _fetch(self, initiator: Initiator, remote_dir: str, local_dir: Path) -> Path:
        """The host's output directory copied to local_dir; local_dir is left absent when vdbench made
        none (it failed before starting), so the console and exit code say why, as for a local run."""
        packed = initiator.run("if [ -d %s ]; then cd %s && tar -czf - . | base64 -w0; fi", remote_dir, remote_dir).stdout
        if not packed.strip():
            return local_dir
        local_dir.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(base64.b64decode(packed)), mode="r:gz") as archive:
            archive.extractall(local_dir, filter="data")
        return local_dir


def vdbench_timed(plan: RunPlan) -> RunPlan:
    """The plan as vdbench runs it: a ramp shorter than MIN_RAMP_INTERVALS (interval=1 s) lengthened
    to it, the measured runtime unchanged. No ramp stays none: every interval is then judged, the
    start-up included, as asked."""
    jobs = tuple(replace(j, workload=replace(j.workload, ramp_s=float(MIN_RAMP_INTERVALS)))
                 if 0 < j.workload.ramp_s < MIN_RAMP_INTERVALS else j for j in plan.jobs)
    return replace(plan, jobs=jobs)


def _product_errors(out_dir: Path) -> list[Line]:
    """errorlog.html's errors: vdbench then exits 157 and says so in its logs, but the failure is
    the array's (I/O errors, corrupted data), a verdict for no_io_errors, not a tool failure."""
    try:
        return errorlog.error_lines(out_dir / "errorlog.html")
    except EngineError:
        return []  # no error log at all: vdbench failed before the run; health.check says why


class _Steer:
    """The LoadControl's engine side: report the measurement start, stop on request.

    The averaged window starts with interval W = ceil(warmup) (parmfile.py renders
    warmup = ramp + 1, so W - 1 = ramp intervals), i.e. at the end of interval W - 1,
    whose flatfile row carries that moment (`tod`); with no ramp, one interval
    before the first row.
    """

    def __init__(self, initiator: Initiator, flatfile: str, monitor: str, ramp_s: float, control: LoadControl,
                 done: threading.Event) -> None:
        self.initiator = initiator
        self.flatfile = flatfile
        self.summary = str(Path(flatfile).parent / "summary.html")
        self.clock: Clock | None = None
        self.monitor = monitor
        self.row_before_window = math.ceil(ramp_s)  # 0: the window starts with interval 1
        self.control = control
        self.done = done

    def run(self) -> None:
        while not self.done.is_set() and self.control.wait_measuring(0) is None:
            since_ms = self._window_start_ms()
            if since_ms is not None:
                self.control.measuring(since_ms)
            elif self.done.wait(0.5):
                return
        published = self.row_before_window  # the last interval row fed to a live judge
        while not self.done.is_set():
            if self.control.wait_stop(0.2 if not self.control.wants_intervals else 1.0):
                self.initiator.run_unchecked("echo end_vdbench > %s", self.monitor)
                return
            if self.control.wants_intervals:
                published = self._publish(published)

    def _publish(self, after: int) -> int:
        """Feed the live judge the run's interval rows past `after` (totals only: the flatfile has no per-job rows)."""
        text = self.initiator.run_unchecked("cat %s 2>/dev/null", self.flatfile).stdout
        rows = [r for r in parse_rows(text, clock=self.clock) if r.run == RD_NAME and r.interval.isdigit() and int(r.interval) > after]
        samples = []
        for row in rows:
            figures = stats(row)
            for direction, iops, resp_ms in ((Dir.READ, figures.read_iops, figures.read_resp_ms),
                                             (Dir.WRITE, figures.write_iops, figures.write_resp_ms)):
                samples.append(Sample(row.t_ms, ALL_JOBS, ALL_JOBS, direction, iops, ms_to_ns(resp_ms) if iops else None))
        if samples:
            self.control.publish(ALL_JOBS, samples)  # every host's I/O in one row
        return max([after, *(int(r.interval) for r in rows)])

    def _window_start_ms(self) -> int | None:
        if self.clock is None or self.clock.zone is None:
            # summary.html's first lines place the flatfile's zone (clock.py): a lab's vdbench may run in another.
            head = self.initiator.run_unchecked("head -5 %s 2>/dev/null", self.summary).stdout
            self.clock = clock_of([Line(Path(self.summary), n, t) for n, t in enumerate(head.splitlines(), start=1)])
        text = self.initiator.run_unchecked("cat %s 2>/dev/null", self.flatfile).stdout
        rows = [r for r in parse_rows(text, clock=self.clock) if r.run == RD_NAME and r.interval.isdigit()]
        wanted = max(self.row_before_window, 1)
        row = next((r for r in rows if int(r.interval) == wanted), None)
        if row is None:
            return None
        return row.t_ms if self.row_before_window else row.t_ms - 1000
