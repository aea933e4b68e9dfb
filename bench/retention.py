"""``python -m bench --retention``: image retention at the seed's scale
(issue 30, doc/specs/image_retention.md).

On a private PostgreSQL database the fixture is bulk-loaded (COPY): 100
apps x 100 stacks (10 branches of 10 stacks per app), 100,000 managed
images built over a simulated day (one (app, branch) each, 95 % of them
deployed), 1,000,000 historical resource records of which the
server-like ones name an image (``record_image``), and a sample of
rollout, promotion and build references. Each stack deploys some of its
branch's images; its server's history keeps the records of its 3 newest
(90 % of stacks), 10 newest (9 %) or all (1 %) deployed images. A tenth
of the images start where an earlier pass left them (UNNEEDED, or HIDDEN
past the grace), so the pass also hides, deletes and revives.

The kept set is then computed here, in plain Python from the generated
data (an image a record or another holder names, or among the newest
``keep_last`` deployed images of its app and branch), and compared
exactly with the images one real ``Sweep`` pass leaves NEEDED. The pass
is heat_lite's own code end to end; only the image store is a counter
(no Glance serves 100,000 images here). Measured: the pass's wall time,
SQL statements and Python peak memory (tracemalloc), and
``image_needs.needed`` for one page (the references query; target < 1 s).
"""

import collections
import csv
import datetime
import io
import json
import os
import random
import statistics
import subprocess
import tempfile
import time
import tracemalloc
import uuid

import sqlalchemy as sa

from bench import machine
from harness import databases
from heat_lite import conf
from heat_lite.common import states as st
from heat_lite.db import image_needs, managed_images, models
from heat_lite.db import session as db_session
from heat_lite.engine.fleet.retention import sweep

FULL = {
    "apps": 100,
    "branches": 10,
    "stacks_per_branch": 10,
    "images": 100_000,
    "records": 1_000_000,
}
QUICK = {
    "apps": 5,
    "branches": 2,
    "stacks_per_branch": 4,
    "images": 2_000,
    "records": 10_000,
}
TENANTS = 10
KEEP_LAST = 3
DAY = datetime.datetime(2026, 1, 1)
# Share of stacks whose server history keeps the records of their N
# newest images (None: all), the seed's 90 / 9 / 1 %.
HISTORY = ((0.90, 3), (0.09, 10), (0.01, None))


class CountingStore:
    """The pass's image store: counts calls, reaches no Glance."""

    def __init__(self):
        self.calls = collections.Counter()

    def hide(self, *args):
        self.calls["hide"] += 1

    def unhide(self, *args):
        self.calls["unhide"] += 1

    def delete(self, *args):
        self.calls["delete"] += 1


def _uuid(rng):
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def generate(sizes, seed=30):
    """The fixture as plain data: apps, stacks, images, records,
    references."""
    rng = random.Random(seed)
    apps, stacks, images = [], [], []
    by_branch = collections.defaultdict(list)
    for a in range(sizes["apps"]):
        app_id, tenant = _uuid(rng), "tenant-%02d" % (a % TENANTS)
        apps.append((app_id, tenant))
        for b in range(sizes["branches"]):
            for s in range(sizes["stacks_per_branch"]):
                stacks.append(
                    {
                        "id": _uuid(rng),
                        "tenant": tenant,
                        "app_id": app_id,
                        "branch": "branch-%d" % b,
                        "name": "app%03d-b%d-s%d" % (a, b, s),
                    }
                )
    branches = sorted({(s["app_id"], s["branch"]) for s in stacks})
    tenant_of = dict(apps)
    seconds = sorted(rng.sample(range(86_400_000), sizes["images"]))
    for n, ms in enumerate(seconds):
        app_id, branch = branches[rng.randrange(len(branches))]
        created = DAY + datetime.timedelta(milliseconds=ms)
        deployed = rng.random() < 0.95
        image = {
            "id": _uuid(rng),
            "tenant": tenant_of[app_id],
            "app_id": app_id,
            "branch": branch,
            "build_id": _uuid(rng),
            "name": "img-%06d" % n,
            "state": st.IMAGE.NEEDED,
            "created_at": created,
            # Unique times: the newest-first order has no ties.
            "deployed_at": created + datetime.timedelta(seconds=60)
            if deployed
            else None,
            "hidden_at": None,
            "delete_after": None,
            "unneeded_at": None,
        }
        earlier = rng.random()
        if earlier < 0.05:
            image.update(state=st.IMAGE.UNNEEDED, unneeded_at=DAY)
        elif earlier < 0.10:
            image.update(
                state=st.IMAGE.HIDDEN,
                hidden_at=DAY,
                delete_after=DAY + datetime.timedelta(days=1),
            )
        images.append(image)
        if deployed:
            by_branch[(app_id, branch)].append(image["id"])
    # Records: each stack's server history names the images it kept.
    records, record_images = [], []
    weights = [w for w, _ in HISTORY]
    for stack in stacks:
        deployed = [
            i
            for i in by_branch[(stack["app_id"], stack["branch"])]
            if rng.random() < 0.5
        ]
        keep = rng.choices([k for _, k in HISTORY], weights)[0]
        kept = deployed if keep is None else deployed[-keep:]
        for v, image_id in enumerate(kept, 1):
            records.append(
                (stack["id"], "server", v, "OS::Nova::Server", image_id)
            )
            record_images.append((len(records), image_id))
    filler = sizes["records"] - len(records)
    if filler < 0:
        raise ValueError("more server records than records")
    per_stack, extra = divmod(filler, len(stacks))
    for n, stack in enumerate(stacks):
        count = per_stack + (1 if n < extra else 0)
        for r in range(count):
            # 5 resources per stack, the rest their history.
            records.append(
                (
                    stack["id"],
                    "port%d" % (r % 5),
                    r // 5 + 1,
                    "OS::Neutron::Port",
                    None,
                )
            )
    # Other holders, for a sample: in-flight builds, rollouts and
    # promotions that can still roll back.
    references = []
    for image in rng.sample(images, max(3, len(images) // 200)):
        kind = rng.choice(("build", "rollout", "promotion"))
        holder = image["build_id"] if kind == "build" else _uuid(rng)
        references.append((image["id"], kind, holder, image["tenant"]))
    return {
        "apps": apps,
        "stacks": stacks,
        "images": images,
        "records": records,
        "record_images": record_images,
        "references": references,
    }


def expected_kept(data, keep_last=KEEP_LAST):
    """The ids that must stay NEEDED, from the generated data alone."""
    kept = {image_id for _, image_id in data["record_images"]}
    kept |= {ref[0] for ref in data["references"]}
    newest = collections.defaultdict(list)
    for image in data["images"]:
        if image["deployed_at"] is not None:
            newest[(image["app_id"], image["branch"])].append(image)
    for group in newest.values():
        group.sort(key=lambda i: i["deployed_at"], reverse=True)
        kept |= {i["id"] for i in group[:keep_last]}
    return kept


def _copy(conn, table, columns, rows):
    """COPY ``rows`` into ``table`` (CSV; None is NULL)."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    for row in rows:
        writer.writerow(["\\N" if v is None else v for v in row])
    buf.seek(0)
    cursor = conn.cursor()
    cursor.copy_expert(
        "COPY %s (%s) FROM STDIN WITH (FORMAT csv, NULL '\\N')"
        % (table, ", ".join(columns)),
        buf,
    )
    cursor.close()


def load(url, data):
    """Bulk-load the fixture into the (migrated) database ``url``."""
    engine = sa.create_engine(url)
    now = DAY
    try:
        raw = engine.raw_connection()
        try:
            cur = raw.cursor()
            template_ids = {}
            for app_id, _tenant in data["apps"]:
                cur.execute(
                    "INSERT INTO raw_template (template, environment, files,"
                    " created_at) VALUES (%s, '{}', '{}', %s) RETURNING id",
                    (json.dumps({"heat_template_version": "2018-08-31"}), now),
                )
                template_ids[app_id] = cur.fetchone()[0]
            cur.close()
            stack_cols = list(_stack_row(data["stacks"][0], 1, now))
            _copy(
                raw,
                "stack",
                stack_cols,
                (
                    list(
                        _stack_row(s, template_ids[s["app_id"]], now).values()
                    )
                    for s in data["stacks"]
                ),
            )
            tmpl = {s["id"]: template_ids[s["app_id"]] for s in data["stacks"]}
            _copy(
                raw,
                "resource",
                (
                    "id uuid stack_id name version role type action status"
                    " template_id properties_data atomic_key created_at"
                ).split(),
                (
                    (
                        n,
                        str(uuid.UUID(int=n)),
                        stack_id,
                        name,
                        version,
                        "current" if version == 1 else "history",
                        rtype,
                        "CREATE",
                        "COMPLETE",
                        tmpl[stack_id],
                        json.dumps({"image": image_id} if image_id else {}),
                        1,
                        now,
                    )
                    for n, (
                        stack_id,
                        name,
                        version,
                        rtype,
                        image_id,
                    ) in enumerate(data["records"], 1)
                ),
            )
            _copy(
                raw,
                "record_image",
                ("resource_id", "image_id"),
                data["record_images"],
            )
            cols = (
                "id tenant app_id branch build_id name state generation"
                " created_at deployed_at unneeded_at hidden_at delete_after"
            ).split()
            _copy(
                raw,
                "managed_image",
                cols,
                (
                    [0 if c == "generation" else i[c] for c in cols]
                    for i in data["images"]
                ),
            )
            _copy(
                raw,
                "image_reference",
                ("image_id", "kind", "holder", "tenant", "created_at"),
                ((*r, now) for r in data["references"]),
            )
            cur = raw.cursor()
            cur.execute(
                "SELECT setval(pg_get_serial_sequence('resource', 'id'), %s)",
                (len(data["records"]),),
            )
            cur.execute("ANALYZE")
            cur.close()
            raw.commit()
        finally:
            raw.close()
    finally:
        engine.dispose()


def _stack_row(stack, template_id, now):
    return {
        "id": stack["id"],
        "name": stack["name"],
        "live_name": stack["name"],
        "tenant": stack["tenant"],
        "raw_template_id": template_id,
        "action": "CREATE",
        "status": "COMPLETE",
        "status_reason": "Stack CREATE completed successfully",
        "current_traversal": str(uuid.uuid4()),
        "disable_rollback": True,
        "tags": "[]",
        "created_at": now,
        "action_started_at": now,
        "nested_depth": 0,
    }


class StatementCounter:
    """Counts the SQL statements heat_lite's engine sends, and its
    transactions (``begin``: reads and writes alike; ``commits``: those
    that wrote, each a commit the database makes durable)."""

    def __init__(self):
        self.count = 0
        self.transactions = 0
        self.commits = 0
        self.engine = db_session.get_engine()
        self._events = (
            ("before_cursor_execute", self._one),
            ("begin", self._begin),
            ("commit", self._commit),
        )

    def _one(self, *args):
        self.count += 1

    def _begin(self, *args):
        self.transactions += 1

    def _commit(self, *args):
        self.commits += 1

    def __enter__(self):
        for name, fn in self._events:
            sa.event.listen(self.engine, name, fn)
        return self

    def __exit__(self, *exc):
        for name, fn in self._events:
            sa.event.remove(self.engine, name, fn)


def _states():
    with db_session.transaction(writer=False) as conn:
        rows = conn.execute(
            sa.select(models.ManagedImage.id, models.ManagedImage.state)
        ).all()
    return {image_id: state for image_id, state in rows}


def run(sizes, tmp_path, now=None):
    """Generate, load, time ``needed`` for a page, run one pass, compare.

    :returns: the figures (a dict); ``missing`` and ``extra`` list the
        ids kept wrongly (both empty when exact).
    """
    figures = {"sizes": dict(sizes)}
    clock = time.monotonic()
    data = generate(sizes)
    figures["generate_seconds"] = round(time.monotonic() - clock, 1)
    figures["counts"] = {
        "stacks": len(data["stacks"]),
        "images": len(data["images"]),
        "records": len(data["records"]),
        "record_images": len(data["record_images"]),
        "references": len(data["references"]),
    }
    expected = expected_kept(data)
    with databases.private_database("postgresql", tmp_path) as url:
        clock = time.monotonic()
        load(url, data)
        figures["load_seconds"] = round(time.monotonic() - clock, 1)
        page_size = conf.CONF.retention.page_size
        page = [r["id"] for r in managed_images.candidates(limit=page_size)]
        times = []
        for _ in range(3):
            clock = time.monotonic()
            image_needs.needed(page, lambda app_id: KEEP_LAST)
            times.append(time.monotonic() - clock)
        figures["needed_page"] = {
            "images": len(page),
            "seconds_median": round(statistics.median(times), 4),
            "seconds_max": round(max(times), 4),
        }
        store = CountingStore()
        pass_clock = (
            (lambda: now)
            if now
            else (lambda: DAY + datetime.timedelta(days=3))
        )
        tracemalloc.start()
        with StatementCounter() as counter:
            clock = time.monotonic()
            done = sweep.Sweep(store, clock=pass_clock).run()
            seconds = time.monotonic() - clock
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        states = _states()
    kept = {i for i, s in states.items() if s == st.IMAGE.NEEDED}
    figures["pass"] = {
        "seconds": round(seconds, 2),
        "sql_statements": counter.count,
        "transactions": counter.transactions,
        "commits": counter.commits,
        "peak_python_mib": round(peak / 2**20, 1),
        "done": done,
        "store_calls": dict(store.calls),
    }
    figures["states_after"] = dict(collections.Counter(states.values()))
    figures["kept"] = len(kept)
    figures["expected_kept"] = len(expected)
    figures["missing"] = sorted(expected - kept)
    figures["extra"] = sorted(kept - expected)
    figures["exact"] = not figures["missing"] and not figures["extra"]
    return figures


def _revision():
    try:
        return subprocess.check_output(
            ["git", "rev-parse", "--short", "HEAD"], text=True
        ).strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def render(meta, figures):
    """The markdown report of one run."""
    p, n = figures["pass"], figures["needed_page"]
    c = figures["counts"]
    lines = [
        "# Image retention at scale (issue 30)",
        "",
        machine.caption(meta),
        "",
        "Made by `python -m bench --retention%s`."
        % (" --quick" if meta.get("quick") else ""),
        "",
        "| fixture | count |",
        "|---|---|",
    ]
    lines += ["| %s | %s |" % (k, f"{v:,}") for k, v in c.items()]
    lines += [
        "",
        "| measure | value |",
        "|---|---|",
        "| one pass: wall time | %.2f s |" % p["seconds"],
        "| one pass: SQL statements | {:,} |".format(p["sql_statements"]),
        "| one pass: transactions (of which committed) | {:,} ({:,}) |".format(
            p.get("transactions", 0), p.get("commits", 0)
        ),
        "| one pass: Python peak memory (tracemalloc) | %.1f MiB |"
        % p["peak_python_mib"],
        "| one pass: done | %s |"
        % ", ".join("%s %d" % kv for kv in sorted(p["done"].items())),
        "| one pass: image store calls (counted) | %s |"
        % (
            ", ".join("%s %d" % kv for kv in sorted(p["store_calls"].items()))
            or "none"
        ),
        "| `needed()` for one page of %d images | %.3f s median, %.3f s max |"
        % (n["images"], n["seconds_median"], n["seconds_max"]),
        "| kept (NEEDED after the pass) / computed by the benchmark | "
        "{:,} / {:,} |".format(figures["kept"], figures["expected_kept"]),
        "| exact (no image too many or too few) | %s |"
        % (
            "yes"
            if figures["exact"]
            else "NO: %d missing, %d extra"
            % (len(figures["missing"]), len(figures["extra"]))
        ),
        "| fixture: generate / bulk load (COPY) | %.1f s / %.1f s |"
        % (figures["generate_seconds"], figures["load_seconds"]),
        "",
    ]
    return "\n".join(lines)


def main(opts):
    """Run at full size (or ``--quick``), write retention.json/.md."""
    sizes = QUICK if opts.quick else FULL
    meta = {
        "revision": _revision(),
        "started": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": machine.describe(),
        "quick": opts.quick,
    }
    with tempfile.TemporaryDirectory() as tmp:
        figures = run(sizes, tmp)
    meta["load_average_at_end"] = machine.load_average()
    os.makedirs(opts.out, exist_ok=True)
    with open(os.path.join(opts.out, "retention.json"), "w") as f:
        json.dump({"meta": meta, "figures": figures}, f, indent=1)
    with open(os.path.join(opts.out, "retention.md"), "w") as f:
        f.write(render(meta, figures))
    print(render(meta, figures))
    return 0 if figures["exact"] else 1
