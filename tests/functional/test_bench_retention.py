"""``python -m bench --retention --quick``: one real retention pass over a
bulk-loaded fixture on PostgreSQL leaves NEEDED exactly the images the
benchmark computes from its own data (issue 30 item 5). The image store
is a counter: no Glance serves the fixture's images (the functional
tests of retention use the test cloud's)."""

from bench import retention


def test_quick_pass_keeps_exactly_the_computed_set(tmp_path):
    figures = retention.run(retention.QUICK, tmp_path)

    assert figures["missing"] == []
    assert figures["extra"] == []
    assert figures["exact"]
    # Every kind of reason and every step is exercised, not a trivial
    # fixture: records and other holders keep images that keep_last
    # alone would not, and the pass hides, deletes and revives.
    assert figures["kept"] > 0
    assert figures["counts"]["record_images"] > 0
    assert figures["counts"]["references"] > 0
    calls = figures["pass"]["store_calls"]
    assert calls["hide"] and calls["delete"] and calls["unhide"]
    assert figures["pass"]["sql_statements"] > 0
    assert figures["needed_page"]["seconds_max"] < 1.0


def test_kept_set_is_more_than_keep_last():
    data = retention.generate(retention.QUICK)
    by_records = retention.expected_kept(data, keep_last=0)
    with_newest = retention.expected_kept(data)
    assert by_records and with_newest - by_records
