"""``python -m bench --apps``: app pushes against the test cloud (issue 29
item 6).

heat-lite-all (SQLite, its builder workers) acts in the test cloud
(``tools.minicloud``: real Glance, Nova with its fake driver) as ``demo``.
``apps`` apps are made over the REST API, each with the ``artifact``
builder (Glance's web-download of a tiny qcow2 served on loopback), a
template of one ``OS::Nova::Server`` booted from the built image and an
output check as its verification; all read one real bare git repository
(``file://``) whose commits are made up front (``git fast-import``).

Steady: signed webhooks (``X-Hub-Signature-256``, as GitHub sends them)
are posted at ``rate`` per second, round robin over the apps, for
``seconds``, each naming a new commit; then the run waits for every build
to end. Per push: the latency from the webhook's acceptance (the build's
``created_at``) to DEPLOYED, which is after the stack was verified
(``finished_at``); the builds per final state; the CPU seconds of
heat_lite's processes (every process of its sessions, from /proc) and
the SQL statements they sent (``[DEFAULT] counters_dir``) over the
phase, divided by the pushes. The cloud's own time per push is measured
directly with openstacksdk beforehand (a web-download import until
active, a server rebuilt onto it until ACTIVE, and a first boot for the
first deploy of each app); heat_lite's overhead is a push's latency minus
that.

Burst: one more app, one branch, pushes posted ten times faster than one
build takes (the steady median latency, or the measured cloud time): the
newest must be the one deployed, and the builds SUPERSEDED are the
builds saved.

A run longer than the machine sustains is said to be so: the report gives
the rate of builds actually finished and the backlog left when the
pushes stopped.
"""

import concurrent.futures
import datetime
import hashlib
import hmac
import json
import os
import re
import statistics
import tempfile
import threading
import time
import uuid

import requests

from bench import cloud as bench_cloud
from bench import machine, report, topology
from harness import databases, git_repo, polling
from harness import deployment as deployment_mod
from heat_lite.common.states import BuildStatus as B
from heat_lite.db import builds as db_builds
from heat_lite.db import events as db_events

PROJECT = "demo"
SECRET = "the bench's webhook secret"
FULL = {
    "apps": 100,
    "rate": 3.5,
    "seconds": 600.0,
    "burst_pushes": 40,
    "cloud_rounds": 2,
    "drain_timeout": 180.0,
}
QUICK = {
    "apps": 10,
    "rate": 0.5,
    "seconds": 60.0,
    "burst_pushes": 10,
    "cloud_rounds": 1,
    "drain_timeout": 600.0,
}
BURST_FACTOR = 10
POSTERS = 16
VERIFY = {
    "timeout": 120,
    "checks": [{"type": "output", "output": "healthy", "equals": True}],
}


_SHAPES = {
    "sqlite": "heat-lite-all (SQLite)",
    "postgresql": "heat-lite-api and two engine workers (PostgreSQL, "
    "RabbitMQ)",
    "mysql": "heat-lite-api and two engine workers (MariaDB, RabbitMQ)",
}


def _conf(cloud, counters, repos):
    return cloud.heat_conf("demo") + (
        "\n[DEFAULT]\ncounters_dir = %s\n"
        # Webhook secrets are kept encrypted under it.
        "auth_encryption_key = the bench's key of 32 characters.\n"
        "[apps]\nallowed_sources = file://%s/*\n"
        "allowed_artifact_urls = http://127.0.0.1:*/*\n"
        "build_poll_interval = 0.2\n"
        # Enough builder threads for the rate: a push every 1/rate s,
        # each build a few seconds of waiting on the cloud.
        "max_builds_per_engine = 32\n"
        "webhook_rate = 0\n" % (counters, repos)
    )


def signed(commit, branch="main"):
    """(headers, body) of a GitHub push delivery signed with SECRET."""
    body = json.dumps(
        {"ref": "refs/heads/" + branch, "before": "0" * 40, "after": commit}
    ).encode()
    digest = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    return {
        "Content-Type": "application/json",
        "X-GitHub-Event": "push",
        "X-GitHub-Delivery": str(uuid.uuid4()),
        "X-Hub-Signature-256": "sha256=" + digest,
    }, body


def make_app(dep, cloud, name, source, artifact_url):
    made = requests.post(
        dep.endpoint(PROJECT) + "/apps",
        json={
            "name": name,
            "source": {"url": source, "branches": ["main"]},
            "builder": {
                "name": "artifact",
                "options": {"image_url": artifact_url},
            },
            "template": git_repo.server_template(cloud),
            "image_parameter": "image",
            "verify": VERIFY,
            "webhook_secret": SECRET,
        },
        headers={"X-Auth-User": "dev"},
        timeout=120,
    )
    made.raise_for_status()
    return made.json()["app"]


class Poster:
    """Posts webhooks on a schedule from a pool of threads, so that a
    slow answer does not delay the next push; records each answer."""

    def __init__(self, dep):
        self.endpoint = dep.endpoint(PROJECT)
        self.pool = concurrent.futures.ThreadPoolExecutor(POSTERS)
        self.sent = []
        self._lock = threading.Lock()
        self._local = threading.local()

    def _session(self):
        if not hasattr(self._local, "s"):
            self._local.s = requests.Session()
        return self._local.s

    def _post(self, app_id, commit, due):
        headers, body = signed(commit)
        began = time.monotonic()
        try:
            answer = self._session().post(
                self.endpoint + "/apps/%s/webhook" % app_id,
                data=body,
                headers=headers,
                timeout=120,
            )
            code = answer.status_code
            build = answer.json().get("build", {}) if code == 202 else {}
        except requests.RequestException as exc:
            code, build = type(exc).__name__, {}
        ended = time.monotonic()
        with self._lock:
            self.sent.append(
                {
                    "app_id": app_id,
                    "commit": commit,
                    "code": code,
                    "build_id": build.get("id"),
                    "late_s": began - due,
                    "answer_s": ended - began,
                }
            )

    def run(self, pushes, interval):
        """Post ``pushes`` [(app_id, commit)] one every ``interval`` s;
        return the seconds the posting took."""
        start = time.monotonic()
        futures = []
        for n, (app_id, commit) in enumerate(pushes):
            due = start + n * interval
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            futures.append(self.pool.submit(self._post, app_id, commit, due))
        concurrent.futures.wait(futures)
        return time.monotonic() - start

    def close(self):
        self.pool.shutdown()


def _rows(app_ids):
    rows = []
    for app_id in app_ids:
        rows.extend(db_builds.build_list(PROJECT, app_id))
    return rows


def wait_final(app_ids, timeout):
    """Wait until every build of ``app_ids`` is final; return the rows
    and whether they all are."""
    found = {}

    def final():
        found["rows"] = _rows(app_ids)
        return all(r["status"] in B.FINISHED for r in found["rows"])

    done = polling.awhile(final, timeout, interval=0.5)
    return found["rows"], done


def newest_deployed(rows):
    """{app id: True if the newest push of its branch is DEPLOYED}."""
    newest = {}
    for r in rows:
        key = (r["app_id"], r["branch"])
        if key not in newest or (r["created_at"], r["id"]) > (
            newest[key]["created_at"],
            newest[key]["id"],
        ):
            newest[key] = r
    return {
        "%s %s" % key: r["status"] == B.DEPLOYED for key, r in newest.items()
    }


def _pct(values, q):
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 2)


def _seconds(row):
    return (row["finished_at"] - row["created_at"]).total_seconds()


class Meter:
    """CPU seconds of heat_lite's sessions and its counters (SQL)."""

    def __init__(self, dep, counters):
        self.sids = {p.pid for p in dep.procs.values()}
        self.counters = counters

    def read(self):
        time.sleep(topology.FLUSH_WAIT)  # every counters file rewritten
        snap = topology.Snapshot(self.counters)
        return {
            "cpu_s": bench_cloud.session_cpu(self.sids),
            "sql": snap.totals.get("sql_statements", 0),
            "commits": snap.totals.get("sql_commits", 0),
        }


def cloud_time(cloud, conn, artifact_url, rounds):
    """The cloud's own time for a push, straight through openstacksdk:
    a web-download import until active (Glance), a first boot from it and
    a rebuild onto another image until ACTIVE (Nova)."""
    compute, image_api = conn.compute, conn.image
    flavor = compute.find_flavor(cloud.flavor)
    net = conn.network.find_network(cloud.network)

    def imported():
        began = time.monotonic()
        image = image_api.create_image(
            name="bench-direct-%s" % uuid.uuid4().hex[:6],
            disk_format="qcow2",
            container_format="bare",
            allow_duplicates=True,
        )
        image_api.import_image(image, method="web-download", uri=artifact_url)
        bench_cloud._wait(
            lambda: image_api.get_image(image.id).status == "active", 300
        )
        return image.id, time.monotonic() - began

    def active(server_id):
        status = bench_cloud._read(compute.get_server, server_id).status
        if status == "ERROR":
            raise RuntimeError("server %s ERROR" % server_id)
        return status == "ACTIVE"

    glance, boot, rebuild = [], [], []
    for _ in range(rounds):
        first, seconds = imported()
        glance.append(seconds)
        second, seconds = imported()
        glance.append(seconds)
        began = time.monotonic()
        server = compute.create_server(
            name="bench-direct",
            image_id=first,
            flavor_id=flavor.id,
            networks=[{"uuid": net.id}],
        )
        bench_cloud._wait(lambda s=server.id: active(s), 300)
        boot.append(time.monotonic() - began)
        began = time.monotonic()
        compute.rebuild_server(server, image=second)
        time.sleep(0.2)  # the rebuild's task state set
        bench_cloud._wait(lambda s=server.id: active(s), 300)
        rebuild.append(time.monotonic() - began)
        compute.delete_server(server.id)
        bench_cloud._wait(
            lambda s=server.id: compute.find_server(s) is None, 300
        )
        for image_id in (first, second):
            image_api.delete_image(image_id, ignore_missing=True)
    return {
        "glance_import_s": round(statistics.median(glance), 2),
        "nova_boot_s": round(statistics.median(boot), 2),
        "nova_rebuild_s": round(statistics.median(rebuild), 2),
    }


def _summary(rows, sent, posting_s, cost, cloud_s, finished):
    deployed = [r for r in rows if r["status"] == B.DEPLOYED]
    latencies = [_seconds(r) for r in deployed]
    # A push's cloud time: an import, then a boot for an app's first
    # deploy, a rebuild for the others.
    firsts = {}
    for r in sorted(deployed, key=lambda r: r["created_at"]):
        firsts.setdefault(r["app_id"], r["id"])
    overhead = (
        []
        if cloud_s is None
        else [
            _seconds(r)
            - cloud_s["glance_import_s"]
            - (
                cloud_s["nova_boot_s"]
                if firsts[r["app_id"]] == r["id"]
                else cloud_s["nova_rebuild_s"]
            )
            for r in deployed
        ]
    )
    states = {}
    for r in rows:
        states[r["status"]] = states.get(r["status"], 0) + 1
    pushes = len(rows)
    reasons = _reasons(rows)
    accepted = sum(1 for s in sent if s["code"] == 202)
    span = (
        max(r["finished_at"] for r in rows if r["finished_at"])
        - min(r["created_at"] for r in rows)
    ).total_seconds()
    return {
        "posted": len(sent),
        "accepted": accepted,
        "refused": {
            str(c): sum(1 for s in sent if s["code"] == c)
            for c in {s["code"] for s in sent}
            if c != 202
        },
        "builds": pushes,
        "states": states,
        "saved": states.get(B.SUPERSEDED, 0),
        "newest_deployed": newest_deployed(rows),
        "reasons": reasons,
        "all_final": finished,
        "posting_s": round(posting_s, 1),
        "offered_rate": round(len(sent) / posting_s, 2) if posting_s else None,
        "post_late_p99_s": _pct([s["late_s"] for s in sent], 0.99),
        "webhook_answer_p50_s": _pct([s["answer_s"] for s in sent], 0.5),
        "webhook_answer_p99_s": _pct([s["answer_s"] for s in sent], 0.99),
        "first_push_to_last_final_s": round(span, 1),
        "finished_rate": round(
            sum(states.get(s, 0) for s in B.FINISHED) / span, 2
        )
        if span
        else None,
        "deployed_rate": round(len(deployed) / span, 2) if span else None,
        "latency_p50_s": _pct(latencies, 0.5),
        "latency_p99_s": _pct(latencies, 0.99),
        "latency_max_s": _pct(latencies, 1.0),
        "overhead_p50_s": _pct(overhead, 0.5),
        "overhead_p99_s": _pct(overhead, 0.99),
        "cpu_s_per_push": round(cost["cpu_s"] / pushes, 3) if pushes else None,
        "sql_per_push": round(cost["sql"] / pushes, 1) if pushes else None,
        "commits_per_push": round(cost["commits"] / pushes, 1)
        if pushes
        else None,
        "cpu_s": round(cost["cpu_s"], 1),
        "sql": cost["sql"],
    }


# "<date> <time> <pid> INFO heat_lite.engine.fleet.app.run [...] Build
# <id> <STATUS>": the runner's moves, in heat-lite-all's log.
_MOVE = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) .*"
    r"heat_lite\.engine\.fleet\.app\.run .*Build ([0-9a-f-]{36}) ([A-Z]+)"
)
PHASES = (
    ("queued", "pushed -> claimed (BUILDING)"),
    ("fetch_build", "claimed -> built (UPLOADING)"),
    ("upload", "upload until the image is active (-> DEPLOYING)"),
    ("stack_start", "DEPLOYING -> the stack's operation started"),
    ("resources", "the operation's resources (the cloud: Nova)"),
    ("verify", "verification until the stack is COMPLETE"),
    ("follow", "stack COMPLETE -> build DEPLOYED"),
)


def moves(log_text):
    """{build id: {status: when}} from heat-lite-all's log (local time,
    which is UTC on the machines this runs on, as the rows' times)."""
    found = {}
    for line in log_text.splitlines():
        m = _MOVE.match(line)
        if m:
            when = datetime.datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S.%f")
            found.setdefault(m[2], {}).setdefault(m[3], when)
    return found


def _stack_marks(stack_id, after):
    """(started, resources done, COMPLETE) of the first stack operation
    of ``stack_id`` that started at or after ``after``, from its events."""
    started = done = complete = None
    for event in db_events.event_get_all(stack_id, sort_dir="asc"):
        reason = event["resource_status_reason"] or ""
        if not reason.startswith("Stack ") or event["created_at"] < after:
            continue
        if started is None and reason.endswith(" started"):
            started = event["created_at"]
        elif started and done is None and " verifying" in reason:
            done = event["created_at"]
        elif started and reason.endswith("completed successfully"):
            complete = event["created_at"]
            break
    return started, done or complete, complete


def phases(rows, log_text):
    """Median seconds of each of ``PHASES`` over the DEPLOYED ``rows``,
    and how many builds each median is of: where a push's time goes."""
    seen = moves(log_text)
    spans = {name: [] for name, _ in PHASES}
    for row in rows:
        at = seen.get(row["id"], {})
        if row["status"] != B.DEPLOYED or not row["stack_id"]:
            continue
        marks = [row["created_at"], row["started_at"], at.get("UPLOADING"),
                 at.get("DEPLOYING")]  # fmt: skip
        if marks[-1] is not None:
            marks += _stack_marks(row["stack_id"], marks[-1])
        else:
            marks += [None, None, None]
        marks.append(row["finished_at"])
        for (name, _), a, b in zip(PHASES, marks[:-1], marks[1:], strict=True):
            if a is not None and b is not None:
                spans[name].append((b - a).total_seconds())
    return {
        name: {"p50_s": _pct(values, 0.5), "builds": len(values)}
        for name, values in spans.items()
    }


def _cost(before, after):
    return {k: after[k] - before[k] for k in before}


def steady(dep, meter, apps, commits, sizes, cloud_s):
    """Round robin pushes at ``rate`` for ``seconds``."""
    count = max(1, int(sizes["rate"] * sizes["seconds"]))
    pushes = [(apps[n % len(apps)]["id"], commits[n]) for n in range(count)]
    poster = Poster(dep)
    before = meter.read()
    try:
        posting_s = poster.run(pushes, 1.0 / sizes["rate"])
    finally:
        poster.close()
    backlog = sum(
        1
        for r in _rows([a["id"] for a in apps])
        if r["status"] not in B.FINISHED
    )
    rows, finished = wait_final(
        [a["id"] for a in apps], sizes["drain_timeout"]
    )
    after = meter.read()
    figures = _summary(
        rows, poster.sent, posting_s, _cost(before, after), cloud_s, finished
    )
    figures["backlog_when_pushes_stopped"] = backlog
    runs_builds = "all" if dep.kind == "sqlite" else "engine"
    with open(dep.log_path(runs_builds), errors="replace") as f:
        figures["phases"] = phases(rows, f.read())
    return figures


def _reasons(rows):
    """{"STATUS: reason": count} of the builds that did not deploy."""
    reasons = {}
    for r in rows:
        if r["status"] in (B.FAILED, B.REJECTED, B.CANCELLED):
            key = "%s: %s" % (r["status"], (r["status_reason"] or "")[:200])
            reasons[key] = reasons.get(key, 0) + 1
    return reasons


def _why(reasons):
    return "; ".join("%s (%d)" % kv for kv in reasons.items()) or "-"


def burst(
    dep, meter, app, commits, build_s, pushes, timeout=180.0, interval=None
):
    """``pushes`` pushes of one branch ten times faster than a build
    (or one every ``interval`` s)."""
    # At most a minute of posting, whatever a build takes here.
    if interval is None:
        interval = max(0.05, min(build_s / BURST_FACTOR, 60.0 / pushes))
    poster = Poster(dep)
    before = meter.read()
    try:
        posting_s = poster.run(
            [(app["id"], c) for c in commits[:pushes]], interval
        )
    finally:
        poster.close()
    rows, finished = wait_final([app["id"]], timeout)
    after = meter.read()
    cost = _cost(before, after)
    states = {}
    for r in rows:
        states[r["status"]] = states.get(r["status"], 0) + 1
    newest = commits[pushes - 1]
    deployed = [r for r in rows if r["status"] == B.DEPLOYED]
    last = max(deployed, key=lambda r: r["finished_at"]) if deployed else None
    return {
        "pushes": pushes,
        "interval_s": round(interval, 3),
        "build_s_assumed": round(build_s, 2),
        "posting_s": round(posting_s, 1),
        "states": states,
        "reasons": _reasons(rows),
        "all_final": finished,
        "newest_deployed": bool(last and last["commit"] == newest),
        "deployed": len(deployed),
        "saved": states.get(B.SUPERSEDED, 0),
        "cpu_s_per_push": round(cost["cpu_s"] / pushes, 3),
        "sql_per_push": round(cost["sql"] / pushes, 1),
    }


def run(sizes, workdir, cloud):
    """Both scenarios on ``cloud`` (a harness.cloud.TestCloud); the
    figures as a dict."""
    repos = os.path.join(workdir, "repos")
    counters = os.path.join(workdir, "counters")
    os.makedirs(repos)
    os.makedirs(counters)
    steady_count = max(1, int(sizes["rate"] * sizes["seconds"]))
    source, commits = git_repo.fast_commits(
        repos, steady_count + sizes["burst_pushes"]
    )
    # Room for a full run's servers (and a test's beside it).
    bench_cloud._quota(cloud, 120)
    prefix = "b%s-" % uuid.uuid4().hex[:4]
    artifact = git_repo.ServedImage(workdir)
    conn = cloud.connect("demo")
    figures = {"sizes": dict(sizes)}
    # sqlite: heat-lite-all; postgresql/mysql: heat-lite-api and two
    # engine workers (whose builder workers run the builds).
    kind = sizes.get("kind", "sqlite")
    dep = deployment_mod.Deployment(
        kind,
        os.path.join(workdir, "heat"),
        extra_conf=_conf(cloud, counters, repos),
    )
    os.makedirs(dep.workdir)
    try:
        # (0 rounds: not measured, as in a test that has no time for it)
        figures["cloud"] = (
            cloud_time(cloud, conn, artifact.url, sizes["cloud_rounds"])
            if sizes["cloud_rounds"]
            else None
        )
        dep.start()
        with databases.attached(dep.db_url):
            meter = Meter(dep, counters)
            apps = [
                make_app(
                    dep, cloud, "%sapp%03d" % (prefix, n), source, artifact.url
                )
                for n in range(sizes["apps"])
            ]
            figures["steady"] = steady(
                dep, meter, apps, commits, sizes, figures["cloud"]
            )
            build_s = figures["steady"]["latency_p50_s"] or (
                figures["cloud"]["glance_import_s"]
                + figures["cloud"]["nova_rebuild_s"]
                if figures["cloud"]
                else 10.0
            )
            one = make_app(dep, cloud, prefix + "burst", source, artifact.url)
            figures["burst"] = burst(
                dep,
                meter,
                one,
                commits[steady_count:],
                build_s,
                sizes["burst_pushes"],
                sizes.get("burst_timeout", 180.0),
                sizes.get("burst_interval"),
            )
    finally:
        dep.stop()
        artifact.close()
        try:
            _cleanup(conn, prefix)
        except Exception as exc:  # noqa: BLE001 - the figures matter more
            figures["cleanup_error"] = "%s: %s" % (type(exc).__name__, exc)
        conn.close()
    return figures


def _cleanup(conn, prefix):
    """The servers and images this run left in the demo project (its
    stacks' names, hence their servers', start with ``prefix``)."""
    for server in list(conn.compute.servers()):
        if server.name.startswith(prefix):
            conn.compute.delete_server(server.id, ignore_missing=True)
    for image in list(conn.image.images()):
        if image.name.startswith(prefix):
            conn.image.delete_image(image.id, ignore_missing=True)


def _states(counts):
    return ", ".join("%s %d" % kv for kv in sorted(counts.items()))


def _steady_rows(s, c):
    return [
        ("pushes posted / accepted (202)",
         "%d / %d" % (s["posted"], s["accepted"])),
        ("refused", _states(s["refused"]) or "none"),
        ("offered rate (posted / posting time)",
         "%s /s over %.1f s" % (s["offered_rate"], s["posting_s"])),
        ("webhook answer p50 / p99", "%s / %s s"
         % (s["webhook_answer_p50_s"], s["webhook_answer_p99_s"])),
        ("builds per final state", _states(s["states"])),
        ("why not deployed", _why(s["reasons"])),
        ("all builds final", "yes" if s["all_final"] else "NO"),
        ("builds not final when the pushes stopped (backlog)",
         s["backlog_when_pushes_stopped"]),
        ("first push to last build final",
         "%.1f s" % s["first_push_to_last_final_s"]),
        ("builds finished per s (sustained) / deployed per s",
         "%s / %s" % (s["finished_rate"], s["deployed_rate"])),
        ("webhook to DEPLOYED (verified): p50 / p99 / max", "%s / %s / %s s"
         % (s["latency_p50_s"], s["latency_p99_s"], s["latency_max_s"])),
        ("heat_lite CPU per push (all its processes)",
         "%s s" % s["cpu_s_per_push"]),
        ("SQL statements per push / commits per push",
         "%s / %s" % (s["sql_per_push"], s["commits_per_push"])),
        ("cloud's own time per push, direct (Glance import; Nova boot "
         "/ rebuild)", "%.2f s; %.2f / %.2f s"
         % (c["glance_import_s"], c["nova_boot_s"], c["nova_rebuild_s"])
         if c else "not measured"),
        ("heat_lite's overhead per push (latency - cloud): p50 / p99",
         "%s / %s s" % (s["overhead_p50_s"], s["overhead_p99_s"])),
    ]  # fmt: skip


def _phase_rows(found):
    return [
        (text, "%s s (%d builds)" % (found[name]["p50_s"],
                                     found[name]["builds"]))
        for name, text in PHASES
        if name in found
    ]  # fmt: skip


def _burst_rows(b):
    return [
        ("pushes, one every", "%d, %.2f s (a build: %.2f s)"
         % (b["pushes"], b["interval_s"], b["build_s_assumed"])),
        ("builds per final state", _states(b["states"])),
        ("why not deployed", _why(b.get("reasons", {}))),
        ("deployed / saved (SUPERSEDED)",
         "%d / %d" % (b["deployed"], b["saved"])),
        ("the newest push is the one deployed last",
         "yes" if b["newest_deployed"] else "NO"),
        ("heat_lite CPU / SQL statements per push",
         "%s s / %s" % (b["cpu_s_per_push"], b["sql_per_push"])),
    ]  # fmt: skip


def render(meta, figures):
    s, b, c = figures["steady"], figures["burst"], figures["cloud"]
    z = figures["sizes"]
    lines = [
        "# App pushes against the test cloud (issue 29 item 6)",
        "",
        machine.caption(meta) + ".",
        "",
        "Made by `python -m bench --apps%s` (see bench/apps.py): "
        "%s in the test cloud (`tools/minicloud`: real "
        "Glance, Nova with its fake driver) on the same machine, the "
        "`artifact` builder (Glance web-download of a 1 MiB qcow2), one "
        "`OS::Nova::Server` per app, verified by an output check."
        % (
            " --quick" if meta.get("quick") else "",
            _SHAPES[z.get("kind", "sqlite")],
        ),
        "",
        "## Steady: %d apps, %.1f pushes/s for %.0f s"
        % (z["apps"], z["rate"], z["seconds"]),
        "",
    ]
    lines += report.table(("measure", "value"), _steady_rows(s, c))
    lines += ["Where a deployed push's time goes (medians):", ""]
    lines += report.table(("phase", "p50"), _phase_rows(s.get("phases", {})))
    lines += [
        "## Burst: one branch, pushes %dx faster than a build" % BURST_FACTOR,
        "",
    ]
    lines += report.table(("measure", "value"), _burst_rows(b))
    return "\n".join(lines)


def main(opts):
    """Run (full or ``--quick``) on the test cloud; write apps.json/.md."""
    from bench import cli

    sizes = dict(QUICK if opts.quick else FULL)
    if opts.apps_seconds:
        sizes["seconds"] = opts.apps_seconds
    if opts.apps_kind:
        sizes["kind"] = opts.apps_kind
    meta = {
        "revision": cli.revision(),
        "started": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": machine.describe(),
        "quick": opts.quick,
    }
    with tempfile.TemporaryDirectory(prefix="heat-lite-bench-apps-") as tmp:
        cloud, started = bench_cloud._cloud(os.path.join(tmp, "cloud"))
        try:
            figures = run(sizes, tmp, cloud)
        finally:
            if started is not None:
                from tools.minicloud import cloud as mc_cloud

                mc_cloud.Cloud(started, log=lambda *a: None).stop()
    meta["load_average_at_end"] = machine.load_average()
    os.makedirs(opts.out, exist_ok=True)
    with open(os.path.join(opts.out, "apps.json"), "w") as f:
        json.dump({"meta": meta, "figures": figures}, f, indent=1, default=str)
    text = render(meta, figures)
    with open(os.path.join(opts.out, "apps.md"), "w") as f:
        f.write(text)
    print(text)
    ok = figures["steady"]["all_final"] and figures["burst"]["newest_deployed"]
    return 0 if ok else 1
