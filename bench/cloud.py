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
noise of the machine falls on both. Results go to
``doc/bench/cloud.json`` and ``doc/bench/cloud.md``.

The cloud: ``HEAT_LITE_TEST_CLOUD=<dir>`` (a cloud started by hand) or
one started for the run and stopped at its end.
"""

import argparse
import json
import os
import platform
import statistics
import tempfile
import time

from tests.functional import cloud as cloud_mod
from tests.functional import helpers
from tools.minicloud import cloud as mc_cloud
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


def _wait(done, timeout=900):
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise RuntimeError("not done after %ss" % timeout)
        time.sleep(POLL)


def heat_round(dep, cloud, conn, count):
    """{phase: seconds} for one ResourceGroup through heat_lite."""
    heat = dep.client()
    times = {}
    began = time.monotonic()
    stack_id = heat.stacks.create(
        stack_name="bench-cloud",
        template=_template(cloud, count, seed.FLAVOR),
    )["stack"]["id"]
    helpers.wait_for_status(heat, stack_id, "CREATE_COMPLETE", timeout=900)
    times["create"] = time.monotonic() - began
    began = time.monotonic()
    heat.stacks.update(
        stack_id, template=_template(cloud, count, seed.FLAVOR_BIG)
    )
    helpers.wait_for_status(heat, stack_id, "UPDATE_COMPLETE", timeout=900)
    times["resize"] = time.monotonic() - began
    big = conn.compute.find_flavor(seed.FLAVOR_BIG)
    servers = [s for s in conn.compute.servers() if s.name.startswith("bench")]
    assert len(servers) == count, servers
    assert all(s.flavor.name == big.name for s in servers)
    began = time.monotonic()
    heat.stacks.delete(stack_id)
    helpers.wait_for_status(heat, stack_id, "DELETE_COMPLETE", timeout=900)
    times["delete"] = time.monotonic() - began
    _wait(lambda: not list(conn.compute.servers()))
    return times


def direct_round(cloud, conn, count):
    """{phase: seconds} for the same work straight through openstacksdk."""
    compute = conn.compute
    image = conn.image.find_image(cloud.image)
    small = compute.find_flavor(seed.FLAVOR)
    big = compute.find_flavor(seed.FLAVOR_BIG)
    net = conn.network.find_network(cloud.network)
    times = {}

    def statuses(ids):
        return [compute.get_server(i).status for i in ids]

    began = time.monotonic()
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
    times["create"] = time.monotonic() - began
    began = time.monotonic()
    for server_id in ids:
        compute.resize_server(server_id, big.id)
    pending = set(ids)
    while pending:
        for server_id in list(pending):
            if compute.get_server(server_id).status == "VERIFY_RESIZE":
                compute.confirm_server_resize(server_id)
                pending.discard(server_id)
        time.sleep(POLL)
    _wait(lambda: all(s == "ACTIVE" for s in statuses(ids)))
    times["resize"] = time.monotonic() - began
    began = time.monotonic()
    for server_id in ids:
        compute.delete_server(server_id)
    _wait(lambda: not any(compute.find_server(i) for i in ids))
    times["delete"] = time.monotonic() - began
    return times


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


def run(count, rounds, workdir):
    cloud, started = _cloud(os.path.join(workdir, "cloud"))
    _quota(cloud, count)
    conn = cloud.connect("demo")
    results = {"heat_lite": [], "direct": []}
    try:
        heat_dir = os.path.join(workdir, "heat")
        os.makedirs(heat_dir)
        deps = cloud_mod.heat_deployment(cloud, heat_dir, "demo")
        dep = next(deps)
        try:
            for _ in range(rounds):
                results["heat_lite"].append(
                    heat_round(dep, cloud, conn, count)
                )
                results["direct"].append(direct_round(cloud, conn, count))
        finally:
            deps.close()
    finally:
        conn.close()
        if started is not None:
            mc_cloud.Cloud(started, log=lambda *a: None).stop()
    return results


def summarize(results, count):
    summary = {}
    for phase in PHASES:
        heat = statistics.median(r[phase] for r in results["heat_lite"])
        direct = statistics.median(r[phase] for r in results["direct"])
        summary[phase] = {
            "heat_lite_s": round(heat, 2),
            "direct_s": round(direct, 2),
            "beyond_cloud_per_server_s": round((heat - direct) / count, 3),
        }
    return summary


def markdown(summary, count, rounds):
    lines = [
        "# heat_lite on a real cloud: a ResourceGroup of %d servers" % count,
        "",
        "Made by `python -m bench.cloud` (see its docstring) on %s, %d "
        "cores, the test cloud (`tools/minicloud`: Nova with its fake "
        "driver, Neutron ML2 without agents) on the same machine; "
        "median of %d rounds. *direct* is the same work straight through "
        "openstacksdk, all servers at once: the cloud's own time."
        % (platform.machine(), os.cpu_count(), rounds),
        "",
        "| phase | heat_lite (s) | direct (s) | beyond the cloud, "
        "per server (s) |",
        "| --- | ---: | ---: | ---: |",
    ]
    for phase in PHASES:
        row = summary[phase]
        lines.append(
            "| %s | %.2f | %.2f | %.3f |"
            % (
                phase,
                row["heat_lite_s"],
                row["direct_s"],
                row["beyond_cloud_per_server_s"],
            )
        )
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.cloud")
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=os.path.join("doc", "bench"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-cloud-") as workdir:
        results = run(args.count, args.rounds, workdir)
    summary = summarize(results, args.count)
    with open(os.path.join(args.out, "cloud.json"), "w") as f:
        json.dump(
            {"count": args.count, "rounds": results, "summary": summary},
            f,
            indent=2,
        )
    with open(os.path.join(args.out, "cloud.md"), "w") as f:
        f.write(markdown(summary, args.count, args.rounds))
    print(markdown(summary, args.count, args.rounds))


if __name__ == "__main__":
    main()
