"""``expected_failures.txt``: tests this environment cannot pass.

One Python regex per line (matched with ``re.search`` against the test
id, as tempest's ``--exclude-list`` does), then ``# reason``. Blank lines
and lines that start with ``#`` are comments. A line without a reason is
an error: the list is only for reasons of the environment (a service the
test cloud does not have, no guest agent under Nova's fake driver), and
each must be said.
"""

import dataclasses
import os
import re

PATH = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "expected_failures.txt"
)


@dataclasses.dataclass(frozen=True)
class Entry:
    regex: str
    reason: str
    line: int

    def matches(self, test_id):
        return re.search(self.regex, test_id) is not None


def parse(text):
    """[Entry] of the list's text.

    :raises ValueError: naming the line, for a missing reason or a regex
        that does not compile.
    """
    entries = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        regex, sep, reason = line.partition(" #")
        regex, reason = regex.strip(), reason.strip()
        if not sep or not reason:
            raise ValueError("line %d: no '# reason' for %r" % (number, regex))
        try:
            re.compile(regex)
        except re.error as exc:
            raise ValueError(
                "line %d: bad regex %r: %s" % (number, regex, exc)
            ) from None
        entries.append(Entry(regex, reason, number))
    return entries


def load(path=PATH):
    with open(path) as f:
        return parse(f.read())


def exclude_list(entries):
    """The text of a tempest ``--exclude-list`` file."""
    return "".join("%s\n" % e.regex for e in entries)


def reason_for(entries, test_id):
    """The reason of the first entry matching ``test_id``, or None."""
    for entry in entries:
        if entry.matches(test_id):
            return entry.reason
    return None
