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
