"""Keyset paging: the rows that come after a marker row in sort order.

Lists of stacks, events and software configs page by a marker (the last
row the caller saw) instead of an offset, so that a page is stable while
rows are added.
"""

import sqlalchemy as sa

from heat_lite.common import exception


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


def page(session, query, columns, sort_dir, limit, marker, marker_row):
    """``query`` ordered by ``columns`` (the last one unique, e.g. the id)
    in ``sort_dir`` and cut to the page after ``marker``.

    ``marker_row(marker)`` is the SELECT of the marker's row, scoped to
    what the caller may see; a marker it does not find is 400 Invalid
    (a marker of another project is not told apart from a wrong one).
    """
    if marker:
        ref = session.execute(marker_row(marker)).first()
        if ref is None:
            raise exception.Invalid(message="Invalid marker: %s" % marker)
        query = query.where(after(ref, columns, sort_dir))
    direction = sa.desc if sort_dir == "desc" else sa.asc
    query = query.order_by(*[direction(c) for c in columns])
    if limit is not None:
        query = query.limit(limit)
    return query
