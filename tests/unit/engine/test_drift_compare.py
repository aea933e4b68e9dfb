"""engine.drift.compare: what counts as drift (pure)."""

from heat_lite.engine.drift import compare


def test_only_what_the_template_set_is_compared():
    stored = {"name": "a", "admin_state_up": True, "mtu": 1450}
    live = {"name": "b", "admin_state_up": False, "mtu": 1500}
    found = compare.differences(stored, {"name"}, live, {})
    assert found == [{"name": "name", "expected": "a", "actual": "b"}]


def test_unknown_template_compares_every_stored_property():
    found = compare.differences({"a": 1, "b": 2}, None, {"a": 1, "b": 3}, {})
    assert [f["name"] for f in found] == ["b"]


def test_observed_values_use_the_plugins_expectations():
    found = compare.differences(
        {}, set(), {"status": "SHUTOFF"}, {"status": "ACTIVE"}
    )
    assert found == [
        {"name": "status", "expected": "ACTIVE", "actual": "SHUTOFF"}
    ]
    assert not compare.differences(
        {}, set(), {"status": "ACTIVE"}, {"status": "ACTIVE"}
    )


def test_lists_of_mappings_compare_as_multisets():
    pools = [{"start": "10.0.0.2", "end": "10.0.0.9"}, {"start": "a"}]
    assert compare.same(pools, list(reversed(pools)))
    assert not compare.same(pools, pools[:1])
    # Plain lists keep their order (DNS servers are tried in order).
    assert not compare.same(["1.1.1.1", "8.8.8.8"], ["8.8.8.8", "1.1.1.1"])


def test_deprecated_names_count_as_their_new_names():
    assert compare.template_set({"old": 1, "b": 2}, {"old": "new"}) == {
        "new",
        "b",
    }
    assert compare.template_set(None) is None


def test_rollup():
    def entry(status):
        return {"drift_status": status}

    assert compare.rollup([]) == compare.IN_SYNC
    assert (
        compare.rollup([entry(compare.IN_SYNC), entry(compare.NOT_CHECKED)])
        == compare.IN_SYNC
    )
    assert compare.rollup([entry(compare.DELETED)]) == compare.DRIFTED
