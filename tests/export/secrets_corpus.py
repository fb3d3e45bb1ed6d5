"""A corpus of planted secrets: 31 kinds, each in several places of a session (message text,
tool arguments, tool output, thinking, custom entries), seeded so every run plants the same.

Each planted secret keeps its random core: a leak check looks for any 12-character
piece of a core in an export, so half a key left behind counts as a leak too.
"""

from __future__ import annotations

import json
import random
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"


@dataclass(frozen=True)
class Planted:
    kind: str
    # The text as it appears (with its context: "API_KEY=...", a URL, a PEM block).
    text: str
    # The random part that must not survive, whole or in part.
    core: str


def _pick(rng: random.Random, alphabet: str, count: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(count))


def _pem(rng: random.Random, kind: str) -> tuple[str, str]:
    lines = [_pick(rng, B64, 64) for _ in range(6)]
    body = "\n".join(lines)
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----", body


def _jwt(rng: random.Random) -> tuple[str, str]:
    import base64
    import json

    def part(obj: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    payload = part({"sub": _pick(rng, HEX, 12), "name": "Ada", "iat": rng.randrange(10**9, 2 * 10**9)})
    signature = _pick(rng, URLSAFE, 43)
    return f"{part({'alg': 'HS256', 'typ': 'JWT'})}.{payload}.{signature}", payload[8:] + signature


# kind -> maker(rng) -> (text as it appears, its random core)
MAKERS: dict[str, Callable[[random.Random], tuple[str, str]]] = {}


def _simple(kind: str, build: Callable[[random.Random], tuple[str, str]]) -> None:
    MAKERS[kind] = build


def _core(prefix: str, alphabet: str, count: int, suffix: str = "") -> Callable[[random.Random], tuple[str, str]]:
    def build(rng: random.Random) -> tuple[str, str]:
        core = _pick(rng, alphabet, count)
        return f"{prefix}{core}{suffix}", core
    return build


_simple("aws-access-key", _core("AKIA", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16))
_simple("aws-secret-key", lambda rng: (lambda c: (f"aws_secret_access_key = {c}", c))(_pick(rng, B64, 40)))
_simple("github-token", _core("ghp_", ALNUM, 36))
_simple("github-fine-grained", _core("github_pat_11A", ALNUM + "_", 79))
_simple("gitlab-token", _core("glpat-", URLSAFE, 20))
_simple("anthropic-api-key", _core("sk-ant-api03-", URLSAFE, 93, "AA"))
_simple("openai-api-key", lambda rng: (lambda a, b: (f"sk-proj-{a}T3BlbkFJ{b}", a + b))(_pick(rng, URLSAFE, 40), _pick(rng, URLSAFE, 40)))
_simple("slack-token", lambda rng: (lambda c: (f"xoxb-{rng.randrange(10**11, 10**12)}-{rng.randrange(10**12, 10**13)}-{c}", c))(_pick(rng, ALNUM, 24)))
_simple("slack-webhook", lambda rng: (lambda c: (f"https://hooks.slack.com/services/T0{_pick(rng, UPPER_DIGITS, 8)}/B0{_pick(rng, UPPER_DIGITS, 8)}/{c}", c))(_pick(rng, ALNUM, 24)))
_simple("stripe-key", _core("sk_live_", ALNUM, 24))
_simple("twilio-key", _core("SK", HEX, 32))
_simple("google-api-key", _core("AIza", URLSAFE, 35))
_simple("google-oauth", _core("ya29.a0", URLSAFE, 60))
_simple("azure-storage-key", lambda rng: (lambda c: (f"DefaultEndpointsProtocol=https;AccountName=prodlogs;AccountKey={c}==;EndpointSuffix=core.windows.net", c))(_pick(rng, B64, 86)))
_simple("azure-client-secret", lambda rng: (lambda c: (f"{_pick(rng, ALNUM, 3)}8Q~{c}", c))(_pick(rng, URLSAFE + "~.", 34)))
_simple("jwt", _jwt)
_simple("rsa-private-key", lambda rng: _pem(rng, "RSA "))
_simple("openssh-private-key", lambda rng: _pem(rng, "OPENSSH "))
_simple("ec-private-key", lambda rng: _pem(rng, "EC "))
_simple("postgres-url-password", lambda rng: (lambda c: (f"postgres://app_user:{c}@db.internal:5432/orders", c))(_pick(rng, ALNUM + "!*-", 18)))
_simple("mongodb-url-password", lambda rng: (lambda c: (f"mongodb+srv://admin:{c}@cluster0.abcde.mongodb.net/test", c))(_pick(rng, ALNUM, 16)))
_simple("redis-url-password", lambda rng: (lambda c: (f"redis://:{c}@cache.internal:6379/0", c))(_pick(rng, ALNUM, 20)))
_simple("env-password", lambda rng: (lambda c: (f"DB_PASSWORD={c}", c))(_pick(rng, ALNUM + "#%!", 14)))
_simple("env-secret", lambda rng: (lambda c: (f"SESSION_SECRET={c}", c))(_pick(rng, ALNUM, 32)))
_simple("json-api-key", lambda rng: (lambda c: (f'{{"api_key": "{c}", "region": "eu-west-1"}}', c))(_pick(rng, ALNUM, 32)))
_simple("yaml-client-secret", lambda rng: (lambda c: (f"client_secret: {c}", c))(_pick(rng, URLSAFE, 40)))
_simple("keyword-high-entropy", lambda rng: (lambda c: (f"the deploy token is {c}", c))(_pick(rng, ALNUM, 40)))
_simple("bearer-header", lambda rng: (lambda c: (f'curl -H "Authorization: Bearer {c}" https://api.example.com/v1/me', c))(_pick(rng, URLSAFE, 48)))
_simple("npm-token", _core("npm_", ALNUM, 36))
_simple("pypi-token", _core("pypi-AgEIcHlwaS5vcmc", URLSAFE, 64))
_simple("huggingface-token", _core("hf_", ALNUM, 34))
_simple("sendgrid-key", lambda rng: (lambda a, b: (f"SG.{a}.{b}", a + b))(_pick(rng, URLSAFE, 22), _pick(rng, URLSAFE, 43)))
_simple("telegram-bot-token", lambda rng: (lambda c: (f"{rng.randrange(10**8, 10**9)}:AA{c}", c))(_pick(rng, URLSAFE, 33)))
_simple("databricks-token", _core("dapi", HEX, 32))
_simple("digitalocean-token", _core("dop_v1_", HEX, 64))
_simple("shopify-token", _core("shpat_", HEX, 32))
_simple("mailgun-key", _core("key-", HEX, 32))
_simple("age-secret-key", _core("AGE-SECRET-KEY-1", "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L".upper(), 58))

PLACES = ("message", "tool-arguments", "tool-output", "thinking", "custom")


def plant(seed: int = 15, per_kind: int = 5) -> list[tuple[str, Planted]]:
    """(place, planted secret) pairs: every kind ``per_kind`` times, rotating through the places."""
    rng = random.Random(seed)
    out = []
    for kind, make in MAKERS.items():
        for n in range(per_kind):
            text, core = make(rng)
            out.append((PLACES[(n + len(out)) % len(PLACES)], Planted(kind, text, core)))
    return out


def leaks(planted: list[tuple[str, Planted]], exported: str, window: int = 12) -> list[Planted]:
    """Planted secrets any ``window``-character piece of whose core is still in ``exported``."""
    found = []
    for _, secret in planted:
        core = secret.core.replace("\n", "")
        pieces = {core[i:i + window] for i in range(0, max(1, len(core) - window + 1))}
        if any(piece in exported for piece in pieces):
            found.append(secret)
    return found


def entries(planted: list[tuple[str, Planted]]) -> list[dict[str, Any]]:
    """Session entries carrying the planted secrets, each in its place, in pi's shapes."""
    out: list[dict[str, Any]] = []
    for index, (place, secret) in enumerate(planted):
        prose = f"While debugging step {index} I found this in the config: {secret.text} (see above)."
        if place == "message":
            out.append({"type": "message", "message": {"role": "user", "content": prose}})
        elif place == "thinking":
            out.append({"type": "message", "message": {"role": "assistant", "content": [
                {"type": "thinking", "thinking": prose}, {"type": "text", "text": "Checking."}]}})
        elif place == "tool-arguments":
            out.append({"type": "message", "message": {"role": "assistant", "content": [
                {"type": "toolCall", "id": f"call_{index}", "name": "bash",
                 "arguments": {"command": f"export VALUE='{secret.text}' && ./deploy.sh", "note": secret.text}}]}})
            out.append({"type": "message", "message": {"role": "toolResult", "toolCallId": f"call_{index}", "toolName": "bash",
                                                        "content": [{"type": "text", "text": "ok"}], "isError": False}})
        elif place == "tool-output":
            out.append({"type": "message", "message": {"role": "assistant", "content": [
                {"type": "toolCall", "id": f"call_{index}", "name": "read", "arguments": {"path": "config/settings.env"}}]}})
            out.append({"type": "message", "message": {"role": "toolResult", "toolCallId": f"call_{index}", "toolName": "read",
                                                        "content": [{"type": "text", "text": f"# settings\nLOG_LEVEL=info\n{secret.text}\nPORT=8080\n"}],
                                                        "isError": False}})
        else:
            out.append({"type": "custom", "customType": "deploy-notes", "data": {"step": index, "found": secret.text,
                                                                               "nested": [{"value": secret.text}]}})
    return out


def ordinary_lines(repo: Path, leave_out: frozenset[str] = frozenset()) -> list[str]:
    """Text with no secret in it: this repository's code, docs and scripts, and every string of
    pi's session fixtures (``tests/fixtures/pi``). The export tests' folder is left
    out (it plants secrets on purpose), and so are files named in ``leave_out``."""
    patterns = ("sidecar/**/*.py", "tests/**/*.py", "clients/**/*.ts", "clients/**/*.go", "clients/**/*.rs",
                "clients/**/*.lua", "clients/**/*.py", "bench/*.py", "protocol/*.md", "README.md", "scripts/**/*.sh")
    lines: list[str] = []
    for pattern in patterns:
        for path in sorted(repo.glob(pattern)):
            if {"node_modules", "target", "export"} & set(path.relative_to(repo).parts) or path.name in leave_out:
                continue
            lines.extend(path.read_text(errors="replace").splitlines())

    def strings(value: object) -> None:
        if isinstance(value, str):
            lines.extend(value.splitlines())
        elif isinstance(value, list):
            for item in value:
                strings(item)
        elif isinstance(value, dict):
            for key, item in value.items():
                if key != "data":  # base64 image bytes
                    strings(item)

    for fixture in sorted((repo / "tests" / "fixtures" / "pi").glob("*.jsonl")):
        for raw in fixture.read_text().splitlines():
            strings(json.loads(raw))
    return lines
