"""pi's ``convertToLlm``: AgentMessages to the three roles a model accepts.

system (pi 1.5) / user / assistant / toolResult pass through; bash executions, custom messages
and summaries become user messages, wrapped exactly as pi wraps them, so the
model sees the same text whichever of us built the context. The wrapper
strings are part of that compatibility contract.
"""

from __future__ import annotations

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
BRANCH_SUMMARY_SUFFIX = "</summary>"


def bash_execution_text(message: dict[str, object]) -> str:
    text = f"Ran `{message.get('command', '')}`\n"
    output = message.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    exit_code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif exit_code is not None and exit_code != 0:
        text += f"\n\nCommand exited with code {_js_number(exit_code)}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message['fullOutputPath']}]"
    return text


def _js_number(value: object) -> str:
    """How a JS template literal prints a number (3.0 prints as 3)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _user(content: list[dict[str, object]] | object, timestamp: object) -> dict[str, object]:
    return {"role": "user", "content": content, "timestamp": timestamp}


def to_llm_message(message: dict[str, object]) -> dict[str, object] | None:
    role = message.get("role")
    if role in ("system", "user", "assistant", "toolResult"):
        return message
    timestamp = message.get("timestamp")
    if role == "bashExecution":
        if message.get("excludeFromContext"):
            return None
        return _user([{"type": "text", "text": bash_execution_text(message)}], timestamp)
    if role == "custom":
        if "content" not in message:  # a context edit without content left none (JS: undefined, not sent)
            return {"role": "user", "timestamp": timestamp}
        content = message["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        return _user(content, timestamp)
    if role == "branchSummary":
        text = BRANCH_SUMMARY_PREFIX + str(message.get("summary")) + BRANCH_SUMMARY_SUFFIX
        return _user([{"type": "text", "text": text}], timestamp)
    if role == "compactionSummary":
        text = COMPACTION_SUMMARY_PREFIX + str(message.get("summary")) + COMPACTION_SUMMARY_SUFFIX
        return _user([{"type": "text", "text": text}], timestamp)
    return None  # a role pi does not know does not reach the model


def convert_to_llm(messages: list[dict[str, object]]) -> list[dict[str, object]]:
    out = []
    for message in messages:
        converted = to_llm_message(message)
        if converted is not None:
            out.append(converted)
    return out
