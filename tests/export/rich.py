"""A session with everything an export must show: branches, labels, a name, custom entries,
a compaction, a branch summary, tool calls with results, thinking, an image and model changes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# A 1x1 PNG.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAHnOcQAAAAABJRU5ErkJggg=="
AWS_KEY = "AKIAQ3EGRTWX5ZKLM7PB"
GH_TOKEN = "ghp_R8k2LmQ9vX4tZ7yN1pW3sA6dF0gH5jK2cB9e"


def msg(role: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "message", "message": {"role": role, "content": content, **extra}}


def assistant(blocks: list[dict[str, Any]], model: str = "claude-sonnet-4", **extra: Any) -> dict[str, Any]:
    usage = {"input": 1200, "output": 340, "cacheRead": 800, "cacheWrite": 0, "totalTokens": 2340}
    return msg(
        "assistant", blocks, **{"provider": "anthropic", "model": model, "usage": usage, "stopReason": "stop", **extra}
    )


def build(append: Callable[..., str], call: Callable[..., Any], session_id: str) -> dict[str, str]:
    """Append the rich session through ``append(session_id, *entries) -> last id``; returns named ids."""
    ids: dict[str, str] = {}
    ids["ask"] = append(session_id, msg("user", "The login page rejects valid users. Please find out why."))
    ids["look"] = append(
        session_id,
        assistant(
            [
                {"type": "thinking", "thinking": "Start with the environment: the auth settings live in .env."},
                {"type": "text", "text": "Let me read the configuration first."},
                {"type": "toolCall", "id": "call_env", "name": "bash", "arguments": {"command": "cat .env"}},
            ],
            stopReason="toolUse",
        ),
    )
    ids["env"] = append(
        session_id,
        msg(
            "toolResult",
            [
                {
                    "type": "text",
                    "text": f"AWS_ACCESS_KEY_ID={AWS_KEY}\nGITHUB_TOKEN={GH_TOKEN}\nDATABASE_URL=postgres://app:Sup3rS3cretPw@db:5432/app\n"
                    "LOG_LEVEL=debug",
                }
            ],
            toolCallId="call_env",
            toolName="bash",
            isError=False,
        ),
    )
    ids["found"] = append(
        session_id,
        assistant(
            [
                {
                    "type": "text",
                    "text": f"The key {AWS_KEY} is fine; the session cookie is set without the secure flag.",
                },
                {
                    "type": "toolCall",
                    "id": "call_shot",
                    "name": "screenshot",
                    "arguments": {"url": "http://localhost:3000/login"},
                },
            ],
            stopReason="toolUse",
        ),
    )
    ids["shot"] = append(
        session_id,
        msg(
            "toolResult",
            [{"type": "text", "text": "captured"}, {"type": "image", "data": PNG, "mimeType": "image/png"}],
            toolCallId="call_shot",
            toolName="screenshot",
            isError=False,
        ),
    )
    ids["model"] = append(session_id, {"type": "model_change", "provider": "openai", "modelId": "gpt-5"})
    ids["custom"] = append(
        session_id,
        {"type": "custom", "customType": "review-notes", "data": {"note": "check cookie flags", "token": GH_TOKEN}},
    )
    ids["compaction"] = append(
        session_id,
        {
            "type": "compaction",
            "summary": "The user reported login failures; the cause is a cookie set without the secure flag.",
            "firstKeptEntryId": ids["found"],
            "tokensBefore": 48211,
        },
    )
    ids["fix"] = append(session_id, msg("user", "Fix the cookie then."))
    ids["done"] = append(
        session_id,
        assistant([{"type": "text", "text": "Fixed: the cookie now has Secure and SameSite=Lax."}], model="gpt-5"),
    )
    call("session/setLabel", sessionId=session_id, entryId=ids["ask"], label="bug report")
    call("session/setName", sessionId=session_id, name="Login bug hunt")
    ids["main_leaf"] = call("session/getTree", sessionId=session_id)["leafId"]
    # A second branch from "found": another way, opened with a summary of the branch left behind.
    call("session/branch", sessionId=session_id, entryId=ids["found"])
    ids["summary"] = append(
        session_id,
        {
            "type": "branch_summary",
            "fromId": ids["main_leaf"],
            "summary": "Tried fixing the cookie flags on the first branch.",
        },
    )
    ids["other_ask"] = append(session_id, msg("user", "Instead, try rotating the signing key."))
    ids["other_done"] = append(
        session_id, assistant([{"type": "text", "text": "Rotated the zebra signing key; logins work."}])
    )
    ids["other_leaf"] = ids["other_done"]
    call("session/setLabel", sessionId=session_id, entryId=ids["other_done"], label="rotation")
    return ids
