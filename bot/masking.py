"""Secrets a PostgreSQL URL can carry, masked wherever the URL or an error about it is printed or logged.

libpq takes a password from the user info (`user:pass@`) and from the query (`?password=`,
`?sslpassword=`, percent-encoded keys included), and its own errors may quote a piece of the URL
(`invalid percent-encoded token: "p%zzass"`). So the user info's password and every query value whose
key is not a known harmless setting (host, port, dbname, sslmode, passfile — a path, not a secret — ...)
are masked, and the same values are scrubbed from any error text about the URL.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

MASK = "***"
# libpq connection settings that are not secrets (https://www.postgresql.org/docs/current/libpq-connect.html);
# any other query key's value is masked, so a new or misspelled secret key is masked too.
_HARMLESS = frozenset({
    "host", "hostaddr", "port", "dbname", "user", "passfile", "connect_timeout", "client_encoding", "options",
    "application_name", "fallback_application_name", "keepalives", "keepalives_idle", "keepalives_interval",
    "keepalives_count", "tcp_user_timeout", "replication", "gssencmode", "sslmode", "sslnegotiation",
    "sslcompression", "sslcert", "sslkey", "sslcertmode", "sslrootcert", "sslcrl", "sslcrldir", "sslsni",
    "requirepeer", "ssl_min_protocol_version", "ssl_max_protocol_version", "min_protocol_version",
    "max_protocol_version", "krbsrvname", "gsslib", "gssdelegation", "service", "target_session_attrs",
    "load_balance_hosts", "require_auth", "channel_binding",
})
_SETTINGS = _HARMLESS | {"password", "sslpassword"}
_QUERY_START = re.compile(r"\?([^=&?@/]+)=")
_SHORTEST_SCRUBBED = 3  # shorter values would garble messages more than they reveal


def _split(url: str) -> tuple[str, str | None, str, str | None]:
    """scheme://, user info (None without an `@`), hosts and path, query (None without a `?`).

    A password may hold an unencoded `@`, `?` or `/`, and a query value an `@`: the query starts at the
    first `?` followed by a libpq setting's name and `=`, else after the last `@`; the user info ends at
    the last `@` before the query. Showing too little beats showing a secret."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return "", None, url, None
    query_at = next((m.start() for m in _QUERY_START.finditer(rest)
                     if unquote(m.group(1)).strip().lower() in _SETTINGS), -1)
    if query_at < 0:
        query_at = rest.find("?", rest.rfind("@") + 1)
    before_query = rest if query_at < 0 else rest[:query_at]
    query = None if query_at < 0 else rest[query_at + 1:]
    at = before_query.rfind("@")
    if at < 0:
        return scheme + sep, None, before_query, query
    return scheme + sep, before_query[:at], before_query[at + 1:], query


def _query_pairs(query: str) -> list[tuple[str, str | None]]:
    return [(k, v if sep else None) for k, sep, v in (part.partition("=") for part in query.split("&"))]


def _secret_key(key: str) -> bool:
    return unquote(key).strip().lower() not in _HARMLESS


def mask_url(url: str) -> str:
    """The URL as it may be shown: its password and every query value that may be a secret are `***`."""
    scheme, userinfo, hosts, query = _split(url)
    shown = scheme
    if userinfo is not None:
        user, colon, _ = userinfo.partition(":")
        if any(c in user for c in "/?&="):  # not a user name: the URL is too mangled to tell its parts apart
            user, colon = MASK, ""
        shown += f"{user}:{MASK}@" if colon else f"{user}@"
    shown += hosts
    if query is not None:
        shown += "?" + "&".join(
            (f"{k}={MASK}" if _secret_key(k) else f"{k}={v}") if v is not None else MASK
            for k, v in _query_pairs(query))
    return shown


def url_secrets(url: str | None) -> list[str]:
    """Every secret the URL holds, as written and percent-decoded: for scrubbing free text (errors, logs)."""
    if not url:
        return []
    _, userinfo, _, query = _split(url)
    found: list[str] = []
    if userinfo is not None and ":" in userinfo:
        found.append(userinfo.partition(":")[2])
    if query is not None:
        found += [v if v is not None else k for k, v in _query_pairs(query) if v is None or _secret_key(k)]
    values = {form for value in found for form in (value, unquote(value)) if len(form) >= _SHORTEST_SCRUBBED}
    return sorted(values, key=len, reverse=True)  # the longest first: a secret may contain another


def mask_text(text: str, url: str) -> str:
    """`text` (an error message about `url`) with the URL shown masked and its secrets scrubbed."""
    text = text.replace(url, mask_url(url))
    for secret in url_secrets(url):
        text = text.replace(secret, MASK)
    return text
