"""What every params and result Struct of the contract stands on."""

from __future__ import annotations

import msgspec


class _Params(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    """Unknown params are an error: a misspelt field must not be ignored silently."""

    # LSP work-done progress: with a token, a long call reports ``$/progress``
    # under it. Every method accepts one; the service never reads it.
    workDoneToken: int | str | None = None


class _Result(msgspec.Struct, omit_defaults=True, kw_only=True):
    pass


class _SessionRef(_Params):
    sessionId: str
