"""What webfetch may reach: the canonical spelling of a URL (the permission subject) and
the addresses it refuses without tools.webfetch.allowPrivate."""

from __future__ import annotations

import ipaddress

import pytest

from app.core.errors import ToolError
from app.tools.web_address import web_target, why_refused


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("HTTPS://Example.COM:443/%61pi?q=%2f#frag", "https://example.com/api?q=%2F"),
        ("http://example.com", "http://example.com/"),
        ("http://example.com.:8080/a b", "http://example.com:8080/a%20b"),
        ("https://bücher.de/", "https://xn--bcher-kva.de/"),
        ("http://[::1]:80/x", "http://[::1]/x"),
        ("  https://example.com/path  ", "https://example.com/path"),
    ],
)
def test_urls_are_spelled_one_way_for_the_rules(given, canonical):
    assert web_target(given).url == canonical


def test_a_redirect_location_is_resolved_against_the_page():
    page = web_target("https://example.com/docs/a/b")
    assert web_target("../c?x=1", base=page).url == "https://example.com/docs/c?x=1"
    assert web_target("//other.example/", base=page).url == "https://other.example/"


def test_an_overlong_url_is_refused():
    with pytest.raises(ToolError, match="the URL is 4,1[0-9]{2} characters, over the limit of 4,096"):
        web_target("https://example.com/" + "a" * 4100)


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "a loopback address"),
        ("::1", "a loopback address"),
        ("10.0.0.8", "a private address"),
        ("172.16.5.4", "a private address"),
        ("192.168.1.1", "a private address"),
        ("fd00::1", "a private address"),
        ("169.254.169.254", "a link-local address"),
        ("fe80::1", "a link-local address"),
        ("100.64.0.1", "a non-global address"),
        ("0.0.0.0", "a private address"),
        ("224.0.0.1", "a multicast address"),
        ("::ffff:127.0.0.1", "a loopback address"),
        ("::ffff:10.0.0.1", "a private address"),
        ("2002:7f00:1::", "a loopback address"),  # 6to4 wrapping 127.0.0.1
        ("64:ff9b::a9fe:a9fe", "a link-local address"),  # NAT64 wrapping 169.254.169.254
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", "a private address"),  # Teredo (2001::/32)
        ("240.0.0.1", "a private address"),  # reserved (240/4)
        ("8.8.8.8", None),
        ("2606:4700:4700::1111", None),
        ("::ffff:8.8.8.8", None),  # mapped: the IPv4 address it carries decides
        ("2002:808:808::", None),  # 6to4 wrapping 8.8.8.8
    ],
)
def test_every_non_global_address_is_named(address, kind):
    assert why_refused(ipaddress.ip_address(address)) == kind
