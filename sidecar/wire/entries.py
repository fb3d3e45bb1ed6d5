"""The entries an agent appends and reads: pi's (and oh-my-pi's) session entry and message shapes.

``session/append`` takes entries as JSON objects in pi's v3 format. These Structs
are that format as pi 1.5 (``@earendil-works/pi-coding-agent``, ``pi-ai``) and
oh-my-pi (``@oh-my-pi/pi-coding-agent``) define it, so that the shapes are part
of the contract: protocol/schema.json carries them as named definitions (a
client generator turns them into typed messages) and an append is checked
against them (``sidecar.format.entries``), so that a shape pi would misread (an
OpenAI-style ``tool_calls``, a ``toolResult`` without ``toolCallId``, a content
block or an entry type pi does not know) is refused instead of stored.

Tagged unions: an entry on ``type``, a message on ``role``, a content block on
``type``. Unknown extra fields are allowed (a newer agent's fields pass
through); only the fields pi reads are typed. Reading a file never goes
through these types: what pi, oh-my-pi or an older version wrote opens as it is.

Fields pi always writes but reads without (``timestamp``, ``usage``, ``api``...)
are optional here, so that a minimal message is accepted; PROTOCOL.md's "Entry
shapes" says which ones pi writes.
"""

from __future__ import annotations

from typing import Any, Literal, Union, get_args

import msgspec
import msgspec.inspect

from .fidelity import NativeCompaction

# ---------------------------------------------------------------- content blocks


class _Block(msgspec.Struct, tag_field="type", omit_defaults=True, kw_only=True):
    pass


class TextContent(_Block, tag="text"):
    text: str
    # Provider metadata to send back with the text (OpenAI Responses' message id).
    textSignature: str | None = None


class ThinkingContent(_Block, tag="thinking"):
    thinking: str
    # The provider's opaque signature of the thinking, sent back on the next turn.
    thinkingSignature: str | None = None
    # The thinking was redacted by the provider; the payload is in thinkingSignature.
    redacted: bool | None = None


class ImageContent(_Block, tag="image"):
    # Base64 of the image bytes (no data: prefix).
    data: str
    mimeType: str


class ToolCall(_Block, tag="toolCall"):
    """A tool call inside an assistant message's content (not OpenAI's ``tool_calls`` beside it)."""

    id: str
    name: str
    arguments: dict[str, Any]
    thoughtSignature: str | None = None
    namespace: str | None = None
    # The model's arguments were not a JSON object: arguments is {} and this says why.
    argumentsError: str | None = None


class RedactedThinkingContent(_Block, tag="redactedThinking"):
    """oh-my-pi: thinking the provider redacted, kept opaque."""

    data: str


class FallbackContent(_Block, tag="fallback"):
    """oh-my-pi: Anthropic switched models mid-answer."""

    # {"model": "..."} each.
    to: dict[str, Any]
    # ``from`` on the wire (a Python keyword here).
    from_: dict[str, Any] = msgspec.field(name="from")


class AnthropicServerToolContent(_Block, tag="anthropicServerTool"):
    """oh-my-pi: an Anthropic server-side tool block (web search...), kept as the provider sent it."""

    block: dict[str, Any]


UserContentBlock = Union[TextContent, ImageContent]
AssistantContentBlock = Union[TextContent, ThinkingContent, ToolCall, ImageContent]
OmpAssistantContentBlock = Union[
    TextContent,
    ThinkingContent,
    ToolCall,
    ImageContent,
    RedactedThinkingContent,
    FallbackContent,
    AnthropicServerToolContent,
]


class Cost(msgspec.Struct, omit_defaults=True, kw_only=True):
    """What a response cost, in dollars."""

    input: float
    output: float
    cacheRead: float
    cacheWrite: float
    total: float
    totalFromProvider: bool | None = None


class Usage(msgspec.Struct, omit_defaults=True, kw_only=True):
    """Tokens of one response. The sidecar sizes a context from the last assistant's usage
    (totalTokens, else the sum of the others). pi writes every field; a missing one counts 0."""

    input: int | None = None
    output: int | None = None
    cacheRead: int | None = None
    cacheWrite: int | None = None
    totalTokens: int | None = None
    cost: Cost | None = None
    # Subset of cacheWrite written with 1h retention (Anthropic).
    cacheWrite1h: int | None = None
    # Reasoning tokens, a subset of output, when the provider reports them.
    reasoning: int | None = None


StopReason = Literal["pending", "stop", "length", "toolUse", "error", "aborted", "deferred"]

# ---------------------------------------------------------------- messages (tagged on role)


class _Message(msgspec.Struct, tag_field="role", omit_defaults=True, kw_only=True):
    # Unix milliseconds. pi writes it on every message.
    timestamp: int | float | None = None


class UserMessage(_Message, tag="user"):
    # null: read as empty (pi reads a file's null content so); send text or blocks.
    content: str | list[UserContentBlock] | None


class AssistantMessage(_Message, tag="assistant"):
    """A model's answer. Tool calls are ``toolCall`` blocks in ``content``."""

    # null: read as empty, as pi reads it.
    content: list[AssistantContentBlock] | None
    # pi writes api, provider, model, usage and stopReason on every assistant message.
    api: str | None = None
    provider: str | None = None
    model: str | None = None
    usage: Usage | None = None
    stopReason: StopReason | None = None
    errorMessage: str | None = None
    responseId: str | None = None


class ToolResultMessage(_Message, tag="toolResult"):
    """The result of the ``toolCall`` block whose ``id`` is ``toolCallId``."""

    toolCallId: str
    toolName: str
    # null: read as empty, as pi reads it.
    content: list[UserContentBlock] | None
    isError: bool = False
    details: Any = None


class BashExecutionMessage(_Message, tag="bashExecution"):
    """A command the user ran with ``!`` (pi): in the context as a user message."""

    command: str
    output: str
    exitCode: int | None = None
    cancelled: bool = False
    truncated: bool = False
    fullOutputPath: str | None = None
    # true: shown, but left out of the model's context (pi's ``!!``).
    excludeFromContext: bool | None = None


class CustomMessage(_Message, tag="custom"):
    """An extension's message that goes into the context (what a custom_message entry becomes)."""

    customType: str
    content: str | list[UserContentBlock]
    display: bool = True
    details: Any = None


class BranchSummaryMessage(_Message, tag="branchSummary"):
    """What a branch_summary entry becomes in an agent-format context."""

    summary: str
    fromId: str | None = None


class CompactionSummaryMessage(_Message, tag="compactionSummary"):
    """What a compaction entry becomes in an agent-format context."""

    summary: str
    tokensBefore: int = 0


class SystemMessage(_Message, tag="system"):
    """pi 1.5: a system prompt stored in the session."""

    # null: read as "", as pi reads it.
    content: str | list[TextContent] | None
    sections: dict[str, str | None] | None = None


class OmpAssistantMessage(AssistantMessage, tag="assistant"):
    """oh-my-pi's assistant message: more content block kinds."""

    content: list[OmpAssistantContentBlock] | None  # type: ignore[assignment]  # oh-my-pi's assistant widens the content; msgspec Struct fields cannot be narrowed


class DeveloperMessage(_Message, tag="developer"):
    """oh-my-pi: a developer-role message."""

    content: str | list[UserContentBlock]


class PythonExecutionMessage(_Message, tag="pythonExecution"):
    """oh-my-pi: Python the user ran."""

    code: str
    output: str
    exitCode: int | None = None
    cancelled: bool = False
    truncated: bool = False


class HookMessage(_Message, tag="hookMessage"):
    """oh-my-pi: a hook's message (pi's older name of ``custom``)."""

    customType: str
    content: str | list[UserContentBlock]
    display: bool = True
    details: Any = None


class FileMentionMessage(_Message, tag="fileMention"):
    """oh-my-pi: files the user mentioned with @, read into the context."""

    files: list[dict[str, Any]]


# What a message entry holds. The summaries are entries of their own (compaction,
# branch_summary) that a context shows as messages: never appended as messages.
EntryMessage = Union[
    UserMessage,
    AssistantMessage,
    ToolResultMessage,
    BashExecutionMessage,
    CustomMessage,
    SystemMessage,
]
OmpEntryMessage = Union[
    UserMessage,
    OmpAssistantMessage,
    ToolResultMessage,
    BashExecutionMessage,
    CustomMessage,
    SystemMessage,
    DeveloperMessage,
    PythonExecutionMessage,
    HookMessage,
    FileMentionMessage,
]
# What session/buildContext's messages are (format "agent").
AgentMessage = Union[
    UserMessage,
    AssistantMessage,
    ToolResultMessage,
    BashExecutionMessage,
    CustomMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    SystemMessage,
]
OmpAgentMessage = Union[
    UserMessage,
    OmpAssistantMessage,
    ToolResultMessage,
    BashExecutionMessage,
    CustomMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    SystemMessage,
    DeveloperMessage,
    PythonExecutionMessage,
    HookMessage,
    FileMentionMessage,
]

# ---------------------------------------------------------------- entries (tagged on type)


class _Entry(msgspec.Struct, tag_field="type", omit_defaults=True, kw_only=True):
    # On append the sidecar fills what is left out: a new id, the leaf (or the
    # call's parentId) as parent, now as timestamp. Always present when read.
    id: str | None = None
    parentId: str | None = None
    # ISO 8601 (an entry's timestamp is a string; a message's is a number).
    timestamp: str | None = None


class MessageEntry(_Entry, tag="message"):
    message: EntryMessage


class ThinkingLevelChangeEntry(_Entry, tag="thinking_level_change"):
    # "off", "minimal", "low", "medium", "high", "xhigh"; oh-my-pi may write null.
    thinkingLevel: str | None


class ModelChangeEntry(_Entry, tag="model_change"):
    """pi writes ``provider`` and ``modelId``; oh-my-pi writes ``model`` ("provider/id") and ``role``."""

    provider: str | None = None
    modelId: str | None = None
    model: str | None = None
    role: str | None = None


class CompactionEntry(_Entry, tag="compaction"):
    """The context before ``firstKeptEntryId`` replaced by ``summary`` (session/compact writes these)."""

    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    details: Any = None
    fromHook: bool | None = None
    usage: Usage | None = None
    # pi 1.5: the system message current when the compaction was made.
    systemMessage: SystemMessage | None = None
    # oh-my-pi's.
    shortSummary: str | None = None
    tokensAfter: int | None = None
    preserveData: dict[str, Any] | None = None
    fromExtension: bool | None = None
    # The sidecar's: the provider's own compaction item for the span summarized (pi ignores it).
    native: NativeCompaction | None = None


class BranchSummaryEntry(_Entry, tag="branch_summary"):
    """A summary of the branch left at ``fromId`` ("root": from before the first entry)."""

    fromId: str
    summary: str
    details: Any = None
    fromHook: bool | None = None
    fromExtension: bool | None = None
    usage: Usage | None = None


class CustomEntry(_Entry, tag="custom"):
    """An agent's or extension's own data: never in the model's context. Use it for anything pi has no entry for."""

    customType: str
    data: Any = None


class CustomMessageEntry(_Entry, tag="custom_message"):
    """An extension's message that goes into the context (as a ``custom`` message)."""

    customType: str
    content: str | list[UserContentBlock]
    display: bool = True
    details: Any = None


class LabelEntry(_Entry, tag="label"):
    """Sets (or, without ``label``, clears) the label of the entry ``targetId``."""

    targetId: str
    label: str | None = None


class SessionInfoEntry(_Entry, tag="session_info"):
    """pi: the session's name."""

    name: str | None = None


class ContextEditReplacement(msgspec.Struct):
    content: str | list[TextContent | ThinkingContent | ToolCall | ImageContent]


class ContextEditEntry(_Entry, tag="context_edit"):
    """pi 1.5: on the path to a leaf, the target entry's content is replaced
    (null: its message is left out of the context). The last edit of a target wins."""

    targetId: str
    replacement: ContextEditReplacement | None


class UsageEntry(_Entry, tag="usage"):
    """pi 1.5: tokens a call outside the conversation spent (a summary, say)."""

    kind: str
    provider: str
    model: str
    usage: Usage
    note: str | None = None


class TtsrInjectionEntry(_Entry, tag="ttsr_injection"):
    """oh-my-pi: rules injected into the context."""

    injectedRules: list[str]


class SessionInitEntry(_Entry, tag="session_init"):
    """oh-my-pi: how a subagent's session was started."""

    systemPrompt: str | None = None
    task: str | None = None
    tools: list[str] | None = None
    outputSchema: Any = None


class ModeChangeEntry(_Entry, tag="mode_change"):
    """oh-my-pi: the agent's mode (plan, ...)."""

    mode: str
    data: dict[str, Any] | None = None


class ModelUsageEntry(_Entry, tag="model_usage"):
    """oh-my-pi: tokens a call outside the conversation spent."""

    purpose: str
    api: str
    provider: str
    model: str
    usage: Usage
    stopReason: StopReason
    role: str | None = None
    errorMessage: str | None = None


class ServiceTierChangeEntry(_Entry, tag="service_tier_change"):
    """oh-my-pi: the provider service tier (per model family; null: default)."""

    serviceTier: dict[str, Any] | None


class ResetBoundaryEntry(_Entry, tag="reset_boundary"):
    """oh-my-pi: the context starts again after this entry."""


class TitleChangeEntry(_Entry, tag="title_change"):
    """oh-my-pi: the session's title changed."""

    title: str
    source: Literal["auto", "user"]
    previousTitle: str | None = None
    trigger: str | None = None


class CredentialPinEntry(_Entry, tag="credential_pin"):
    """oh-my-pi: which credential of a provider the session uses (its hash)."""

    provider: str
    hash: str


class OmpMessageEntry(MessageEntry, tag="message"):
    """A message entry under oh-my-pi's compatibility: its messages."""

    message: OmpEntryMessage  # type: ignore[assignment]  # oh-my-pi's entry widens the message; msgspec Struct fields cannot be narrowed


# The entry types pi 1.5 reads, and those oh-my-pi adds (accepted under its compatibility).
SessionEntry = Union[
    MessageEntry,
    ThinkingLevelChangeEntry,
    ModelChangeEntry,
    CompactionEntry,
    BranchSummaryEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    SessionInfoEntry,
    ContextEditEntry,
    UsageEntry,
]
OMP_ONLY_ENTRIES = (
    TtsrInjectionEntry,
    SessionInitEntry,
    ModeChangeEntry,
    ModelUsageEntry,
    ServiceTierChangeEntry,
    ResetBoundaryEntry,
    TitleChangeEntry,
    CredentialPinEntry,
)
OmpSessionEntry = Union[
    OmpMessageEntry,
    ThinkingLevelChangeEntry,
    ModelChangeEntry,
    CompactionEntry,
    BranchSummaryEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    SessionInfoEntry,
    ContextEditEntry,
    UsageEntry,
    TtsrInjectionEntry,
    SessionInitEntry,
    ModeChangeEntry,
    ModelUsageEntry,
    ServiceTierChangeEntry,
    ResetBoundaryEntry,
    TitleChangeEntry,
    CredentialPinEntry,
]

# Named unions protocol/schema.json defines (``$defs``), for the clients' generators.
UNIONS: dict[str, object] = {
    "SessionEntry": SessionEntry,
    "OmpSessionEntry": OmpSessionEntry,
    "EntryMessage": EntryMessage,
    "OmpEntryMessage": OmpEntryMessage,
    "AgentMessage": AgentMessage,
    "OmpAgentMessage": OmpAgentMessage,
    "UserContentBlock": UserContentBlock,
    "AssistantContentBlock": AssistantContentBlock,
    "OmpAssistantContentBlock": OmpAssistantContentBlock,
}


def tags(union: object) -> list[str]:
    """The tag (``type`` or ``role``) of each member of ``union``, in its order."""
    return [kind.__struct_config__.tag for kind in get_args(union)]


# ---------------------------------------------------------------- shapes as text (errors and PROTOCOL.md)


def shape_line(cls: type[msgspec.Struct]) -> str:
    """``cls`` as a line: its tag and required fields with their types, then its optional fields' names."""
    info = msgspec.inspect.type_info(cls)
    config = cls.__struct_config__
    parts = [f'"{config.tag_field}": "{config.tag}"'] if config.tag_field else []
    optional = []
    for field in info.fields:  # type: ignore[attr-defined]  # type_info of a Struct class is a StructType, which has fields
        if field.required:
            parts.append(f'"{field.encode_name}": {type_name(field.type)}')
        elif field.encode_name not in ("id", "parentId", "timestamp") or config.tag_field == "role":
            optional.append(field.encode_name)
    line = "{" + ", ".join(parts) + "}"
    return line + (f" (optional: {', '.join(optional)})" if optional else "")


def type_name(kind: object) -> str:
    inspect = msgspec.inspect
    if isinstance(kind, inspect.StrType):
        return "string"
    if isinstance(kind, (inspect.IntType, inspect.FloatType)):
        return "number"
    if isinstance(kind, inspect.BoolType):
        return "boolean"
    if isinstance(kind, inspect.NoneType):
        return "null"
    if isinstance(kind, (inspect.DictType, inspect.AnyType)):
        return "object" if isinstance(kind, inspect.DictType) else "any"
    if isinstance(kind, inspect.ListType):
        return f"[{type_name(kind.item_type)}]"
    if isinstance(kind, inspect.LiteralType):
        return " | ".join(f'"{value}"' for value in kind.values)
    if isinstance(kind, inspect.UnionType):
        tagged = [
            member
            for member in kind.types
            if isinstance(member, inspect.StructType) and member.cls.__struct_config__.tag_field
        ]
        rest = [type_name(member) for member in kind.types if member not in tagged]
        if tagged:  # a choice of tagged objects, shown by their tags: {"type": "text" | "image", ...}
            tag_field = tagged[0].cls.__struct_config__.tag_field
            values = " | ".join(f'"{member.cls.__struct_config__.tag}"' for member in tagged)
            rest.append(f'{{"{tag_field}": {values}, ...}}')
        return " | ".join(rest)
    if isinstance(kind, inspect.StructType):
        config = kind.cls.__struct_config__
        return f'{{"{config.tag_field}": "{config.tag}", ...}}' if config.tag_field else kind.cls.__name__
    return "any"
