"""Settings: defaults, then the TOML config file, then the environment, then ``initialize``.

One Struct holds them all so that every layer validates the same way and the
schema documents them.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec


class CompactionSettings(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    enabled: bool = True
    reserveTokens: int = 16384
    keepRecentTokens: int = 20000
    # The model's context window; unknown until the client tells us, and with
    # it unknown ``shouldCompact`` stays false.
    contextWindow: int | None = None
    autoCompact: bool = False


class StoreSettings(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    fsync: Literal["assistant", "always", "never"] = "assistant"
    # Open session files named by an absolute path outside the sessions root.
    allowExternalPaths: bool = False


class Settings(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    store: StoreSettings = msgspec.field(default_factory=StoreSettings)
    compaction: CompactionSettings = msgspec.field(default_factory=CompactionSettings)


def merge(base: Settings, overrides: dict[str, Any] | None) -> Settings:
    """``base`` with the fields named in ``overrides`` replaced (one level deep per section)."""
    if not overrides:
        return base
    merged = msgspec.to_builtins(base)
    for section, values in overrides.items():
        if isinstance(values, dict) and isinstance(merged.get(section), dict):
            merged[section] = {**merged[section], **values}
        else:
            merged[section] = values
    return msgspec.convert(merged, Settings)
