"""``python -m tools.tempest run|stop``: Heat's own tests against heat_lite.

``run`` starts the test cloud and heat_lite (keystone mode) in a work
directory of their own, runs heat-tempest-plugin's suite from tempest's
cached venv, prints the results per test module (and writes them as
``<workdir>/summary.json``), and stops everything again, also on failure
or Ctrl-C. It exits 1 when a test that is not in expected_failures.txt
fails. ``stop`` cleans up after a run that was killed outright.
``run --service heat`` runs the same suite against OpenStack Heat 27
instead (``tools.tempest.heat``), for the comparison in doc/tempest.md.
Run from heat_lite's own venv at the top of the tree.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time

from tools.minicloud import catalog
from tools.minicloud import heat_lite as heat_mod
from tools.minicloud import layout as layout_mod
from tools.minicloud import venv as mc_venv
from tools.tempest import conf, expected, summary, venv

ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
)
SUITES = {
    "api": "api",
    "functional": "functional",
    "scenario": "scenario",
    "all": "(?:api|functional|scenario)",
}
SERVICES = ("heat_lite", "heat")
DEFAULT_WORKDIR = os.path.join(mc_venv.DEFAULT_CACHE, "tempest-run")


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m tools.tempest", description=__doc__.split("\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="start, run the suite, stop")
    stop = sub.add_parser("stop", help="stop what a killed run left")
    for p in (run, stop):
        p.add_argument(
            "--workdir",
            default=DEFAULT_WORKDIR,
            help="holds the cloud, heat_lite and tempest "
            "(default %(default)s)",
        )
    run.add_argument("--suite", choices=sorted(SUITES), default="api")
    run.add_argument(
        "--service",
        choices=SERVICES,
        default="heat_lite",
        help="the orchestration service under test: heat_lite, or "
        "OpenStack Heat 27 from the benchmarks' venv for the comparison "
        "in doc/tempest.md (default %(default)s)",
    )
    run.add_argument(
        "--cloud",
        default="",
        help="use the test cloud already running in this directory "
        "(python -m tools.minicloud --dir DIR start) and leave it "
        "running, instead of starting one of its own",
    )
    run.add_argument(
        "--regex", default="", help="only the suite's tests whose id matches"
    )
    run.add_argument(
        "--concurrency",
        type=int,
        default=2,
        help="tempest workers (default %(default)s)",
    )
    run.add_argument(
        "--build-timeout",
        type=int,
        default=300,
        help="[heat_plugin] build_timeout: seconds a test waits for "
        "a stack (default %(default)s)",
    )
    return parser


def test_regex(suite, regex=""):
    """tempest's --regex for a suite, narrowed by ``regex`` if given."""
    base = r"^heat_tempest_plugin\.tests\.%s\." % SUITES[suite]
    return base + ("(?=.*(?:%s))" % regex if regex else "")


def _log(message):
    print("[tempest] %s" % message, flush=True)


def _minicloud(directory, *args, log):
    """``python -m tools.minicloud --dir directory *args``.

    Interrupted, it gets a SIGINT and time to stop what it had started
    (its ``start`` cleans up after itself), rather than the SIGKILL
    ``subprocess.run`` would send.
    """
    command = [sys.executable, "-m", "tools.minicloud", "--dir", directory]
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            command + list(args),
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            code = proc.wait()
        except BaseException:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            raise
    if code:
        raise RuntimeError(
            "python -m tools.minicloud %s failed; see %s" % (args[0], log)
        )


def _terminate(signum, frame):
    raise KeyboardInterrupt("signal %d" % signum)


def stop(workdir):
    """Stop heat_lite and the cloud recorded under ``workdir``, if any
    (a cloud given with ``--cloud`` lives elsewhere and is left alone)."""
    try:
        # heat_lite's and Heat's (tools.tempest.heat) records alike.
        heat_mod.Heat.load(os.path.join(workdir, "heat")).stop()
        _log("the orchestration service stopped")
    except FileNotFoundError:
        pass
    cloud_dir = os.path.join(workdir, "cloud")
    if not os.path.exists(os.path.join(cloud_dir, "state.json")):
        return
    # Even with no process recorded: a start cut short may have made
    # the databases and vhost already (stop drops them if they exist).
    _minicloud(cloud_dir, "stop", log=os.path.join(workdir, "minicloud.log"))
    _log("test cloud stopped")


def _leftover(workdir):
    """Whether heat_lite or a cloud of an earlier run is recorded as
    running under ``workdir``."""
    if os.path.exists(os.path.join(workdir, "heat", "heat.json")):
        return True
    try:
        return bool(
            layout_mod.Layout.load(os.path.join(workdir, "cloud")).pids
        )
    except FileNotFoundError:
        return False


def run(args):
    workdir = os.path.abspath(args.workdir)
    entries = expected.load()
    os.makedirs(workdir, exist_ok=True)
    if _leftover(workdir):
        sys.exit(
            "%s holds a run that was not stopped: python -m tools.tempest "
            "stop --workdir %s" % (workdir, workdir)
        )
    began = time.monotonic()
    venv_path, spent = venv.ensure(log=_log)
    _log(
        "tempest venv %s%s"
        % (venv_path, " (installed in %.0f s)" % spent if spent else "")
    )
    signal.signal(signal.SIGTERM, _terminate)
    try:
        return _run(args, workdir, venv_path, entries, began)
    finally:
        stop(workdir)


def start_service(service, directory, lay):
    """Start ``service`` (one of SERVICES) in keystone mode against the
    cloud of ``lay``; return its API root."""
    _log("starting %s (keystone mode)" % service)
    if service == "heat":
        # Only here: bench (and harness, which imports pytest) load for
        # the comparison alone.
        from tools.tempest import heat as real_heat

        return real_heat.start(directory, lay, log=_log).url
    return heat_mod.Heat(directory).start(lay).url


def _run(args, workdir, venv_path, entries, began):
    cloud_dir = os.path.join(workdir, "cloud")
    if args.cloud:
        cloud_dir = os.path.abspath(args.cloud)
        _log("using the test cloud running in %s" % cloud_dir)
    else:
        _log("starting the test cloud in %s" % cloud_dir)
        _minicloud(
            cloud_dir,
            "start",
            "--base-port",
            "0",
            log=os.path.join(workdir, "minicloud.log"),
        )
    lay = layout_mod.Layout.load(cloud_dir)
    url = start_service(args.service, os.path.join(workdir, "heat"), lay)
    catalog.register_orchestration(lay, url)
    _log("%s %s is the cloud's orchestration service" % (args.service, url))
    tempest_dir = os.path.join(workdir, "tempest")
    tempest = os.path.join(venv_path, "bin", "tempest")
    if not os.path.exists(os.path.join(tempest_dir, "etc")):
        subprocess.run(
            [
                tempest,
                "init",
                "--workspace-path",
                os.path.join(workdir, "workspace.yaml"),
                tempest_dir,
            ],
            check=True,
            capture_output=True,
        )
    with open(os.path.join(tempest_dir, "etc", "tempest.conf"), "w") as f:
        f.write(
            conf.render(
                conf.values(
                    lay.auth_url,
                    lay.password,
                    build_timeout=args.build_timeout,
                )
            )
        )
    exclude = os.path.join(tempest_dir, "exclude.txt")
    with open(exclude, "w") as f:
        f.write(expected.exclude_list(entries))
    regex = test_regex(args.suite, args.regex)
    _log(
        "tempest run --regex '%s' (setup took %.0f s)"
        % (regex, time.monotonic() - began)
    )
    started = time.monotonic()
    # A fresh stestr repository: `stestr last` must not report an earlier
    # run of this workdir when this one ran nothing.
    shutil.rmtree(os.path.join(tempest_dir, ".stestr"), ignore_errors=True)
    with open(os.path.join(workdir, "tempest-run.log"), "wb") as out:
        subprocess.run(
            [
                tempest,
                "run",
                "--regex",
                regex,
                "--exclude-list",
                exclude,
                "--concurrency",
                str(args.concurrency),
            ],
            cwd=tempest_dir,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    return _report(args, workdir, venv_path, tempest_dir, entries, started)


def _report(args, workdir, venv_path, tempest_dir, entries, started):
    last = subprocess.run(
        [os.path.join(venv_path, "bin", "stestr"), "last", "--subunit"],
        cwd=tempest_dir,
        capture_output=True,
    )
    if last.returncode or not last.stdout:
        _log("no test ran; see %s/tempest-run.log" % workdir)
        return 1
    stream = last.stdout
    # subunit2csv exits 1 when the stream holds a failure: not an error.
    rows = subprocess.run(
        [os.path.join(venv_path, "bin", "subunit2csv")],
        input=stream,
        capture_output=True,
    ).stdout.decode()
    table, failures = summary.summarise(
        summary.parse_csv(rows), lambda t: expected.reason_for(entries, t)
    )
    report = {
        "suite": args.suite,
        "service": args.service,
        "regex": args.regex,
        "seconds": round(time.monotonic() - started),
        "modules": table,
        "failures": failures,
        "excluded": [{"regex": e.regex, "reason": e.reason} for e in entries],
    }
    with open(os.path.join(workdir, "summary.json"), "w") as f:
        json.dump(report, f, indent=2)
    print(summary.format_table(table))
    for failure in failures:
        print(
            "FAILED %s%s"
            % (
                failure["test"],
                " (expected: %s)" % failure["expected"]
                if failure["expected"]
                else "",
            )
        )
    _log(
        "%d s; details: %s/tempest-run.log, %s/summary.json"
        % (report["seconds"], workdir, workdir)
    )
    if not table:
        _log("no test ran")
        return 1
    return 1 if summary.unexpected(failures) else 0


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.command == "stop":
        stop(os.path.abspath(args.workdir))
        return 0
    try:
        return run(args)
    except KeyboardInterrupt as exc:
        # run() has stopped everything it started by now.
        _log("interrupted (%s)" % (exc or "Ctrl-C"))
        return 130


if __name__ == "__main__":
    sys.exit(main())
