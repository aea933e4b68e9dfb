"""Keyset paging: the rows that come after a marker row in sort order.

Lists of stacks, events and software configs page by a marker (the last
row the caller saw) instead of an offset, so that a page is stable while
rows are added.
"""

import sqlalchemy as sa


def after(ref, columns, sort_dir):
    """The keyset condition "rows strictly after ``ref`` in sort order"."""
    compare = (
        (lambda c, v: c < v) if sort_dir == "desc" else (lambda c, v: c > v)
    )
    clauses = []
    for i, column in enumerate(columns):
        equal = [columns[j] == getattr(ref, columns[j].name) for j in range(i)]
        clauses.append(
            sa.and_(*equal, compare(column, getattr(ref, column.name)))
        )
    return sa.or_(*clauses)
