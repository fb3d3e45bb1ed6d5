"""Settings: defaults, then the TOML config file, then the environment, then ``initialize``.

One Struct holds them all so that every layer validates the same way and the
schema documents them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec
import platformdirs


class ClearToolResultsSettings(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    """Batch clearing of old tool outputs at append time (see sidecar.compaction.clearing)."""

    enabled: bool = False
    # Clear once the context (as session/append counts it) passes this many tokens.
    triggerTokens: int = 100_000
    # The newest tool results that keep their output.
    keepToolResults: int = 3
    # Clear only when that frees at least this many tokens: one prompt-cache break per batch.
    minimumTokens: int = 20_000


class CompactionSettings(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    enabled: bool = True
    reserveTokens: int = 16384
    keepRecentTokens: int = 20000
    # The model's context window; unknown until the client tells us, and with
    # it unknown ``shouldCompact`` stays false.
    contextWindow: int | None = None
    autoCompact: bool = False
    # Replace old tool outputs by a placeholder before summarizing (see sidecar.compaction.prune).
    prune: bool = True
    clearToolResults: ClearToolResultsSettings = msgspec.field(default_factory=ClearToolResultsSettings)


class ProviderEndpoint(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    """One summarizing service; unset fields fall back to the vendor's own variables
    (ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL, OPENAI_API_KEY / OPENAI_BASE_URL)."""

    apiKey: str | None = None
    baseUrl: str | None = None
    model: str | None = None


class ProvidersSettings(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    # "anthropic", "openai", "client" or "offline"; unset: the first of anthropic
    # and openai that has a key, else offline.
    default: str | None = None
    anthropic: ProviderEndpoint = msgspec.field(default_factory=ProviderEndpoint)
    openai: ProviderEndpoint = msgspec.field(default_factory=ProviderEndpoint)
    # The model the client's ``session/summarize`` is asked for, if any.
    clientModel: str | None = None
    # Retries of failures the vendor SDK does not retry (mid-stream errors, cut streams).
    maxRetries: int = 3
    retryBaseDelay: float = 1.0
    timeout: float = 600.0


class StoreSettings(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    fsync: Literal["assistant", "always", "never"] = "assistant"
    # Open session files named by an absolute path outside the sessions root.
    allowExternalPaths: bool = False
    # The tool the files must stay readable by: "pi" (images inline, session_info
    # names) or "omp" (oh-my-pi's blob store and title line). Unset: the tool whose
    # sessions folder the root is, else pi (see sidecar.store.compat).
    compat: Literal["pi", "omp"] | None = None
    # Replace secrets by typed placeholders before an appended entry is written (sidecar/export/redact/).
    redactOnAppend: bool = False
    # The on-disk format of the root's sessions: "pi" (pi's JSONL trees) or "spec" (the session
    # spec's <ULID>/session.jsonl + metadata.json folders, sidecar/store/spec/).
    format: Literal["pi", "spec"] = "pi"
    # PostgreSQL instead of session files (postgresql://user:password@host:port/dbname): every
    # session of this sidecar lives in that database (sidecar/store/postgres/).
    databaseUrl: str | None = None
    # How long a session's writer keeps it without renewing (it renews every third of this while
    # running); another sidecar takes the session once it expires (PostgreSQL only).
    leaseSeconds: float = 30.0


class RetentionSettings(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    """The policy ``session-sidecar prune`` and ``session/prune`` apply when not given one (none by default)."""

    olderThan: str | None = None  # "90d"
    keepPerCwd: int | None = None
    maxTotal: str | None = None  # "5GB"
    includePinned: bool = False


class Settings(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    store: StoreSettings = msgspec.field(default_factory=StoreSettings)
    retention: RetentionSettings = msgspec.field(default_factory=RetentionSettings)
    compaction: CompactionSettings = msgspec.field(default_factory=CompactionSettings)
    providers: ProvidersSettings = msgspec.field(default_factory=ProvidersSettings)


# -- loading: TOML file, then environment, then initialize ---------------------

CONFIG_ENV = "SESSION_SIDECAR_CONFIG"

# Environment variable -> (section, field). Values are strings; msgspec
# converts them to the field's type ("16000" -> 16000, "true" -> True).
ENV_OVERRIDES: dict[str, tuple[str, str]] = {
    "SESSION_SIDECAR_FSYNC": ("store", "fsync"),
    "SESSION_SIDECAR_ALLOW_EXTERNAL_PATHS": ("store", "allowExternalPaths"),
    "SESSION_SIDECAR_COMPAT": ("store", "compat"),
    "SESSION_SIDECAR_FORMAT": ("store", "format"),
    "SESSION_SIDECAR_DATABASE_URL": ("store", "databaseUrl"),
    "SESSION_SIDECAR_LEASE_SECONDS": ("store", "leaseSeconds"),
    "SESSION_SIDECAR_CONTEXT_WINDOW": ("compaction", "contextWindow"),
    "SESSION_SIDECAR_RESERVE_TOKENS": ("compaction", "reserveTokens"),
    "SESSION_SIDECAR_KEEP_RECENT_TOKENS": ("compaction", "keepRecentTokens"),
    "SESSION_SIDECAR_COMPACTION": ("compaction", "enabled"),
    "SESSION_SIDECAR_AUTO_COMPACT": ("compaction", "autoCompact"),
}


class SettingsError(ValueError):
    """A config file, variable or ``settings`` object that does not fit ``Settings``; the message says where."""


def default_config_path() -> Path:
    return Path(platformdirs.user_config_dir("session-sidecar", appauthor=False)) / "config.toml"


def read_config_file(path: Path) -> dict[str, Any]:
    import tomllib  # only when there is a file to read: most starts have none

    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise SettingsError(f"cannot read config file {path}: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"config file {path} is not valid TOML: {exc}") from exc


def env_overrides(environ: Mapping[str, str]) -> dict[str, Any]:
    """The settings named by ``SESSION_SIDECAR_*`` variables, as a nested dict of strings."""
    overrides: dict[str, Any] = {}
    for variable, (section, field) in ENV_OVERRIDES.items():
        value = environ.get(variable)
        if value is not None and value != "":
            overrides.setdefault(section, {})[field] = value
    return overrides


def apply_overrides(base: Settings, overrides: dict[str, Any], source: str, strict: bool = True) -> Settings:
    if not overrides:
        return base
    merged = msgspec.to_builtins(base)
    for section, values in overrides.items():
        if isinstance(values, dict) and isinstance(merged.get(section), dict):
            merged[section] = {**merged[section], **values}
        else:
            merged[section] = values
    try:
        return msgspec.convert(merged, Settings, strict=strict)
    except msgspec.ValidationError as exc:
        raise SettingsError(f"{source}: {exc}") from exc


def load_settings(
    config_path: Path | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: dict[str, Any] | None = None,
) -> Settings:
    """Defaults < TOML file < environment < ``overrides`` (initialize's ``settings``).

    Without ``config_path`` the file named by ``SESSION_SIDECAR_CONFIG`` is read,
    else the user's config file if it exists.
    """
    environ = os.environ if environ is None else environ
    settings = Settings()
    if config_path is None and environ.get(CONFIG_ENV):
        config_path = Path(environ[CONFIG_ENV]).expanduser()
    if config_path is None and default_config_path().is_file():
        config_path = default_config_path()
    if config_path is not None:
        settings = apply_overrides(settings, read_config_file(config_path), f"config file {config_path}")
    # Variables are strings: convert leniently so "8000" is an int and "true" a bool.
    settings = apply_overrides(settings, env_overrides(environ), "environment", strict=False)
    return apply_overrides(settings, overrides or {}, "settings")
