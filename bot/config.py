"""Settings, read from the environment once and validated before anything starts."""

from __future__ import annotations

import ipaddress
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yarl

from bot.errors import ConfigError

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DATA_ROOT = PROJECT_ROOT / "data"
DEFAULT_VAR = PROJECT_ROOT / "var"

_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


@dataclass(frozen=True)
class Settings:
    token: str | None
    db_path: Path
    data_dir: Path
    log_level: str = "INFO"
    dev_guild_id: int | None = None
    sync_commands: bool = True
    web_port: int | None = None  # the live board's port; None: the web server is off
    web_bind: str = "127.0.0.1"
    web_public_url: str | None = None  # how viewers reach it (a reverse proxy's https URL), for the links
    ops_port: int | None = None  # /healthz, /readyz, /metrics (bot.ops.server); None: off
    ops_bind: str = "127.0.0.1"
    gdc_url: str = "https://raw.githubusercontent.com/game-datacards/datasources/main/11th/gdc/"
    wahapedia_url: str = "https://wahapedia.ru/wh40k10ed/"
    mfm_url: str = "https://raw.githubusercontent.com/BSData/wh40k-11e-mfm/main/data/"
    data_refresh: float | None = None  # seconds between scheduled `data update`s in the running bot; None: off
    points_poll: int = 60  # seconds between looks at the kept points versions, for points news
    database_url: str | None = None  # postgresql://…: the shared state backend instead of the SQLite file
    sim_workers: int = 2  # simulation worker processes (bot.sim.pool); 0: threads in the bot's process
    sim_worker_mb: int = 384  # address-space limit of each simulation worker, in MB

    def __repr__(self) -> str:  # never show the token, even in a debugger or a log line
        token = "set" if self.token else "unset"
        return (
            f"Settings(token={token}, db_path={self.db_path}, data_dir={self.data_dir}, "
            f"log_level={self.log_level}, dev_guild_id={self.dev_guild_id}, "
            f"database={'postgresql' if self.database_url else 'sqlite'})"
        )

    __str__ = __repr__


def _path(env: Mapping[str, str], name: str, default: Path) -> Path:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if "\x00" in raw:
        raise ConfigError(f"{name} must be a file system path, got a value with a NUL byte")
    return Path(raw).expanduser()


def _token(env: Mapping[str, str]) -> str | None:
    raw = env.get("DISCORD_TOKEN")
    if raw is None or raw.strip() == "":
        return None
    token = raw.strip()
    # A bot token is three base64url parts joined by dots; anything else cannot log in.
    parts = token.split(".")
    allowed = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    if len(parts) != 3 or not all(parts) or any(set(p) - allowed for p in parts):
        raise ConfigError("DISCORD_TOKEN is malformed: expected the bot token from the Developer Portal")
    return token


def _guild(env: Mapping[str, str]) -> int | None:
    raw = env.get("COGITATOR_DEV_GUILD", "").strip()
    if not raw:
        return None
    if not raw.isdigit() or not 0 < int(raw) < 2**64:
        raise ConfigError(f"COGITATOR_DEV_GUILD must be a guild id (digits), got {raw[:40]!r}")
    return int(raw)


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name} must be true or false, got {raw[:40]!r}")


def _port(env: Mapping[str, str], name: str = "COGITATOR_WEB_PORT") -> int | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    if not (raw.isascii() and raw.isdigit()) or not 0 < int(raw) < 65536:
        raise ConfigError(f"{name} must be a TCP port (1-65535), got {raw[:40]!r}")
    return int(raw)


def _bind(env: Mapping[str, str], name: str = "COGITATOR_WEB_BIND") -> str:
    raw = env.get(name, "").strip() or "127.0.0.1"
    try:
        ipaddress.ip_address(raw)
    except ValueError:
        raise ConfigError(f"{name} must be an IP address such as 127.0.0.1, got {raw[:40]!r}") from None
    return raw


def _public_url(env: Mapping[str, str]) -> str | None:
    raw = env.get("COGITATOR_WEB_PUBLIC_URL", "").strip()
    if not raw:
        return None
    url = yarl.URL(raw)
    if url.scheme not in ("http", "https") or not url.host or url.user or url.query_string or url.fragment:
        raise ConfigError(f"COGITATOR_WEB_PUBLIC_URL must be an http(s) URL such as https://board.example.org, "
                          f"got {raw[:60]!r}")
    return raw.rstrip("/")


def _url(env: Mapping[str, str], name: str, default: str) -> str:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not re.fullmatch(r"https?://[^\s/$.?#][^\s]*", raw) or len(raw) > 500:
        raise ConfigError(f"{name} must be an http(s) URL of a folder, got {raw[:60]!r}")
    return raw if raw.endswith("/") else raw + "/"


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
MIN_REFRESH = 600  # seconds; a shorter schedule would hammer the public sources


def _interval(env: Mapping[str, str], name: str) -> float | None:
    """"off" (default), or a period like "24h", "30m", "7d"; at least ten minutes."""
    raw = env.get(name, "").strip().lower()
    if raw in ("", "0", "off", "false", "no"):
        return None
    m = re.fullmatch(r"(\d{1,6})\s*([smhd]?)", raw)
    if not m:
        raise ConfigError(f"{name} must be off or a period such as 24h, 30m or 7d, got {raw[:40]!r}")
    seconds = int(m.group(1)) * _UNITS[m.group(2) or "s"]
    if seconds < MIN_REFRESH:
        raise ConfigError(f"{name} must be at least 10m, got {raw[:40]!r}")
    return float(seconds)


def _database_url(env: Mapping[str, str]) -> str | None:
    raw = env.get("COGITATOR_DATABASE_URL", "").strip()
    if not raw:
        return None
    if not raw.startswith(("postgresql://", "postgres://")):
        raise ConfigError("COGITATOR_DATABASE_URL must be a postgresql:// URL (leave it unset for the SQLite file "
                          "in COGITATOR_DB)")
    if "\x00" in raw:
        raise ConfigError("COGITATOR_DATABASE_URL must not contain a NUL byte")
    return raw


MAX_SIM_WORKERS = 16
MIN_SIM_WORKER_MB = 256  # a warm worker alone maps ~225 MB; below this not even a small /sim fits


def _int_setting(env: Mapping[str, str], name: str, default: int, low: int, high: int, unit: str = "") -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not (raw.isascii() and raw.isdigit()) or not low <= int(raw) <= high:
        raise ConfigError(f"{name} must be a whole number from {low} to {high}{unit}, got {raw[:40]!r}")
    return int(raw)


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Read and validate every setting; raise ConfigError with one clear sentence on the first bad one."""
    env = os.environ if env is None else env
    level = env.get("COGITATOR_LOG_LEVEL", "INFO").strip().upper() or "INFO"
    if level not in _LOG_LEVELS:
        raise ConfigError(f"COGITATOR_LOG_LEVEL must be one of {', '.join(_LOG_LEVELS)}, got {level[:40]!r}")
    db_path = _path(env, "COGITATOR_DB", DEFAULT_VAR / "cogitator.db")
    data_dir = _path(env, "COGITATOR_DATA", DEFAULT_VAR / "data")
    if db_path.exists() and db_path.is_dir():
        raise ConfigError(f"COGITATOR_DB must be a file, but {db_path} is a directory")
    if data_dir.exists() and not data_dir.is_dir():
        raise ConfigError(f"COGITATOR_DATA must be a directory, but {data_dir} is a file")
    return Settings(
        token=_token(env),
        db_path=db_path,
        data_dir=data_dir,
        log_level=level,
        dev_guild_id=_guild(env),
        sync_commands=_bool(env, "COGITATOR_SYNC", True),
        web_port=_port(env),
        web_bind=_bind(env),
        web_public_url=_public_url(env),
        ops_port=_port(env, "COGITATOR_OPS_PORT"),
        ops_bind=_bind(env, "COGITATOR_OPS_BIND"),
        gdc_url=_url(env, "COGITATOR_GDC_URL", Settings.gdc_url),
        wahapedia_url=_url(env, "COGITATOR_WAHAPEDIA_URL", Settings.wahapedia_url),
        mfm_url=_url(env, "COGITATOR_MFM_URL", Settings.mfm_url),
        data_refresh=_interval(env, "COGITATOR_DATA_REFRESH"),
        points_poll=_int_setting(env, "COGITATOR_POINTS_POLL", Settings.points_poll, 1, 3600, " seconds"),
        database_url=_database_url(env),
        sim_workers=_int_setting(env, "COGITATOR_SIM_WORKERS", Settings.sim_workers, 0, MAX_SIM_WORKERS),
        sim_worker_mb=_int_setting(env, "COGITATOR_SIM_WORKER_MB", Settings.sim_worker_mb, MIN_SIM_WORKER_MB,
                                   1 << 20, " (MB)"),
    )


def log_level_number(settings: Settings) -> int:
    return logging.getLevelName(settings.log_level)
