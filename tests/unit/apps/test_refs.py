"""Ref and commit names, checked in pure Python, agree with git."""

import subprocess

import pytest

from heat_lite.apps import refs

CASES = [
    "refs/heads/main",
    "refs/heads/feature/x-1",
    "refs/tags/v1.0",
    "refs/heads/a.b",
    "refs/heads/ünïcode",
    "main",
    "refs/heads/a..b",
    "refs/heads/.hidden",
    "refs/heads/x.lock",
    "refs/heads/x/",
    "refs/heads/x.",
    "refs/heads//x",
    "refs/heads/a b",
    "refs/heads/a~1",
    "refs/heads/a^",
    "refs/heads/a:b",
    "refs/heads/a?",
    "refs/heads/a*",
    "refs/heads/a[",
    "refs/heads/a\\b",
    "refs/heads/a@{1}",
    "refs/heads/\x01",
    "@",
    "/refs/heads/x",
]


@pytest.mark.parametrize("ref", CASES)
def test_agrees_with_git_check_ref_format(ref):
    git = subprocess.run(
        ["git", "check-ref-format", ref], capture_output=True
    ).returncode
    assert refs.is_valid_ref(ref) == (git == 0)


def test_dash_is_refused_though_git_takes_it():
    assert not refs.is_valid_ref("-refs/heads/x")


def test_commit_names():
    assert refs.is_commit("a" * 40)
    assert refs.is_commit("0123456789abcdef" * 4)
    assert not refs.is_commit("A" * 40)
    assert not refs.is_commit("a" * 39)
    assert not refs.is_commit("a" * 41)
    assert not refs.is_commit("0" * 40)
    assert not refs.is_commit(None)
    assert refs.is_zero_commit("0" * 40) and refs.is_zero_commit("0" * 64)
    assert not refs.is_zero_commit("0" * 39)


def test_branch_of():
    assert refs.branch_of("refs/heads/feature/x") == "feature/x"
    assert refs.branch_of("refs/tags/v1") is None
    assert refs.branch_of("refs/heads/") is None
