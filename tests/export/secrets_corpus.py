"""A generated corpus of planted secrets, and one of ordinary text, seeded so every run plants the same.

The planted side: every rule's positive forms (MAKERS: provider shapes, key blocks, URLs; and
``named_forms``: a value under a secret-sounding name in env files, shell, YAML, TOML, JSON raw
and escaped once and twice, Python, CLI flags, URL queries and HTTP headers, in every alphabet a
value comes in), placed by ``place_entries`` in every place an entry holds text. Each planted
secret keeps its random core: a leak check looks for any 12-character piece of a core in an
export, so half a key left behind counts as a leak too.

The ordinary side (``ordinary_texts``): this repository's code and prose, diffs made of its files,
and log lines, with no secret in them.
"""

from __future__ import annotations

import json
import random
import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    # For a named form: the name and the value as a key/value pair holds them ({name: value}).
    name: str | None = None
    value: str | None = None


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
_simple(
    "openai-api-key",
    lambda rng: (lambda a, b: (f"sk-proj-{a}T3BlbkFJ{b}", a + b))(_pick(rng, URLSAFE, 40), _pick(rng, URLSAFE, 40)),
)
_simple(
    "slack-token",
    lambda rng: (lambda c: (f"xoxb-{rng.randrange(10**11, 10**12)}-{rng.randrange(10**12, 10**13)}-{c}", c))(
        _pick(rng, ALNUM, 24)
    ),
)
_simple(
    "slack-webhook",
    lambda rng: (
        lambda c: (
            f"https://hooks.slack.com/services/T0{_pick(rng, UPPER_DIGITS, 8)}/B0{_pick(rng, UPPER_DIGITS, 8)}/{c}",
            c,
        )
    )(_pick(rng, ALNUM, 24)),
)
_simple("stripe-key", _core("sk_live_", ALNUM, 24))
_simple("twilio-key", _core("SK", HEX, 32))
_simple("google-api-key", _core("AIza", URLSAFE, 35))
_simple("google-oauth", _core("ya29.a0", URLSAFE, 60))
_simple(
    "azure-storage-key",
    lambda rng: (
        lambda c: (
            f"DefaultEndpointsProtocol=https;AccountName=prodlogs;AccountKey={c}==;EndpointSuffix=core.windows.net",
            c,
        )
    )(_pick(rng, B64, 86)),
)
_simple(
    "azure-client-secret", lambda rng: (lambda c: (f"{_pick(rng, ALNUM, 3)}8Q~{c}", c))(_pick(rng, URLSAFE + "~.", 34))
)
_simple("jwt", _jwt)
_simple("rsa-private-key", lambda rng: _pem(rng, "RSA "))
_simple("openssh-private-key", lambda rng: _pem(rng, "OPENSSH "))
_simple("ec-private-key", lambda rng: _pem(rng, "EC "))
_simple(
    "postgres-url-password",
    lambda rng: (lambda c: (f"postgres://app_user:{c}@db.internal:5432/orders", c))(_pick(rng, ALNUM + "!*-", 18)),
)
_simple(
    "mongodb-url-password",
    lambda rng: (lambda c: (f"mongodb+srv://admin:{c}@cluster0.abcde.mongodb.net/test", c))(_pick(rng, ALNUM, 16)),
)
_simple("redis-url-password", lambda rng: (lambda c: (f"redis://:{c}@cache.internal:6379/0", c))(_pick(rng, ALNUM, 20)))
_simple("env-password", lambda rng: (lambda c: (f"DB_PASSWORD={c}", c))(_pick(rng, ALNUM + "#%!", 14)))
_simple("env-secret", lambda rng: (lambda c: (f"SESSION_SECRET={c}", c))(_pick(rng, ALNUM, 32)))
_simple(
    "json-api-key", lambda rng: (lambda c: (f'{{"api_key": "{c}", "region": "eu-west-1"}}', c))(_pick(rng, ALNUM, 32))
)
_simple("yaml-client-secret", lambda rng: (lambda c: (f"client_secret: {c}", c))(_pick(rng, URLSAFE, 40)))
_simple("keyword-high-entropy", lambda rng: (lambda c: (f"the deploy token is {c}", c))(_pick(rng, ALNUM, 40)))
_simple(
    "bearer-header",
    lambda rng: (lambda c: (f'curl -H "Authorization: Bearer {c}" https://api.example.com/v1/me', c))(
        _pick(rng, URLSAFE, 48)
    ),
)
_simple("npm-token", _core("npm_", ALNUM, 36))
_simple("pypi-token", _core("pypi-AgEIcHlwaS5vcmc", URLSAFE, 64))
_simple("huggingface-token", _core("hf_", ALNUM, 34))
_simple(
    "sendgrid-key", lambda rng: (lambda a, b: (f"SG.{a}.{b}", a + b))(_pick(rng, URLSAFE, 22), _pick(rng, URLSAFE, 43))
)
_simple(
    "telegram-bot-token", lambda rng: (lambda c: (f"{rng.randrange(10**8, 10**9)}:AA{c}", c))(_pick(rng, URLSAFE, 33))
)
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


_RUN = re.compile(r"[^\s\"'`<>(){}\[\],;:&|@\\]+")


def leaks(planted: list[tuple[str, Planted]], exported: str, window: int = 12) -> list[Planted]:
    """Planted secrets any ``window``-character piece of whose core is still in ``exported`` (a core
    shorter than that: the whole core). Every piece of every core is indexed once, and the export's
    runs of characters a core can hold are read once, window by window."""
    pieces: dict[str, list[Planted]] = {}
    for _, secret in planted:
        core = secret.core.replace("\n", "")
        for i in range(0, max(1, len(core) - window + 1)):
            pieces.setdefault(core[i : i + window], []).append(secret)
    sizes = sorted({len(piece) for piece in pieces})
    found: dict[int, Planted] = {}
    for run in _RUN.finditer(exported):
        text = run.group()
        for size in sizes:
            for i in range(len(text) - size + 1):
                hit = pieces.get(text[i : i + size])
                if hit:
                    found.update((id(secret), secret) for secret in hit)
    return [secret for _, secret in planted if id(secret) in found]


def entries(planted: list[tuple[str, Planted]]) -> list[dict[str, Any]]:
    """Session entries carrying the planted secrets, each in its place, in pi's shapes."""
    out: list[dict[str, Any]] = []
    for index, (place, secret) in enumerate(planted):
        prose = f"While debugging step {index} I found this in the config: {secret.text} (see above)."
        if place == "message":
            out.append({"type": "message", "message": {"role": "user", "content": prose}})
        elif place == "thinking":
            out.append(
                {
                    "type": "message",
                    "message": {
                        "role": "assistant",
                        "content": [{"type": "thinking", "thinking": prose}, {"type": "text", "text": "Checking."}],
                    },
                }
            )
        elif place == "tool-arguments":
            out.append(
                {
                    "type": "message",
                    "message": {
                        "role": "assistant",
                        "content": [
                            {
                                "type": "toolCall",
                                "id": f"call_{index}",
                                "name": "bash",
                                "arguments": {
                                    "command": f"export VALUE='{secret.text}' && ./deploy.sh",
                                    "note": secret.text,
                                },
                            }
                        ],
                    },
                }
            )
            out.append(
                {
                    "type": "message",
                    "message": {
                        "role": "toolResult",
                        "toolCallId": f"call_{index}",
                        "toolName": "bash",
                        "content": [{"type": "text", "text": "ok"}],
                        "isError": False,
                    },
                }
            )
        elif place == "tool-output":
            out.append(
                {
                    "type": "message",
                    "message": {
                        "role": "assistant",
                        "content": [
                            {
                                "type": "toolCall",
                                "id": f"call_{index}",
                                "name": "read",
                                "arguments": {"path": "config/settings.env"},
                            }
                        ],
                    },
                }
            )
            out.append(
                {
                    "type": "message",
                    "message": {
                        "role": "toolResult",
                        "toolCallId": f"call_{index}",
                        "toolName": "read",
                        "content": [
                            {"type": "text", "text": f"# settings\nLOG_LEVEL=info\n{secret.text}\nPORT=8080\n"}
                        ],
                        "isError": False,
                    },
                }
            )
        else:
            out.append(
                {
                    "type": "custom",
                    "customType": "deploy-notes",
                    "data": {"step": index, "found": secret.text, "nested": [{"value": secret.text}]},
                }
            )
    return out


# Real-shaped keys that tests outside tests/export plant on purpose (the export-over-rpc tests of
# tests/rpc/test_methods.py and clients/typescript/test/sessions.test.ts): a line holding one holds a
# secret by every detector's reading (gitleaks flags the same lines), so it is not ordinary text.
PLANTED_ELSEWHERE = ("AKIAQ3EGRTWX5ZKLM7PB",)


def ordinary_lines(repo: Path, leave_out: frozenset[str] = frozenset()) -> list[str]:
    """Text with no secret in it: this repository's code, docs and scripts, and every string of
    pi's session fixtures (``tests/fixtures/pi``). The export tests' folder is left
    out (it plants secrets on purpose), and so are files named in ``leave_out`` and the lines
    of other tests that plant a key of ``PLANTED_ELSEWHERE``."""
    patterns = (
        "sidecar/**/*.py",
        "tests/**/*.py",
        "clients/**/*.ts",
        "clients/**/*.go",
        "clients/**/*.rs",
        "clients/**/*.lua",
        "clients/**/*.py",
        "bench/*.py",
        "protocol/*.md",
        "README.md",
        "scripts/**/*.sh",
    )
    lines: list[str] = []
    for pattern in patterns:
        for path in sorted(repo.glob(pattern)):
            if {"node_modules", "target", "export"} & set(path.relative_to(repo).parts) or path.name in leave_out:
                continue
            lines.extend(
                line
                for line in path.read_text(errors="replace").splitlines()
                if not any(key in line for key in PLANTED_ELSEWHERE)
            )

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


# --- Names decide: a value under a secret-sounding name, in every syntax and alphabet -------------

NAMES = (
    "APP_KEY",
    "APPLICATION_KEY",
    "app_key",
    "access_token",
    "ACCESS_TOKEN",
    "SESSION_SECRET",
    "client_secret",
    "apiKey",
    "authToken",
    "MYAPP_API_KEY",
    "stripe.secret",
    "refresh-token",
    "X_AUTH",
    "SECRET_KEY_BASE",
    "encryptionKey",
    "credentials",
    "DATADOG_APP_KEY",
    "ALGOLIA_APPLICATION_KEY",
    "deploy_key",
    "auth",
    "GITHUB_TOKEN",
    "webhookSecret",
    "signing.key",
    "AccessKey",
)
PASSWORD_NAMES = ("DB_PASSWORD", "db_passwd", "adminPassword", "SMTP_PASS", "keystore.password", "POSTGRES_PWD")
HEX_UPPER = "0123456789ABCDEF"
LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
# alphabet -> (characters, length): "whatever the value's alphabet"
VALUE_ALPHABETS = {
    "hex40": (HEX, 40),
    "hex-upper32": (HEX_UPPER, 32),
    "digits20": (string.digits, 20),
    "base64": (B64, 43),
    "urlsafe32": (URLSAFE, 32),
    "alnum24": (ALNUM, 24),
    "lower24": (LOWER, 24),
    "upper20": (UPPER, 20),
    "uuid": ("", 36),
    "letters28": (string.ascii_letters, 28),
}
PASSWORD_ALPHABETS = {
    "symbols14": (ALNUM + "#%!*+^~", 14),
    "hex12": (HEX, 12),
    "digits10": (string.digits, 10),
    "alnum10": (ALNUM, 10),
    "lower16": (LOWER, 16),
}
# syntax -> how a name and a value are written
SYNTAXES: dict[str, Callable[[str, str], str]] = {
    "env": lambda n, v: f"{n}={v}",
    "env-quoted": lambda n, v: f'{n}="{v}"',
    "shell-export": lambda n, v: f"export {n}='{v}'",
    "shell-inline": lambda n, v: f"{n}={v} ./deploy.sh --prod",
    "yaml": lambda n, v: f"  {n}: {v}",
    "yaml-quoted": lambda n, v: f'{n}: "{v}"',
    "toml": lambda n, v: f'{n} = "{v}"',
    "json": lambda n, v: json.dumps({n: v, "region": "eu-west-1"}),
    "json-compact": lambda n, v: json.dumps({"config": {n: v}}, separators=(",", ":")),
    "json-escaped": lambda n, v: json.dumps(json.dumps({n: v}))[1:-1],
    "json-escaped-twice": lambda n, v: json.dumps(json.dumps(json.dumps({n: v})))[1:-1],
    "python-kwarg": lambda n, v: f'client = Client({n.replace(".", "_").replace("-", "_")}="{v}", timeout=30)',
    "python-dict": lambda n, v: f"settings = {{'{n}': '{v}'}}",
    "cli-flag": lambda n, v: f"mytool login --{_kebab(n)} {v} --verbose",
    "cli-flag-equals": lambda n, v: f"mytool login --{_kebab(n)}={v}",
    "url-query": lambda n, v: f"https://api.example.com/v1/items?page=2&{n}={v}&sort=asc",
}
HEADERS = (
    ("X-Api-Key", ""),
    ("X-Auth-Token", ""),
    ("Authorization", "Bearer "),
    ("Authorization", "token "),
    ("Private-Token", ""),
    ("Authorization", "Basic "),
    ("X-Goog-Api-Key", ""),
)


def _kebab(name: str) -> str:
    import re

    words = re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+", name)
    return "-".join(word.lower() for word in words)


def _value(rng: random.Random, alphabet: str, count: int) -> str:
    if not alphabet:  # a UUID
        raw = _pick(rng, HEX, 32)
        return f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:]}"
    return _pick(rng, alphabet, count)


def named_forms(rng: random.Random, rotation: int | None = None) -> list[Planted]:
    """Every syntax with every alphabet (names rotating), passwords likewise, and every header form.
    With ``rotation``, every syntax and header with a few alphabets, chosen so that successive
    rotations (one per place) go through them all."""
    out: list[Planted] = []
    turn = 0
    alphabets, passwords = list(VALUE_ALPHABETS.items()), list(PASSWORD_ALPHABETS.items())
    for index, (syntax, write) in enumerate(SYNTAXES.items()):
        values = (
            alphabets
            if rotation is None
            else [alphabets[(3 * rotation + index + k) % len(alphabets)] for k in range(3)]
        )
        secrets = (
            passwords
            if rotation is None
            else [passwords[(2 * rotation + index + k) % len(passwords)] for k in range(2)]
        )
        for alphabet, (chars, count) in values:
            name = NAMES[turn % len(NAMES)]
            turn += 1
            value = _value(rng, chars, count)
            out.append(Planted(f"named:{syntax}:{alphabet}", write(name, value), value, name, value))
        for alphabet, (chars, count) in secrets:
            name = PASSWORD_NAMES[turn % len(PASSWORD_NAMES)]
            turn += 1
            value = _value(rng, chars, count)
            out.append(Planted(f"password:{syntax}:{alphabet}", write(name, value), value, name, value))
    header_alphabets = ("hex40", "urlsafe32", "base64", "alnum24")
    for number, (header, scheme) in enumerate(HEADERS):
        for alphabet in header_alphabets if rotation is None else [header_alphabets[(rotation + number) % 4]]:
            chars, count = VALUE_ALPHABETS[alphabet]
            value = _value(rng, chars, count)
            text = f"curl -sS -H '{header}: {scheme}{value}' https://api.example.com/v1/me"
            out.append(
                Planted(f"header:{header}:{scheme.strip() or '-'}:{alphabet}", text, value, header, scheme + value)
            )
    return out


def cut_blocks(rng: random.Random) -> list[Planted]:
    """Private key blocks cut short (no END), as a one-line summary or a cut output quotes them."""
    out = []
    for kind in ("RSA ", "OPENSSH ", "EC ", ""):
        lines = [_pick(rng, B64, 64) for _ in range(3)] + [_pick(rng, B64, 23)]
        body = "\n".join(lines)
        out.append(
            Planted(f"cut-private-key:{kind.strip() or 'pkcs8'}", f"-----BEGIN {kind}PRIVATE KEY-----\n{body}", body)
        )
        flat = " ".join(lines[:2])
        out.append(
            Planted(
                f"cut-private-key-one-line:{kind.strip() or 'pkcs8'}",
                f"-----BEGIN {kind}PRIVATE KEY----- {flat}…",
                flat.replace(" ", "\n"),
            )
        )
    return out


def edge_forms(rng: random.Random) -> list[Planted]:
    """Forms that slipped past a gate or a row's edge once: a value ending in "-" (a row's end once
    wanted a word character after it), a URL's password too short to make a run of 12 once the
    line's colons split it, a short password whose "=" a line may hold as \\u003d, a key id cut short with an "=" in what is left (the line gate split its
    run there), a key block's BEGIN line alone."""
    sendgrid = f"{_pick(rng, URLSAFE, 22)}.{_pick(rng, URLSAFE, 42)}-"
    telegram = _pick(rng, URLSAFE, 32) + "-"
    short_password = _pick(rng, ALNUM, 8)
    short_value = _pick(rng, ALNUM, 8)  # with its "=" escaped (\u003d), too short for a run of 20
    cut_key = f"{_pick(rng, UPPER_DIGITS, 6)}={_pick(rng, UPPER_DIGITS, 4)}"
    return [
        Planted("sendgrid-key:dash-end", f"SG.{sendgrid}", sendgrid),
        Planted("telegram-bot-token:dash-end", f"{rng.randrange(10**8, 10**9)}:AA{telegram}", telegram),
        Planted("url-password:short", f"ftp://u:{short_password}@h:21", short_password),
        Planted("password:short-env", f"pwd={short_value}", short_value, "pwd", short_value),
        Planted("cut-token:aws-split", f"AKIA{cut_key}…", cut_key),
        Planted(
            "private-key:header-only", f"-----BEGIN {rng.choice(['RSA ', 'EC ', ''])}PRIVATE KEY-----", "-----BEGIN"
        ),
    ]


def every_form(seed: int, rotation: int | None = None) -> list[Planted]:
    """Every rule's positive forms once, with values drawn from ``seed`` (see ``named_forms`` for ``rotation``)."""
    rng = random.Random(seed)
    shapes = [Planted(kind, *make(rng)) for kind, make in MAKERS.items()]
    return shapes + named_forms(rng, rotation) + cut_blocks(rng) + edge_forms(rng)


# Places an entry holds text in (the offline summaries are made from them by the sidecar).
ENTRY_PLACES = (
    "user-text",
    "user-blocks",
    "assistant-text",
    "thinking",
    "tool-arguments",
    "tool-arguments-named",
    "tool-arguments-escaped",
    "tool-output",
    "tool-error",
    "bash-execution",
    "custom-data",
    "custom-message",
    "compaction-details",
    "branch-summary",
    # One form to an entry with little around it: no other form's run makes the gate look inside.
    "user-text-alone",
    # An assistant's error after its usage and last timestamp, where pi writes it.
    "error-message",
)


def _chunks(items: list[Any], size: int) -> list[list[Any]]:
    return [items[start : start + size] for start in range(0, len(items), size)]


def place_entries(place: str, secrets: list[Planted], group: int = 8) -> list[dict[str, Any]]:
    """Entries holding ``secrets`` in ``place``, ``group`` to an entry, in pi's shapes."""
    out: list[dict[str, Any]] = []
    for number, chunk in enumerate(_chunks(secrets, group)):
        lines = [f"step {number}.{i}: found {s.text} in the config (see above)." for i, s in enumerate(chunk)]
        text = "\n".join(lines)
        call_id = f"call_{place}_{number}"
        if place == "user-text":
            out.append({"type": "message", "message": {"role": "user", "content": text}})
        elif place == "user-blocks":
            out.append(
                {
                    "type": "message",
                    "message": {"role": "user", "content": [{"type": "text", "text": line} for line in lines]},
                }
            )
        elif place == "assistant-text":
            out.append(
                {
                    "type": "message",
                    "message": {"role": "assistant", "content": [{"type": "text", "text": text}], "stopReason": "stop"},
                }
            )
        elif place == "thinking":
            out.append(
                {
                    "type": "message",
                    "message": {
                        "role": "assistant",
                        "content": [{"type": "thinking", "thinking": text}, {"type": "text", "text": "Checking."}],
                        "stopReason": "stop",
                    },
                }
            )
        elif place in ("tool-arguments", "tool-arguments-named", "tool-arguments-escaped"):
            calls = []
            for i, secret in enumerate(chunk):
                if place == "tool-arguments":
                    arguments: Any = {"command": f"echo '{secret.text}' >> .env", "note": secret.text}
                    name = "bash"
                elif place == "tool-arguments-named":  # the key names the value
                    held = secret.value if secret.name else secret.text
                    arguments = {"path": "config.json", "env": {secret.name or "value": held}}
                    name = "write"
                else:  # JSON quoted inside an argument, twice (pi's arguments are an object: append refuses a string)
                    arguments = {
                        "path": "config.json",
                        "content": json.dumps(
                            {
                                "path": "config.json",
                                "content": json.dumps({secret.name or "note": secret.value or secret.text}),
                            }
                        ),
                    }
                    name = "write"
                calls.append({"type": "toolCall", "id": f"{call_id}_{i}", "name": name, "arguments": arguments})
            out.append({"type": "message", "message": {"role": "assistant", "content": calls, "stopReason": "toolUse"}})
            for call in calls:
                if place == "tool-arguments-escaped":
                    continue  # left pending: the offline summary quotes pending calls
                out.append(
                    {
                        "type": "message",
                        "message": {
                            "role": "toolResult",
                            "toolCallId": call["id"],
                            "toolName": call["name"],
                            "content": [{"type": "text", "text": "ok"}],
                            "isError": False,
                        },
                    }
                )
        elif place in ("tool-output", "tool-error"):
            out.append(
                {
                    "type": "message",
                    "message": {
                        "role": "assistant",
                        "content": [
                            {
                                "type": "toolCall",
                                "id": call_id,
                                "name": "bash",
                                "arguments": {"command": "cat config/settings.env"},
                            }
                        ],
                        "stopReason": "toolUse",
                    },
                }
            )
            out.append(
                {
                    "type": "message",
                    "message": {
                        "role": "toolResult",
                        "toolCallId": call_id,
                        "toolName": "bash",
                        "content": [{"type": "text", "text": f"# settings\nLOG_LEVEL=info\n{text}\nPORT=8080\n"}],
                        "isError": place == "tool-error",
                    },
                }
            )
        elif place == "bash-execution":
            out.append(
                {
                    "type": "message",
                    "message": {
                        "role": "bashExecution",
                        "command": f"echo {chunk[0].text!r}",
                        "output": text,
                        "exitCode": 1,
                        "cancelled": False,
                        "truncated": False,
                    },
                }
            )
        elif place == "custom-data":
            out.append(
                {
                    "type": "custom",
                    "customType": "deploy-notes",
                    "data": {
                        "step": number,
                        "found": lines,
                        "nested": [{"value": s.text} for s in chunk],
                        "named": {s.name: s.value for s in chunk if s.name},
                    },
                }
            )
        elif place == "custom-message":
            out.append(
                {
                    "type": "custom_message",
                    "customType": "notes",
                    "display": True,
                    "content": [{"type": "text", "text": text}],
                }
            )
        elif place == "compaction-details":
            out.append(
                {
                    "type": "compaction",
                    "summary": f"Earlier work.\n{text}",
                    "firstKeptEntryId": None,
                    "tokensBefore": 1000,
                    "details": {
                        "readFiles": [s.text for s in chunk],
                        "modifiedFiles": [f"config/{s.text}" for s in chunk],
                    },
                }
            )
        elif place == "branch-summary":
            out.append(
                {
                    "type": "branch_summary",
                    "fromId": None,
                    "summary": text,
                    "details": {"readFiles": [s.text for s in chunk], "modifiedFiles": []},
                }
            )
        elif place == "user-text-alone":
            out.extend(
                {"type": "message", "message": {"role": "user", "content": f"found {s.text} here"}} for s in chunk
            )
        elif place == "error-message":
            out.extend(
                {
                    "type": "message",
                    "message": {
                        "role": "assistant",
                        "content": [],
                        "api": "anthropic-messages",
                        "provider": "anthropic",
                        "model": "claude-sonnet-4-5",
                        "usage": {
                            "input": 0,
                            "output": 0,
                            "cacheRead": 0,
                            "cacheWrite": 0,
                            "totalTokens": 0,
                            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
                        },
                        "stopReason": "error",
                        "timestamp": 1763681581545,
                        "errorMessage": f"request failed: {s.text}",
                    },
                }
                for s in chunk
            )
        else:
            raise ValueError(place)
    return out


def corpus(seed: int = 38) -> tuple[list[Planted], list[tuple[str, list[dict[str, Any]]]]]:
    """Every form in every place (each syntax with alphabets rotating from place to place, so that the
    places together hold every pair), values drawn anew for each place: (all planted, [(place, entries)])."""
    planted: list[Planted] = []
    placed = []
    for index, place in enumerate(ENTRY_PLACES):
        secrets = every_form(seed * 1000 + index, rotation=index)
        planted.extend(secrets)
        placed.append((place, place_entries(place, secrets)))
    return planted, placed


def secret_pieces(planted: list[Planted], window: int = 8) -> set[str]:
    """Every ``window``-character piece of the planted cores (8: a core cut short still counts), and the BEGIN/END lines of key blocks:
    what a line that holds a secret holds (see ``holds_secret``)."""
    pieces: set[str] = set()
    for secret in planted:
        lines = secret.core.split("\n") + [line for line in secret.text.split("\n") if "-----" in line]
        for line in lines:
            line = line.strip()
            pieces.update(line[i : i + window] for i in range(0, len(line) - window + 1))
    return pieces


def holds_secret(line: str, pieces: set[str], window: int = 8) -> bool:
    """Whether ``line`` holds a piece of a planted secret (``pieces``: from ``secret_pieces``)."""
    return any(line[i : i + window] in pieces for i in range(0, max(1, len(line) - window + 1)))


# --- The ordinary side ---------------------------------------------------------------------------


def ordinary_texts(repo: Path, lines_per_text: int = 40) -> list[str]:
    """A few thousand lines with no secret: code and prose of this repository, unified diffs made of
    its files, git-log and service-log lines; in texts of at most ``lines_per_text`` lines (as a
    tool's output is), each line of them non-empty."""
    import difflib

    code = [p for p in sorted(repo.glob("sidecar/*/*.py")) if "export" not in p.parts][:14]
    prose = [repo / "README.md", repo / "protocol" / "PROTOCOL.md"]
    lines: list[str] = []
    for path in code:
        lines.extend(path.read_text().splitlines())
    for path in prose:
        lines.extend(path.read_text().splitlines()[:600])
    for older, newer in zip(code[:6], code[1:7]):  # a diff between two of its files, as a diff tool shows it
        a, b = older.read_text().splitlines()[:120], newer.read_text().splitlines()[:120]
        lines.extend(
            difflib.unified_diff(a, b, f"a/{older.relative_to(repo)}", f"b/{newer.relative_to(repo)}", lineterm="")
        )
    rng = random.Random(7)
    for n in range(150):  # git log and a service's log: hashes and ids with no name that makes them secret
        commit = _pick(rng, HEX, 40)
        lines.append(
            f"commit {commit}"
            if n % 3 == 0
            else f"Merge: {commit[:7]} {_pick(rng, HEX, 7)}"
            if n % 3 == 1
            else f"2025-03-0{n % 9 + 1}T10:{n % 60:02d}:00.123Z INFO request_id={_pick(rng, HEX, 32)} trace={commit} "
            f"status=200 duration_ms={rng.randrange(1, 900)}"
        )
    lines = [line for line in lines if line.strip()]
    return ["\n".join(chunk) for chunk in _chunks(lines, lines_per_text)]
