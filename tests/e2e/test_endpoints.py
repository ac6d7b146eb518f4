"""bot/endpoints.py: the env-only test hook that points discord.py at another Discord."""

from __future__ import annotations

import contextlib
import ipaddress

import discord.gateway
import discord.http
import discord.webhook.async_
import pytest
import yarl
from hypothesis import given
from hypothesis import strategies as st

from bot.endpoints import API_BASE_ENV, GATEWAY_ENV, apply_endpoints, read_endpoints
from bot.errors import ConfigError


@pytest.fixture
def restore_discord(monkeypatch: pytest.MonkeyPatch) -> None:
    """apply_endpoints mutates discord.py's class attributes: put them back after each test."""
    monkeypatch.setattr(discord.http.Route, "BASE", discord.http.Route.BASE)
    monkeypatch.setattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY)


def test_unset_means_real_discord_and_changes_nothing(restore_discord: None) -> None:
    before = (discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY)
    endpoints = apply_endpoints({})
    assert not endpoints.overridden
    assert before == (discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY)
    assert discord.http.Route.BASE == "https://discord.com/api/v10"


def test_apply_points_rest_webhooks_and_gateway_at_the_fake(restore_discord: None) -> None:
    apply_endpoints({API_BASE_ENV: "http://127.0.0.1:8123/api/v10/", GATEWAY_ENV: "ws://127.0.0.1:8123/gateway"})
    assert discord.http.Route.BASE == "http://127.0.0.1:8123/api/v10"
    route = discord.webhook.async_.Route("POST", "/interactions/{webhook_id}/{webhook_token}/callback",
                                         webhook_id=1, webhook_token="t")
    assert route.url == "http://127.0.0.1:8123/api/v10/interactions/1/t/callback"
    assert yarl.URL("ws://127.0.0.1:8123/gateway") == discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY


@pytest.mark.parametrize("env", [
    {API_BASE_ENV: "http://discord.example.com/api/v10"},        # plaintext to a remote host: the token would leak
    {GATEWAY_ENV: "ws://10.0.0.5/gateway"},
    {API_BASE_ENV: "ftp://127.0.0.1/api"},
    {API_BASE_ENV: "https:///nohost"},
    {API_BASE_ENV: "http://127.0.0.1/api?x=1"},
    {GATEWAY_ENV: "http://127.0.0.1/gateway"},                    # a gateway is ws/wss
    {API_BASE_ENV: "http://127.0.0.1/a b"},
    {API_BASE_ENV: "http://[::1"},
    {API_BASE_ENV: "http://127.0.0.1:99999/api"},
    {GATEWAY_ENV: "ws://127.0.0.1:x/gw"},
    # urllib's urlsplit reads the host as 127.0.0.1, the HTTP client (yarl) as evil.com: refused
    {API_BASE_ENV: "http://evil.com\\@127.0.0.1:9/api/v10"},
    {GATEWAY_ENV: "ws://evil.com\\@127.0.0.1:9/gw"},
    {API_BASE_ENV: "http://user:pw@127.0.0.1:9/api/v10"},
    {API_BASE_ENV: "http://evil.com#@127.0.0.1:9/api/v10"},
])
def test_unsafe_or_malformed_overrides_are_config_errors(env: dict[str, str]) -> None:
    with pytest.raises(ConfigError):
        read_endpoints(env)


def test_https_anywhere_and_plain_to_loopback_are_accepted() -> None:
    assert read_endpoints({API_BASE_ENV: "https://proxy.example.com/api/v10"}).api_base == "https://proxy.example.com/api/v10"
    assert read_endpoints({GATEWAY_ENV: "ws://[::1]:9/gw"}).gateway == "ws://[::1]:9/gw"
    assert read_endpoints({API_BASE_ENV: "http://localhost:1/api"}).api_base == "http://localhost:1/api"


def test_the_loopback_check_reads_the_host_the_http_client_connects_to() -> None:
    """Regression (issue 9): the check and discord.py's client must parse the URL the same way."""
    with pytest.raises(ConfigError):
        read_endpoints({API_BASE_ENV: "http://evil.com\\@127.0.0.1:9/api/v10"})


@given(st.text(max_size=200))
def test_an_accepted_plain_url_is_loopback_to_the_http_client(raw: str) -> None:
    try:
        api = read_endpoints({API_BASE_ENV: "http://" + raw}).api_base
    except ConfigError:
        return
    assert api is not None
    host = yarl.URL(api).host
    assert host == "localhost" or ipaddress.ip_address(host).is_loopback


@given(st.text(max_size=200))
def test_any_value_is_accepted_or_a_config_error(raw: str) -> None:
    for name in (API_BASE_ENV, GATEWAY_ENV):
        with contextlib.suppress(ConfigError):
            read_endpoints({name: raw})


def test_bad_override_stops_the_bot_with_exit_2(tmp_path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    from bot.__main__ import main
    from tests.fakediscord.payloads import fake_token

    monkeypatch.setenv("DISCORD_TOKEN", fake_token(1))
    monkeypatch.setenv("COGITATOR_DB", str(tmp_path / "s.db"))
    monkeypatch.setenv("COGITATOR_DATA", str(tmp_path / "d"))
    monkeypatch.setenv(API_BASE_ENV, "http://evil.example.com/api/v10")
    assert main(["run"]) == 2
    assert "only allowed to a loopback address" in capsys.readouterr().err
