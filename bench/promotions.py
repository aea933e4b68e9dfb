"""Promotion benchmarks (issue 16), on PostgreSQL + RabbitMQ (an API and
two engine workers): ``python -m bench.promotions [--out doc/bench]``.

* ``promote``: ``--apps`` (100) applications of ten resources each, a
  tested stack in project ``test`` and its production stack in
  ``prod``, all promoted test -> prod at once (one ``POST /promotions``
  each, from 16 client threads), each gated by an output check. Reports
  the total time (first request to last promotion COMPLETE) and p50 /
  p99 of each promotion's own time (its request to its COMPLETE, seen by
  polling the list of promotions).
* ``references``: ``--ref-stacks`` (10,000) stacks of ten resources, one
  an ``OS::Nova::Server`` whose image is one of three values used by 90,
  9 and 1 % of the stacks, plus 1 % of stacks mid-replacement (a
  ``replaced`` record on another image): written straight into the
  database as ``bench/queries.py`` does, then ``GET /references`` timed
  (target: under 1 s).

Writes ``promotions.json`` and ``promotions.md`` into ``--out``.
"""

import argparse
import concurrent.futures
import json
import os
import statistics
import sys
import tempfile
import time
import uuid

import requests
import sqlalchemy as sa

from bench import queries
from harness.deployment import Deployment
from heat_lite.db import models

HEADERS = {"X-Auth-User": "bench"}
EXTRA_CONF = """
[DEFAULT]
max_stacks_per_tenant = -1
"""
OLD, NEW = "1.0", "2.0"
IMAGES = (("image-current", 90), ("image-previous", 9), ("image-old", 1))


def app_template(resources=10):
    """Ten resources; ``healthy`` is "yes" (the gate's check)."""
    return {
        "heat_template_version": "2018-08-31",
        "parameters": {"version": {"type": "string", "default": OLD}},
        "resources": {
            "r%d" % i: {
                "type": "OS::Heat::TestResource",
                "properties": {"value": {"get_param": "version"}},
            }
            for i in range(resources)
        },
        "outputs": {"healthy": {"value": "yes"}},
    }


class Client:
    def __init__(self, url):
        self.url = url
        self.session = requests.Session()

    def call(self, project, method, path, body=None, expect=(200,)):
        response = self.session.request(
            method,
            "%s/v1/%s%s" % (self.url, project, path),
            json=body,
            headers=HEADERS,
            timeout=300,
        )
        if response.status_code not in expect:
            raise RuntimeError(
                "%s %s: %s %s"
                % (method, path, response.status_code, response.text[:300])
            )
        return response.json() if response.content else None


def _create_all(client, project, names, params, timeout=1800):
    ids = {}
    for name in names:
        body = {
            "stack_name": name,
            "template": app_template(),
            "parameters": params,
        }
        ids[name] = client.call(
            project, "POST", "/stacks", body, expect=(201,)
        )["stack"]["id"]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stacks = client.call(project, "GET", "/stacks")["stacks"]
        states = {s["id"]: s["stack_status"] for s in stacks}
        if all(states.get(i) == "CREATE_COMPLETE" for i in ids.values()):
            return ids
        bad = [i for i in ids.values() if states.get(i, "").endswith("FAILED")]
        if bad:
            raise RuntimeError("creates failed: %s" % bad)
        time.sleep(1)
    raise RuntimeError("creates did not finish")


def _percentile(values, q):
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))
    return ordered[index]


def bench_promote(client, apps):
    names = ["app%03d" % i for i in range(apps)]
    started = time.monotonic()
    _create_all(client, "test", [n + "-test" for n in names], {"version": NEW})
    _create_all(client, "prod", [n + "-prod" for n in names], {})
    setup = time.monotonic() - started
    gate = {
        "timeout": 600,
        "checks": [{"type": "output", "output": "healthy", "equals": "yes"}],
    }

    def promote(name):
        body = {
            "source": {"stack": name + "-test"},
            "target": {"stack": name + "-prod", "project": "prod"},
            "parameters": {"version": NEW},
            "verify": gate,
        }
        sent = time.monotonic()
        made = client.call("test", "POST", "/promotions", body, (201,))
        return made["promotion"]["id"], sent

    first = time.monotonic()
    sent = {}
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        for promotion_id, at in pool.map(promote, names):
            sent[promotion_id] = at
    accepted = time.monotonic() - first
    ended, statuses = {}, {}
    poller = Client(client.url)
    while len(ended) < len(sent):
        for p in poller.call("test", "GET", "/promotions")["promotions"]:
            if p["id"] in sent and p["id"] not in ended:
                if p["status"] != "IN_PROGRESS":
                    ended[p["id"]] = time.monotonic()
                    statuses[p["id"]] = p["status"]
        if time.monotonic() - first > 3600:
            raise RuntimeError("promotions did not finish")
        time.sleep(0.25)
    each = [ended[i] - sent[i] for i in sent]
    return {
        "apps": apps,
        "resources_per_stack": 10,
        "setup_seconds": round(setup, 1),
        "requests_accepted_seconds": round(accepted, 2),
        "total_seconds": round(max(ended.values()) - first, 2),
        "p50_seconds": round(_percentile(each, 50), 2),
        "p99_seconds": round(_percentile(each, 99), 2),
        "mean_seconds": round(statistics.mean(each), 2),
        "complete": sum(1 for s in statuses.values() if s == "COMPLETE"),
    }


def _server_rows(i, stack_id, template_id, now):
    rows = queries._resources(i, stack_id, template_id, now)[:9]
    image = _image(i)
    rows.append(_server(stack_id, template_id, now, image, "current", 1))
    if i % 100 == 7:  # mid-replacement: the old image is kept
        rows.append(
            _server(stack_id, template_id, now, "image-retired", "replaced", 0)
        )
    return rows


def _server(stack_id, template_id, now, image, role, version):
    return {
        "uuid": str(uuid.uuid4()),
        "stack_id": stack_id,
        "name": "server",
        "version": version + 1,
        "role": role,
        "type": "OS::Nova::Server",
        "physical_resource_id": str(uuid.uuid4()),
        "action": "CREATE",
        "status": "COMPLETE",
        "status_reason": "state changed",
        "template_id": template_id,
        "properties_data": json.dumps(
            {"image": image, "flavor": "m1.small", "networks": []}
        ),
        "atomic_key": 1,
        "created_at": now,
    }


def _image(i):
    """90 % of the stacks on the first image, 9 % the second, 1 % the
    third."""
    slot, bound = i % 100, 0
    for image, share in IMAGES:
        bound += share
        if slot < bound:
            return image
    return IMAGES[-1][0]


def seed_servers(deployment, stacks, tenant="refs"):
    """Write ``stacks`` stacks (with their server) into the database."""
    engine = sa.create_engine(queries._db_url(deployment))
    now = models.utcnow()
    template = json.dumps(queries.template())
    raw = models.RawTemplate.__table__
    try:
        with engine.begin() as conn:
            for start in range(0, stacks, 500):
                stack_rows, resource_rows = [], []
                for i in range(start, min(start + 500, stacks)):
                    stack_id = str(uuid.uuid4())
                    template_id = conn.execute(
                        raw.insert().values(
                            stack_id=stack_id,
                            template=template,
                            environment="{}",
                            files="{}",
                            created_at=now,
                        )
                    ).inserted_primary_key[0]
                    row = queries._stack(i, stack_id, tenant, template_id, now)
                    stack_rows.append(
                        dict(row, name="s-%06d" % i, live_name="s-%06d" % i)
                    )
                    resource_rows += _server_rows(
                        i, stack_id, template_id, now
                    )
                conn.execute(models.Stack.__table__.insert(), stack_rows)
                conn.execute(models.Resource.__table__.insert(), resource_rows)
    finally:
        engine.dispose()


def bench_references(client, deployment, stacks):
    started = time.monotonic()
    seed_servers(deployment, stacks)
    seeding = time.monotonic() - started
    path = "/references?type=OS::Nova::Server&property=image"
    times, answer = [], None
    for _ in range(7):
        start = time.monotonic()
        answer = client.call("refs", "GET", path)["references"]
        times.append(time.monotonic() - start)
    return {
        "stacks": stacks,
        "resources": stacks * 10 + stacks // 100,
        "seed_seconds": round(seeding, 1),
        "median_seconds": round(statistics.median(times), 3),
        "max_seconds": round(max(times), 3),
        "first_seconds": round(times[0], 3),
        "answer": answer,
    }


def report(results):
    p, r = results["promote"], results["references"]
    lines = [
        "# Promotion benchmarks (issue 16)",
        "",
        "`python -m bench.promotions` on %s: PostgreSQL + RabbitMQ, one "
        "`heat-lite-api` and `heat-lite-engine --workers 2`, on a shared "
        "2-core machine (other test suites ran at the same time)."
        % results["when"],
        "",
        "## %d apps promoted test -> prod at once" % p["apps"],
        "",
        "Ten-resource stacks; each promotion is an in-place verified "
        "update of the prod stack (every resource's value changes) gated "
        "by an output check; 16 client threads send the requests.",
        "",
        "| what | seconds |",
        "|---|---|",
        "| all %d requests accepted (201) | %s |"
        % (p["apps"], p["requests_accepted_seconds"]),
        "| total: first request to last COMPLETE | %s |" % p["total_seconds"],
        "| per promotion, p50 | %s |" % p["p50_seconds"],
        "| per promotion, p99 | %s |" % p["p99_seconds"],
        "| per promotion, mean | %s |" % p["mean_seconds"],
        "",
        "%d of %d COMPLETE. (Creating the %d stacks first took %s s.)"
        % (p["complete"], p["apps"], 2 * p["apps"], p["setup_seconds"]),
        "",
        "## References over %d stacks" % r["stacks"],
        "",
        "`GET /references?type=OS::Nova::Server&property=image`, %d "
        "resource records (10 per stack, 1 %% of the stacks also hold a "
        "replaced server on a retired image); target under 1 s."
        % r["resources"],
        "",
        "| what | seconds |",
        "|---|---|",
        "| first answer | %s |" % r["first_seconds"],
        "| median of 7 | %s |" % r["median_seconds"],
        "| slowest of 7 | %s |" % r["max_seconds"],
        "",
        "| value | stacks | current | retained |",
        "|---|---|---|---|",
    ]
    for row in r["answer"]:
        lines.append(
            "| %s | %d | %d | %d |"
            % (row["value"], row["stacks"], row["current"], row["retained"])
        )
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.promotions")
    parser.add_argument("--apps", type=int, default=100)
    parser.add_argument("--ref-stacks", type=int, default=10000)
    parser.add_argument("--kind", default="postgresql")
    parser.add_argument("--out", default="doc/bench")
    opts = parser.parse_args(argv)
    workdir = tempfile.mkdtemp(prefix="bench-promotions-")
    dep = Deployment(opts.kind, workdir, extra_conf=EXTRA_CONF)
    dep.start()
    try:
        client = Client(dep.url)
        results = {
            "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "kind": opts.kind,
            "references": bench_references(client, dep, opts.ref_stacks),
        }
        print(json.dumps(results["references"]), flush=True)
        results["promote"] = bench_promote(client, opts.apps)
        print(json.dumps(results["promote"]), flush=True)
    finally:
        dep.stop()
    os.makedirs(opts.out, exist_ok=True)
    with open(os.path.join(opts.out, "promotions.json"), "w") as f:
        json.dump(results, f, indent=2, sort_keys=True)
    with open(os.path.join(opts.out, "promotions.md"), "w") as f:
        f.write(report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
