"""[apps] allowed_sources: which git URLs an app may name."""

import pytest

from heat_lite.apps import sources

ALLOWED = [
    "https://git.example.com/*",
    "ssh://git.example.com/team-*/*",
    "git://git.example.com:9418/*",
    "file:///srv/git/*",
]


@pytest.mark.parametrize(
    "url, scheme",
    [
        ("https://git.example.com/team/app.git", "https"),
        ("HTTPS://GIT.EXAMPLE.COM/team/app.git", "https"),
        ("ssh://git@git.example.com/team-a/app.git", "ssh"),
        ("git://git.example.com:9418/app.git", "git"),
        ("file:///srv/git/app.git", "file"),
        ("file://localhost/srv/git/app.git", "file"),
    ],
)
def test_allowed(url, scheme):
    assert sources.check_source(url, ALLOWED) == scheme


@pytest.mark.parametrize(
    "url",
    [
        # Another host, or a look-alike.
        "https://git.example.com.evil.net/x",
        "https://git.example.com@169.254.169.254/latest/meta-data",
        "https://169.254.169.254/latest/meta-data",
        "https://evil.net/git.example.com/x",
        # Another port than the pattern's (none: the default port only).
        "https://git.example.com:8443/x",
        "git://git.example.com/app.git",
        # Another scheme than the host's pattern.
        "http://git.example.com/x",
        "ssh://git.example.com/other/app.git",
        # Passwords, options, traversal, whitespace, odd transports.
        "https://user:pw@git.example.com/x",
        "-uhttps://git.example.com/x",
        "file:///srv/git/../../etc/shadow",
        "file:///srv/git/%2e%2e/%2E%2E/etc",
        "file://otherhost/srv/git/x",
        "https://git.example.com/x y",
        "https://git.example.com/x\n",
        "https://git.example.com\\@evil.net/x",
        "https://git.example.com/x?upload-pack=1",
        "git.example.com:team/app.git",
        "ext::sh -c touch% /tmp/pwned",
        "fd::17",
        "/srv/git/app.git",
        "",
        None,
    ],
)
def test_refused(url):
    with pytest.raises(sources.SourceNotAllowed) as err:
        sources.check_source(url, ALLOWED)
    assert err.value.code == 400


def test_nothing_is_allowed_by_default():
    with pytest.raises(sources.SourceNotAllowed) as err:
        sources.check_source("https://git.example.com/x", [])
    assert "allowed_sources is empty" in str(err.value)


def test_schemes_can_be_narrowed():
    with pytest.raises(sources.SourceNotAllowed):
        sources.check_source(
            "file:///srv/git/x", ALLOWED, schemes=("http", "https")
        )


def test_ipv6_hosts_are_bracketed():
    allowed = ["http://[::1]:8080/*"]
    assert sources.check_source("http://[::1]:8080/r.git", allowed) == "http"
    with pytest.raises(sources.SourceNotAllowed):
        sources.check_source("http://[::1]:8081/r.git", allowed)


@pytest.mark.parametrize(
    "url",
    [
        "ssh://-oProxyCommand=touch%20x/app.git",
        "ssh://-oProxyCommand=x@git.example.com/app.git",
        "ssh://git.example.com%2f@evil/app.git",
        "https://g%69t.example.com/app.git",
    ],
)
def test_hosts_and_users_must_be_plain(url):
    with pytest.raises(sources.SourceNotAllowed, match="not plain"):
        sources.check_source(url, ["ssh://*/*", "https://*/*"])


@pytest.mark.parametrize(
    "pattern",
    ["git.example.com/*", "https://u:pw@h/*", "ftp://h/*", "https://h:x/*"],
)
def test_bad_operator_pattern_is_a_configuration_error(pattern):
    with pytest.raises(sources.InvalidSourcePattern) as err:
        sources.check_source("https://h/x", [pattern])
    assert err.value.code == 500
    with pytest.raises(sources.InvalidSourcePattern, match="allowed_sources"):
        sources.check_patterns(["https://h/*", pattern])


def test_good_patterns_pass_the_start_up_check():
    sources.check_patterns(ALLOWED + ["git://*:*/*", "https://[::1]:8080/*"])
