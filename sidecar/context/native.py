"""Provider-native compaction: the provider's own compaction item, given back only to that provider and model.

A compaction entry may carry ``native`` ({provider, model, item}) beside its
text summary: Anthropic's ``compaction`` content block (compact_20260112)
or the OpenAI Responses ``compaction`` item (``/responses/compact``). Such an
item is opaque and only means something to the model that wrote it; every
other reader (pi, another provider, another model of the same provider)
gets the text summary, as before.

In an ``llm``-format context built for the matching target, the summary's
message is replaced by one ``providerCompaction`` message holding the item
verbatim, for the client to put where its provider expects it (Anthropic:
the content of an assistant message; OpenAI: an input item).
"""

from __future__ import annotations

from collections.abc import Callable

from ..format.jsonl import Entry

PROVIDER_COMPACTION_ROLE = "providerCompaction"


def native_of(obj: dict[str, object]) -> dict[str, object] | None:
    """A compaction line's ``native`` when it is well formed (else None: the text is used)."""
    native = obj.get("native")
    if not isinstance(native, dict):
        return None
    if not (isinstance(native.get("provider"), str) and isinstance(native.get("model"), str)):
        return None
    return native if isinstance(native.get("item"), dict) else None


def provider_compaction_message(native: dict[str, object], summary_message: dict[str, object]) -> dict[str, object]:
    return {
        "role": PROVIDER_COMPACTION_ROLE,
        "provider": native["provider"],
        "model": native["model"],
        "item": native["item"],
        "timestamp": summary_message.get("timestamp"),
    }


def native_summary(
    path: list[Entry], messages: list[dict[str, object]], entry_ids: list[str], provider: str, model: str
) -> tuple[int, dict[str, object]] | None:
    """Where the summary of the compaction in force is among ``messages``, and the message that replaces
    it, when that compaction recorded an item of ``provider`` and ``model``; None otherwise."""
    for index, message in enumerate(messages):
        if message.get("role") != "compactionSummary":
            continue
        compaction = next((e for e in reversed(path) if e.id == entry_ids[index]), None)
        native = native_of(compaction.obj()) if compaction is not None and compaction.type == "compaction" else None
        if native is None or native["provider"] != provider or native["model"] != model:
            return None
        return index, provider_compaction_message(native, message)
    return None


def convert_with_native(
    messages: list[dict[str, object]],
    convert: Callable[[list[dict[str, object]]], list[dict[str, object]]],
    replacement: tuple[int, dict[str, object]] | None,
) -> list[dict[str, object]]:
    """``convert`` (pi's or oh-my-pi's convertToLlm, message by message) with the summary swapped for the item."""
    if replacement is None:
        return convert(messages)
    index, message = replacement
    return convert(messages[:index]) + [message] + convert(messages[index + 1 :])
