"""The model buildContext reports is the last assistant's or model change's, and the default role's the last
assistant's before any explicit default; only those are read (a path of 100,000s of assistants makes one)."""

from __future__ import annotations

from session_builders import assistant, entry, header, line, message, user

from sidecar.context.build import build_context
from sidecar.format.jsonl import parse_file
from sidecar.store.tree import SessionTree


def _context(*objs: dict):
    rows, parent = [line(header()).encode()], None
    for n, obj in enumerate(objs):
        obj = {**obj, "id": f"e{n}", "parentId": parent}
        rows.append(line(obj).encode())
        parent = obj["id"]
    tree = SessionTree()
    tree.add_parsed(parse_file(b"\n".join(rows) + b"\n").items)
    return build_context(tree.path(tree.leaf_id))


def _said(provider: str | None, model: str | None) -> dict:
    body = assistant("ok", provider=provider or "", model=model or "")
    if provider is None:
        del body["provider"]  # undefined in pi: absent from the reference, "undefined" in the role map
    if model is None:
        body["model"] = None
    return message("x", None, body)


def _omp_change(model: str, role: str | None = None) -> dict:
    return entry("model_change", "x", None, model=model, **({"role": role} if role else {}))


def test_the_last_assistant_sets_the_model_and_the_default_role_keeps_its_place_in_the_map():
    ctx = _context(
        _said("anthropic", "m1"), _omp_change("p/fast", "smol"), message("x", None, user("u")), _said("openai", "m2")
    )
    assert ctx.model == {"provider": "openai", "modelId": "m2"}
    assert list(ctx.models.items()) == [("default", "openai/m2"), ("smol", "p/fast")]


def test_an_explicit_default_wins_over_later_assistants_but_the_model_follows_them():
    ctx = _context(_said("anthropic", "m1"), _omp_change("p/chosen"), _said("openai", "m2"), _said(None, None))
    assert list(ctx.models.items()) == [("default", "p/chosen")]
    assert ctx.model == {"modelId": None}  # the last assistant's: no provider (undefined), a null model


def test_a_model_change_after_the_last_assistant_sets_the_model_and_a_role_change_does_not():
    pi_change = entry("model_change", "x", None, provider="openai", modelId="gpt")
    assert _context(_said("anthropic", "m1"), pi_change).model == {"provider": "openai", "modelId": "gpt"}
    ctx = _context(_omp_change("p/slow", "slow"), _said(None, "m3"), _omp_change("p/fast", "smol"))
    assert ctx.model == {"modelId": "m3"}
    assert list(ctx.models.items()) == [("slow", "p/slow"), ("default", "undefined/m3"), ("smol", "p/fast")]
