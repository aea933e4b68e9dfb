"""Results of a tempest run, per test module (pure: rows in, table out).

The rows are ``subunit2csv``'s (test id, status, start, stop) of the
run's subunit stream. A test's module is the dotted path under
``heat_tempest_plugin.tests`` up to its ``test_*`` module (``api.
test_heat_api``, ``functional.test_preview``); the gabbi API tests, all
of one Python module, are split by their YAML file instead.
"""

import csv
import io
import re

PREFIX = "heat_tempest_plugin.tests."
PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"
# subunit2csv writes testtools' outcome names; any other status (a test
# cut short) counts as failed.
_STATUS = {
    "success": PASSED,
    "expectedfailure": PASSED,
    "skip": SKIPPED,
}
_ATTRS = re.compile(r"\[.*\]$")


def parse_csv(text):
    """[(test id, status)] of subunit2csv output (header row skipped)."""
    rows = list(csv.reader(io.StringIO(text)))
    if rows and rows[0][:2] == ["test", "status"]:
        rows = rows[1:]
    return [(row[0], row[1]) for row in rows if len(row) >= 2]


def module_of(test_id):
    name = _ATTRS.sub("", test_id)
    if name.startswith(PREFIX):
        name = name[len(PREFIX) :]
    parts = name.split(".")
    for i, part in enumerate(parts):
        if part.startswith("test_"):
            if part == "test_heat_api" and i + 1 < len(parts):
                # gabbi: test_heat_api.<yaml file>_<test name>
                return "%s.%s" % (
                    ".".join(parts[: i + 1]),
                    parts[i + 1].split("_", 1)[0],
                )
            return ".".join(parts[: i + 1])
    return ".".join(parts[:-1]) or name


def summarise(rows, reason_for=lambda test_id: None):
    """(per-module counts, failures).

    :param reason_for: test id -> reason it is expected to fail, or None.
    :returns: ({module: {passed, failed, skipped}} sorted by module,
        [{test, module, expected}] of the failed tests).
    """
    table, failures = {}, []
    for test_id, status in rows:
        if test_id.startswith("process-returncode"):
            continue
        kind = _STATUS.get(status, FAILED)
        module = module_of(test_id)
        counts = table.setdefault(module, {PASSED: 0, FAILED: 0, SKIPPED: 0})
        counts[kind] += 1
        if kind == FAILED:
            failures.append(
                {
                    "test": test_id,
                    "module": module,
                    "expected": reason_for(test_id),
                }
            )
    return dict(sorted(table.items())), failures


def unexpected(failures):
    return [f for f in failures if not f["expected"]]


def format_table(table):
    """A plain-text table, one row per module and a total."""
    width = max([len("module"), len("total")] + [len(m) for m in table])
    line = "%-*s %7s %7s %8s"
    out = [line % (width, "module", PASSED, FAILED, SKIPPED)]
    totals = {PASSED: 0, FAILED: 0, SKIPPED: 0}
    for module, counts in table.items():
        out.append(
            line
            % (width, module, counts[PASSED], counts[FAILED], counts[SKIPPED])
        )
        for key in totals:
            totals[key] += counts[key]
    out.append(
        line
        % (width, "total", totals[PASSED], totals[FAILED], totals[SKIPPED])
    )
    return "\n".join(out)
