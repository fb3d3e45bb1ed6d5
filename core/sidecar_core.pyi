# The compiled core's interface, as sidecar/corepath/compiled.py uses it (the wheel ships this stub).
from typing import Any

class LineScanner:
    def __init__(self, head_type: Any, unset: Any) -> None: ...
    def scan(
        self, buffer: Any, start: int, stop: int
    ) -> (
        tuple[
            list[str | None], list[str | None], list[str | None], list[str | None], list[Any], list[int], list[int]
        ]
        | None
    ): ...

class LineGate:
    def __init__(
        self, run_needles: list[bytes], stems: list[bytes], plain_keys: list[bytes], names_secret: Any
    ) -> None: ...
    def may_hold_secret(self, raw: bytes) -> bool: ...
    def which_may_hold_secret(self, raws: Any) -> list[bool]: ...
    @staticmethod
    def free_bounds(raw: bytes) -> tuple[int, int]: ...

class TreeIndex:
    def __init__(self) -> None: ...
    def add_parsed(
        self,
        items: list[Any],
        entry_type: type[Any],
        entries: list[Any],
        by_id: dict[str, Any],
        orphans: list[Any],
        noted: Any,
        noted_later: Any,
        note: Any,
    ) -> Any | None: ...
    def truncate(self, length: int) -> None: ...
    def path(self, leaf_id: str, entries: list[Any], by_id: dict[str, Any]) -> list[Any] | None: ...
    def state(self) -> tuple[int, int]: ...

class CodexMapper:
    def __init__(self, vocabulary: Any) -> None: ...
    def map(
        self, buffer: Any
    ) -> tuple[list[Any], list[tuple[str, str, int, str | None]], list[str], tuple[int, int] | None] | None: ...
