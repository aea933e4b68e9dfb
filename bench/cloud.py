"""``python -m bench.cloud``: heat_lite's cost per server on a real cloud.

A ResourceGroup of ``--count`` (20) OS::Nova::Server is created, resized
(``flavor`` changed: resize and confirm in place) and deleted by
heat-lite-all (noauth, SQLite, 2 engine workers) acting in the test
cloud (``tools.minicloud``) as its ``demo`` user; then the same is done
to the same number of servers with openstacksdk directly, all at once,
polled every 0.2 s, which is the cloud's own time. The difference per
server is what heat_lite adds. Each phase is timed from the request to
the moment the stack reports COMPLETE (for heat_lite; for the direct
runs, until the last server is ACTIVE / VERIFY_RESIZE confirmed / gone),
``--rounds`` times, heat_lite and direct in alternation so that the
noise of the machine falls on both. Each phase also records the CPU
seconds of heat_lite's processes and of the cloud's (every process of
each one's sessions, from /proc), which the neighbours on a shared
machine do not inflate as they do wall time, and the load average when
it ended. Results go to ``doc/bench/cloud.json`` and
``doc/bench/cloud.md``, with the commit, the machine and its load
(``bench.machine``).

The cloud: ``HEAT_LITE_TEST_CLOUD=<dir>`` (a cloud started by hand) or
one started for the run and stopped at its end.

``--keystone`` runs heat_lite as operators run it in keystone mode
instead: heat-lite-api behind keystonemiddleware and ``heat-lite-engine
--workers 2`` on PostgreSQL and RabbitMQ, acting through a Keystone trust
from ``demo`` (who drives it with its own token), polling at its default
``[openstack] poll_interval``. Every phase also counts the cloud API
requests made during it, by service, from the services' access logs
(``<cloud>/log/<service>-access.log``): in heat_lite's phases they are
heat_lite's own (the benchmark asks nothing of the cloud meanwhile), in
the direct ones the direct client's. ``--profile DIR`` records the engine
workers with py-spy during the first create (collapsed stacks in DIR), or,
where py-spy is not installed, with yappi (CPU clock, every thread; the
functions' and the threads' CPU seconds in DIR/yappi-<pid>.txt, see
``bench/engine_profile/sitecustomize.py``).
"""

import argparse
import collections
import datetime
import glob
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

from heatclient import client as heat_client
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

from bench import cli, machine
from harness import cloud as cloud_mod
from harness import deployment as deployment_mod
from harness import helpers, procs
from heat_lite.resources import transient
from tools.minicloud import cloud as mc_cloud
from tools.minicloud import heat_lite as heat_lite_mod
from tools.minicloud import layout, seed

POLL = 0.2
PHASES = ("create", "resize", "delete")


def _template(cloud, count, flavor):
    return helpers.template(
        {
            "group": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {
                    "count": count,
                    "resource_def": {
                        "type": "OS::Nova::Server",
                        "properties": {
                            "image": cloud.image,
                            "flavor": flavor,
                            "networks": [{"network": cloud.network}],
                        },
                    },
                },
            }
        }
    )


def _read(ask, *args, tries=10):
    """``ask(*args)``, asked again when the cloud does not answer (a reset
    keep-alive connection): the direct runs' reads retry as heat_lite's
    polls do (``transient``), so that a reset does not end the run."""
    for attempt in range(tries):
        try:
            return ask(*args)
        except Exception as exc:
            if attempt == tries - 1 or not transient.is_transient(exc):
                raise
            time.sleep(POLL)
    return None


def _wait(done, timeout=900):
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise RuntimeError("not done after %ss" % timeout)
        time.sleep(POLL)


def session_cpu(sids):
    """CPU seconds (user + system, with reaped children) of every
    process whose session is one of ``sids``."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for _pid, fields in procs.proc_stats():
        if int(fields[3]) in sids:
            total += sum(int(x) for x in fields[11:15])
    return total / ticks


class AccessLogs:
    """The cloud's access logs (one line a request, see
    ``tools.minicloud.processes.gunicorn``): how many requests of API
    clients (heat_lite's processes, openstacksdk, keystoneauth1: the
    direct client's; not the services' own to each other, nor their token
    validations) each service has answered so far."""

    # The user agents of heat_lite's engines and API (named after their
    # program) and of the direct client.
    CLIENTS = ('"heat-lite-', '"openstacksdk/', '"keystoneauth1/')

    def __init__(self, lay):
        self.pattern = lay.path("log", "*-access.log")

    def counts(self):
        """{service: requests so far, "tokens": token requests}."""
        counts = collections.Counter()
        for path in glob.glob(self.pattern):
            service = os.path.basename(path)[: -len("-access.log")]
            with open(path, errors="replace") as f:
                for line in f:
                    if not any(c in line for c in self.CLIENTS):
                        continue
                    counts[service] += 1
                    if '"POST /v3/auth/tokens ' in line:
                        counts["tokens"] += 1
        return dict(counts)

    @staticmethod
    def since(before, after):
        return {
            service: after[service] - before.get(service, 0)
            for service in sorted(after)
            if after[service] > before.get(service, 0)
        }


def db_transactions(dep):
    """A function giving the transactions (commits and rollbacks) the
    deployment's PostgreSQL database has seen so far (from
    ``pg_stat_database``, which lags by up to a second), or None for
    another database."""
    import configparser

    import sqlalchemy as sa

    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.read(dep.config)
    url = sa.engine.make_url(parser.get("database", "connection"))
    if not url.drivername.startswith("postgresql"):
        return None
    name = url.database

    def count():
        engine = sa.create_engine(url.set(database="postgres"))
        try:
            with engine.connect() as conn:
                time.sleep(1)  # pg_stat_database is flushed ~1 s late
                return conn.execute(
                    sa.text(
                        "SELECT xact_commit + xact_rollback "
                        "FROM pg_stat_database WHERE datname = :name"
                    ),
                    {"name": name},
                ).scalar()
        finally:
            engine.dispose()

    return count


class Meter:
    """Times the phases of one round: wall seconds, CPU seconds of
    heat_lite's and the cloud's sessions, the cloud API requests by
    service, the load average at the end."""

    def __init__(
        self, heat_sids, cloud_sids, logs=None, engine_sids=(), db=None
    ):
        self.heat_sids = set(heat_sids)
        self.db = db  # db_transactions' (taken outside the timed span)
        self.cloud_sids = set(cloud_sids)
        # The engine's alone (heat_sids also hold the API's).
        self.engine_sids = set(engine_sids)
        self.logs = logs
        self.record = {}

    def start(self):
        db = self.db() if self.db else 0
        self._began = (
            time.monotonic(),
            session_cpu(self.heat_sids),
            session_cpu(self.cloud_sids),
            self.logs.counts() if self.logs else {},
            session_cpu(self.engine_sids),
            db,
        )

    def stop(self, phase):
        wall, heat_cpu, cloud_cpu, requests_before, engine_cpu, db = (
            self._began
        )
        self.record[phase] = {
            "wall_s": round(time.monotonic() - wall, 2),
            "heat_lite_cpu_s": round(
                session_cpu(self.heat_sids) - heat_cpu, 2
            ),
            "cloud_cpu_s": round(session_cpu(self.cloud_sids) - cloud_cpu, 2),
            "load_average": machine.load_average(),
        }
        if self.engine_sids:
            self.record[phase]["engine_cpu_s"] = round(
                session_cpu(self.engine_sids) - engine_cpu, 2
            )
        if self.db:
            self.record[phase]["db_transactions"] = self.db() - db
        if self.logs:
            self.record[phase]["requests"] = AccessLogs.since(
                requests_before, self.logs.counts()
            )


def _py_spy():
    """py-spy's path, or None when it is not installed."""
    spy = shutil.which("py-spy") or os.path.join(
        os.path.dirname(os.path.abspath(os.sys.executable)), "py-spy"
    )
    return spy if os.path.exists(spy) else None


def profile_env(out_dir):
    """The environment that lets the engine processes record themselves
    with yappi (``bench/engine_profile``) when py-spy is missing: {} when
    no profile is asked or py-spy will record."""
    if not out_dir or _py_spy():
        return {}
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)))
    path = [os.path.join(here, "engine_profile")]
    if os.environ.get("PYTHONPATH"):
        path.append(os.environ["PYTHONPATH"])
    os.makedirs(out_dir, exist_ok=True)
    return {
        "PYTHONPATH": os.pathsep.join(path),
        "HEAT_LITE_YAPPI_DIR": os.path.abspath(out_dir),
    }


class Profiler:
    """py-spy recording the engine workers (collapsed stacks, one file
    a worker) while a phase runs, or yappi inside them (``profile_env``);
    nothing when no directory is given."""

    def __init__(self, out_dir, pids):
        self.out_dir = out_dir
        self.pids = list(pids)
        self.procs = []
        self.yappi = bool(out_dir) and not _py_spy()

    def __enter__(self):
        if not self.out_dir:
            return self
        os.makedirs(self.out_dir, exist_ok=True)
        if self.yappi:
            open(os.path.join(self.out_dir, "start"), "w").close()
            time.sleep(1)  # the watchers look every 0.2 s
            return self
        spy = _py_spy()
        for pid in self.pids:
            out = os.path.join(self.out_dir, "engine-%d.txt" % pid)
            self.procs.append(
                subprocess.Popen(
                    [
                        spy,
                        "record",
                        "--pid",
                        str(pid),
                        "--format",
                        "raw",
                        "--rate",
                        "100",
                        "--nonblocking",
                        "--output",
                        out,
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        time.sleep(1)  # attached before the phase starts
        return self

    def __exit__(self, *exc):
        if self.yappi and self.out_dir:
            open(os.path.join(self.out_dir, "stop"), "w").close()
            _wait(
                lambda: all(
                    os.path.exists(
                        os.path.join(self.out_dir, "yappi-%d.txt" % pid)
                    )
                    for pid in self.pids
                ),
                timeout=120,
            )
        for proc in self.procs:
            proc.send_signal(2)  # SIGINT: py-spy writes what it has
        for proc in self.procs:
            proc.wait(timeout=60)
        self.out_dir = None


def heat_round(
    dep, cloud, conn, count, meter, heat=None, profile=None, idle=0
):
    """{phase: measures} for one ResourceGroup through heat_lite; with
    ``idle`` (seconds), first an ``idle`` phase of that length in which
    nothing is asked of heat_lite: what its processes cost by themselves
    (timers, heartbeats), which the phases' CPU seconds include."""
    heat = heat or dep.client()
    if idle:
        meter.start()
        time.sleep(idle)
        meter.stop("idle")
    meter.start()
    with Profiler(profile, dep.engine_pids() if profile else ()):
        stack_id = heat.stacks.create(
            stack_name="bench-cloud",
            template=_template(cloud, count, seed.FLAVOR),
        )["stack"]["id"]
        helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=900)
    meter.stop("create")
    meter.start()
    heat.stacks.update(
        stack_id, template=_template(cloud, count, seed.FLAVOR_BIG)
    )
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=900)
    meter.stop("resize")
    big = conn.compute.find_flavor(seed.FLAVOR_BIG)
    servers = [s for s in conn.compute.servers() if s.name.startswith("bench")]
    assert len(servers) == count, servers
    assert all(s.flavor.name == big.name for s in servers)
    meter.start()
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=900)
    meter.stop("delete")
    _wait(lambda: not list(conn.compute.servers()))
    return meter.record


def direct_round(cloud, conn, count, meter):
    """{phase: measures} for the same work straight through openstacksdk
    (the CPU seconds of this process, which drives it, are not counted:
    it is the cloud's own time that is wanted)."""
    compute = conn.compute
    image = conn.image.find_image(cloud.image)
    small = compute.find_flavor(seed.FLAVOR)
    big = compute.find_flavor(seed.FLAVOR_BIG)
    net = conn.network.find_network(cloud.network)

    def statuses(ids):
        return [_read(compute.get_server, i).status for i in ids]

    meter.start()
    ids = [
        compute.create_server(
            name="direct-%d" % i,
            image_id=image.id,
            flavor_id=small.id,
            networks=[{"uuid": net.id}],
        ).id
        for i in range(count)
    ]
    _wait(lambda: all(s == "ACTIVE" for s in statuses(ids)))
    meter.stop("create")
    meter.start()
    for server_id in ids:
        compute.resize_server(server_id, big.id)
    pending = set(ids)
    deadline = time.monotonic() + 900
    while pending:
        if time.monotonic() > deadline:
            raise RuntimeError("not resized after 900s: %s" % sorted(pending))
        for server_id in list(pending):
            server = _read(compute.get_server, server_id)
            if server.status == "VERIFY_RESIZE":
                compute.confirm_server_resize(server_id)
                pending.discard(server_id)
        time.sleep(POLL)
    _wait(lambda: all(s == "ACTIVE" for s in statuses(ids)))
    meter.stop("resize")
    meter.start()
    for server_id in ids:
        compute.delete_server(server_id)
    _wait(lambda: not any(_read(compute.find_server, i) for i in ids))
    meter.stop("delete")
    return meter.record


def _cloud(workdir):
    given = os.environ.get(cloud_mod.ENV)
    if given:
        return cloud_mod.TestCloud(layout.Layout.load(given)), None
    lay = cloud_mod._start(workdir)
    return cloud_mod.TestCloud(lay), lay


def _quota(cloud, count):
    """Room for twice ``count`` servers in the demo project (Nova's
    default is 10 instances)."""
    admin = cloud.connect("admin")
    try:
        project = admin.identity.find_project("demo")
        admin.set_compute_quotas(
            project.id,
            instances=2 * count + 10,
            cores=4 * count + 20,
            ram=512 * count + 4096,
        )
    finally:
        admin.close()


_ENCRYPTION_KEY = "bench-cloud-encryption-key-0123456789abcdef"


def keystone_deployment(cloud, workdir, env=None):
    """heat-lite-api + heat-lite-engine (2 workers, PostgreSQL) in
    keystone mode with trusts, and a python-heatclient of ``demo`` with
    its own password session: the body of a fixture."""
    lay = cloud.layout
    dep = deployment_mod.Deployment(
        "postgresql",
        workdir,
        env=env,
        extra_conf="[DEFAULT]\nauth_encryption_key = %s\n" % _ENCRYPTION_KEY
        + heat_lite_mod.keystone_conf(lay.auth_url, lay.password),
    )
    try:
        dep.start()
        sess = ks_session.Session(auth=v3.Password(**lay.auth("demo", "demo")))
        project = sess.get_project_id()
        heat = heat_client.Client(
            "1", session=sess, endpoint_override=dep.endpoint(project)
        )
        yield dep, heat
    finally:
        dep.stop()


def _noauth_deployment(cloud, workdir):
    for dep in cloud_mod.heat_deployment(cloud, workdir, "demo"):
        yield dep, None


def run(
    count,
    rounds,
    workdir,
    on_round=lambda results: None,
    keystone=False,
    profile=None,
    heat_only=False,
    idle=0,
):
    """{"heat_lite": [round], "direct": [round]}; ``on_round(results)``
    after each round (the outputs are written as the run goes: a run
    stopped early still leaves its finished rounds)."""
    cloud, started = _cloud(os.path.join(workdir, "cloud"))
    _quota(cloud, count)
    conn = cloud.connect("demo")
    results = {"heat_lite": [], "direct": []}
    cloud_sids = cloud.layout.pids.values()
    logs = AccessLogs(cloud.layout)
    try:
        heat_dir = os.path.join(workdir, "heat")
        os.makedirs(heat_dir)
        if keystone:
            deps = keystone_deployment(cloud, heat_dir, profile_env(profile))
        else:
            deps = _noauth_deployment(cloud, heat_dir)
        dep, heat = next(deps)
        heat_sids = [proc.pid for proc in dep.procs.values()]
        engine_sids = [dep.procs["engine"].pid] if keystone else ()
        transactions = db_transactions(dep) if keystone else None
        try:
            for n in range(rounds):
                results["heat_lite"].append(
                    heat_round(
                        dep,
                        cloud,
                        conn,
                        count,
                        Meter(
                            heat_sids,
                            cloud_sids,
                            logs,
                            engine_sids,
                            transactions,
                        ),
                        heat=heat,
                        profile=profile if n == 0 else None,
                        idle=idle,
                    )
                )
                if not heat_only:
                    results["direct"].append(
                        direct_round(
                            cloud, conn, count, Meter((), cloud_sids, logs)
                        )
                    )
                on_round(results)
        finally:
            deps.close()
    finally:
        conn.close()
        if started is not None:
            mc_cloud.Cloud(started, log=lambda *a: None).stop()
    return results


def _median(results, kind, phase, key):
    return statistics.median(r[phase][key] for r in results[kind])


def _requests(results, kind, phase, count):
    """{service: median requests per server} (rounds without counts are
    left out; none: {})."""
    rounds = [
        r[phase]["requests"] for r in results[kind] if "requests" in r[phase]
    ]
    services = sorted({s for r in rounds for s in r})
    return {
        s: round(statistics.median(r.get(s, 0) for r in rounds) / count, 1)
        for s in services
    }


def _requests_text(per_service):
    if not per_service:
        return "-"
    return " ".join(
        "%s %g" % (service, n) for service, n in per_service.items()
    ) + " (%g)" % round(sum(per_service.values()), 1)


def summarize(results, count):
    """Medians per phase; per server, what heat_lite adds to the
    cloud's own time (wall), the CPU it and the cloud spend and the
    cloud API requests by service."""
    summary = {}
    for phase in PHASES:
        heat = _median(results, "heat_lite", phase, "wall_s")
        direct = _median(results, "direct", phase, "wall_s")
        heat_cloud_cpu = _median(results, "heat_lite", phase, "cloud_cpu_s")
        direct_cloud_cpu = _median(results, "direct", phase, "cloud_cpu_s")
        summary[phase] = {
            "heat_lite_s": round(heat, 2),
            "direct_s": round(direct, 2),
            "beyond_cloud_per_server_s": round((heat - direct) / count, 3),
            "heat_lite_cpu_per_server_s": round(
                _median(results, "heat_lite", phase, "heat_lite_cpu_s")
                / count,
                3,
            ),
            "cloud_cpu_per_server_s": {
                "heat_lite": round(heat_cloud_cpu / count, 3),
                "direct": round(direct_cloud_cpu / count, 3),
            },
            "requests_per_server": {
                kind: _requests(results, kind, phase, count)
                for kind in ("heat_lite", "direct")
            },
        }
    return summary


def markdown(summary, count, rounds, meta):
    how = (
        "heat-lite-api + heat-lite-engine (keystone mode, trusts, "
        "PostgreSQL, RabbitMQ, 2 engine workers, default poll interval)"
        if meta.get("keystone")
        else "heat-lite-all (SQLite, 2 engine workers)"
    )
    lines = [
        "# heat_lite on a real cloud: a ResourceGroup of %d servers" % count,
        "",
        machine.caption(meta) + ".",
        "",
        "Made by `python -m bench.cloud%s` (see its docstring): the test "
        "cloud (`tools/minicloud`: Nova with its fake driver, Neutron ML2 "
        "without agents) and %s on "
        "the same machine; median of %d rounds. *direct* is the same work "
        "straight through openstacksdk, all servers at once, polled every "
        "%.1f s: the cloud's own time. CPU is user + system seconds of "
        "every process of heat_lite, and of the cloud, during the phase."
        % (" --keystone" if meta.get("keystone") else "", how, rounds, POLL),
        "",
        "| phase | heat_lite (s) | direct (s) | beyond the cloud, "
        "per server (s) | heat_lite CPU per server (s) | cloud CPU per "
        "server, via heat_lite / direct (s) |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for phase in PHASES:
        row = summary[phase]
        lines.append(
            "| %s | %.2f | %.2f | %.3f | %.3f | %.3f / %.3f |"
            % (
                phase,
                row["heat_lite_s"],
                row["direct_s"],
                row["beyond_cloud_per_server_s"],
                row["heat_lite_cpu_per_server_s"],
                row["cloud_cpu_per_server_s"]["heat_lite"],
                row["cloud_cpu_per_server_s"]["direct"],
            )
        )
    lines += [
        "",
        "Cloud API requests per server by service (from the services' "
        "access logs; total in brackets):",
        "",
        "| phase | heat_lite | direct |",
        "| --- | --- | --- |",
    ]
    for phase in PHASES:
        per = summary[phase]["requests_per_server"]
        lines.append(
            "| %s | %s | %s |"
            % (
                phase,
                _requests_text(per["heat_lite"]),
                _requests_text(per["direct"]),
            )
        )
    lines += [
        "",
        "Every round (wall s, load average 1/5/15 min at the end of the "
        "phase):",
        "",
        "| round | phase | heat_lite (s) | load | direct (s) | load |",
        "| ---: | --- | ---: | --- | ---: | --- |",
    ]
    rounds_of = meta["rounds"]
    pairs = zip(rounds_of["heat_lite"], rounds_of["direct"], strict=True)
    for n, (heat, direct) in enumerate(pairs, 1):
        for phase in PHASES:
            lines.append(
                "| %d | %s | %.2f | %s | %.2f | %s |"
                % (
                    n,
                    phase,
                    heat[phase]["wall_s"],
                    " ".join("%.1f" % x for x in heat[phase]["load_average"]),
                    direct[phase]["wall_s"],
                    " ".join(
                        "%.1f" % x for x in direct[phase]["load_average"]
                    ),
                )
            )
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.cloud")
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=os.path.join("doc", "bench"))
    parser.add_argument(
        "--keystone",
        action="store_true",
        help="heat_lite in keystone mode with trusts (results in "
        "cloud_keystone.json/md)",
    )
    parser.add_argument(
        "--profile",
        metavar="DIR",
        help="py-spy the engine workers during the first create",
    )
    parser.add_argument(
        "--heat-only",
        action="store_true",
        help="no direct rounds (a quick look at heat_lite's own costs; "
        "only the JSON is written)",
    )
    parser.add_argument(
        "--idle",
        type=float,
        default=0,
        metavar="SECONDS",
        help="measure heat_lite's processes doing nothing for SECONDS "
        "before each round (the idle cost the phases' CPU includes)",
    )
    args = parser.parse_args(argv)
    if args.profile and not args.keystone:
        parser.error("--profile needs --keystone (separate engine processes)")
    name = "cloud_keystone" if args.keystone else "cloud"
    meta = {
        "keystone": args.keystone,
        "revision": cli.revision(),
        "started": datetime.datetime.now(datetime.UTC).strftime(
            "%Y-%m-%d %H:%M UTC"
        ),
        "machine": machine.describe(),
    }
    began = time.monotonic()

    def write(results):
        meta["load_average_at_end"] = machine.load_average()
        meta["run_s"] = round(time.monotonic() - began, 1)
        meta["rounds"] = results
        if args.heat_only:  # no cloud's own time to compare with
            with open(os.path.join(args.out, name + ".json"), "w") as f:
                json.dump(dict(meta, count=args.count), f, indent=2)
            return json.dumps(results, indent=2)
        summary = summarize(results, args.count)
        with open(os.path.join(args.out, name + ".json"), "w") as f:
            json.dump(
                dict(meta, count=args.count, summary=summary), f, indent=2
            )
        text = markdown(summary, args.count, len(results["direct"]), meta)
        with open(os.path.join(args.out, name + ".md"), "w") as f:
            f.write(text)
        return text

    with tempfile.TemporaryDirectory(prefix="bench-cloud-") as workdir:
        results = run(
            args.count,
            args.rounds,
            workdir,
            write,
            keystone=args.keystone,
            profile=args.profile,
            heat_only=args.heat_only,
            idle=args.idle,
        )
    text = write(results)
    print(text)


if __name__ == "__main__":
    main()
