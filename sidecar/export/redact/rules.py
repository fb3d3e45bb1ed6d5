"""The detectors: one row per kind of secret, a compiled pattern and what of its match is the secret.

A compact table of our own rather than a scanner library (see bench/redact_eval.py for
the measurement behind that choice): every row is a provider's documented token shape
with a fixed prefix, so a scan is a fast literal search, plus three contextual rows
(assignments to secret-sounding names, passwords in URLs, high-entropy strings next
to key/token/secret) whose values pass a plausibility check before they count.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True, slots=True)
class Rule:
    kind: str
    pattern: re.Pattern[str]
    # The group holding the secret (0: the whole match).
    group: int = 0
    # A check on the candidate value; False: not a secret after all.
    accept: Callable[[str], bool] | None = None
    # Every match holds a run of 12 or more non-space characters: a text without one
    # cannot match, and is not searched (see ``has_long_run``).
    long_run: bool = True
    # Every match contains one of these (in the text lowercased, for a row whose names are
    # matched in any case): a text holding none is not searched. Empty: always searched.
    needles: tuple[str, ...] = ()
    lowercase_needles: bool = False


def entropy(value: str) -> float:
    """Shannon entropy per character (bits)."""
    if not value:
        return 0.0
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


# Values that sit after "password =" or "token:" in ordinary code and are no secret.
_CODE_VALUE = re.compile(
    r"""^(?:
        (?:self|this|cls|os|env|process|config|settings|args|opts|options|params|ctx|req|request|secrets?)[.\[]
      | [$%{<(\[]            # ${VAR}, %(name)s, {{ template }}, <placeholder>, (expr), [list]
      | (?:none|null|nil|true|false|undefined|str|string|int|bool|bytes|any|optional|required|redacted|changeme|password|passwd|pass|pwd|pw|secret|xxx+|\*+)$  # the word itself: a placeholder, as in user:password@host
      | .*\(                 # a call: get_password(...)
      | .*\[REDACTED          # already a placeholder
    )""",
    re.IGNORECASE | re.VERBOSE,
)
# Brackets of generics, indexing and calls: `Option<String>`, `NotRequired[int`, `f(x)`.
_TYPE_OR_CALL = re.compile(r"[<>\[\](){}|]")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$")


def _plausible_password(value: str) -> bool:
    """A value assigned to password/passwd/pwd: anything that is not code or a placeholder."""
    value = value.strip("'\"`")
    if len(value) < 6 or _CODE_VALUE.match(value) or _IDENTIFIER.match(value):
        return False
    return not (value.isdigit() and len(value) < 10)


def _plausible_secret(value: str) -> bool:
    """A value assigned to a token/secret/key name: long, varied, not a word, a path or code."""
    value = value.strip("'\"`")
    if len(value) < 12 or _CODE_VALUE.match(value) or _IDENTIFIER.match(value) or _TYPE_OR_CALL.search(value):
        return False
    if value.startswith(("/", "./", "../", "~/", "http://", "https://")) or value.count("/") > 2:
        return False
    classes = sum((any(c.islower() for c in value), any(c.isupper() for c in value), any(c.isdigit() for c in value)))
    return classes >= 2 and entropy(value) >= 3.0


def _high_entropy(value: str) -> bool:
    """A bare string next to a key/token/secret word: random-looking enough to be one."""
    if _IDENTIFIER.match(value) or "/" in value[:1]:
        return False
    classes = sum((any(c.islower() for c in value), any(c.isupper() for c in value), any(c.isdigit() for c in value)))
    hexlike = all(c in "0123456789abcdefABCDEF" for c in value)
    if hexlike:
        return len(value) >= 32 and entropy(value) >= 3.2
    return classes >= 2 and entropy(value) >= 4.0


def _rule(kind: str, pattern: str, group: int = 0, accept: Callable[[str], bool] | None = None,
          long_run: bool = True) -> Rule:
    needles, lowercase = NEEDLES[kind]
    return Rule(kind, re.compile(pattern), group, accept, long_run, needles, lowercase)


# What each row's matches must contain, as (needles, in the lowercased text?). A `str in str`
# search runs at C speed; a row's regex then runs only on text that has one of its needles.
NEEDLES: dict[str, tuple[tuple[str, ...], bool]] = {
    "private-key": (("PRIVATE KEY",), False),
    "aws-access-key": (("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"), False),
    "aws-secret-key": (("aws",), True),
    "anthropic-api-key": (("sk-ant-",), False),
    "openai-api-key": (("sk-",), False),
    "github-token": (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), False),
    "gitlab-token": (("glpat-", "glptt-", "gldt-", "glrt-", "glcbt-", "gloas-", "glsoat-", "glft-", "glimt-", "glagent-"), False),
    "slack-webhook": (("hooks.slack.com/",), False),
    "slack-token": (("xox", "xapp-"), False),
    "stripe-key": (("_live_", "_test_", "whsec_"), False),
    "twilio-key": (("SK", "AC"), False),
    "google-api-key": (("AIza",), False),
    "google-oauth": (("ya29.", "GOCSPX-", "1//0"), False),
    "gcp-service-account": (('"private_key_id"',), False),
    "azure-key": (("Key=", "sig="), False),
    "azure-client-secret": (("Q~",), False),
    "jwt": (("eyJ",), False),
    "npm-token": (("npm_",), False),
    "pypi-token": (("pypi-AgE",), False),
    "huggingface-token": (("hf_",), False),
    "sendgrid-key": (("SG.",), False),
    "mailgun-key": (("key-",), False),
    "digitalocean-token": (("_v1_",), False),
    "shopify-token": (("shpat_", "shpca_", "shppa_", "shpss_"), False),
    "telegram-bot-token": ((":AA",), False),
    "databricks-token": (("dapi",), False),
    "age-secret-key": (("AGE-SECRET-KEY-1",), False),
    "url-password": (("://",), False),
    "bearer-token": (("bearer", "basic", "token"), True),
    "password": (("passw", "passph", "pwd"), True),
    "secret-assignment": (("secret", "token", "key", "credential", "bearer"), True),
    "high-entropy-near-keyword": (("key", "token", "secret"), True),
}


# The gates (see ``Redactor.text``). Every row but the password row needs a run of 12 or more
# non-space characters (its shortest secret is 12 characters, or is joined to its name or URL
# by no space); the password row needs one of its names.
_SPACE_OR_OTHER = bytes(0x20 if i < 128 and chr(i).isspace() else 0x78 for i in range(256))
_TWELVE = b"x" * 12


def has_long_run(text: str) -> bool:
    """True when ``text`` may hold 12 non-space characters in a row (never False when it does).

    Two C passes (encode, translate) and a substring search: ~10x quicker than a regex scan.
    Non-ASCII characters count as non-space bytes, which can only make a run look longer.
    """
    if len(text) < 12:
        return False
    return _TWELVE in text.encode("utf-8", "surrogatepass").translate(_SPACE_OR_OTHER)


# The same gates on a session file's line as written (JSON): a quote also ends a run there, so
# that `"path":"src/x.py"` is not one long run. Escapes (\n, \uXXXX) only make runs longer.
_SPACE_QUOTE_OR_OTHER = bytes(0x20 if i < 128 and (chr(i).isspace() or chr(i) == '"') else 0x78 for i in range(256))
# pi's envelope, first in every line it writes: type, id, parentId and timestamp, none of them free text.
_ENVELOPE = re.compile(rb'\{"type":"[^"\\]*","id":"[^"\\]*","parentId":(?:null|"[^"\\]*"),"timestamp":"[^"\\]*"')


def line_may_hold_secret(raw: bytes) -> bool:
    """False only when no row can match any string of this JSON line (its envelope aside)."""
    envelope = _ENVELOPE.match(raw)
    body = raw[envelope.end():] if envelope else raw
    if _TWELVE in body.translate(_SPACE_QUOTE_OR_OTHER):
        return True
    lower = body.lower()
    return b"passw" in lower or b"passph" in lower or b"pwd" in lower


def has_password_hint(text: str) -> bool:
    """The password row's gate: one of its names (passw.., passph.., pwd) in any case."""
    lower = text.lower()
    return "passw" in lower or "passph" in lower or "pwd" in lower



# Secret-sounding names: an assignment `NAME = value`, `"name": "value"`, `name: value`, `--name value`.
_SECRET_NAME = r"(?:secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret|auth[_-]?key|credentials?|signing[_-]?key|encryption[_-]?key|session[_-]?key|bearer)"
_PASSWORD_NAME = r"(?:password|passwd|passphrase|pwd)"
_ASSIGN = r"""[A-Za-z0-9_.-]{0,40}["']?\s{0,3}(?::=|=>|=|:)\s{0,3}["'`]?"""

# Order matters where shapes overlap: the more specific row first (an overlap keeps the earlier row).
RULES: tuple[Rule, ...] = (
    _rule("private-key", r"-----BEGIN[A-Z ]{0,30} PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]{0,20000}?-----END[A-Z ]{0,30} PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\]*)"),
    _rule("aws-access-key", r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"),
    _rule("aws-secret-key", r"(?i:aws)[A-Za-z0-9_ .-]{0,30}(?i:secret)[A-Za-z0-9_ .-]{0,30}[\"']?\s{0,3}(?::=|=>|=|:)\s{0,3}[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])", 1),
    _rule("anthropic-api-key", r"\bsk-ant-(?:api|admin|oat|ort)\d{2}-[A-Za-z0-9_-]{20,}"),
    _rule("openai-api-key", r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}|\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|\bsk-[A-Za-z0-9]{48}\b"),
    _rule("github-token", r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b|\bgithub_pat_[A-Za-z0-9_]{40,255}"),
    _rule("gitlab-token", r"\bgl(?:pat|ptt|dt|rt|cbt|oas|soat|ft|imt|agent)-[A-Za-z0-9_-]{20,}"),
    _rule("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}"),
    _rule("slack-token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{20,}"),
    _rule("stripe-key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}|\bwhsec_[A-Za-z0-9]{24,}"),
    _rule("twilio-key", r"\b(?:SK|AC)[0-9a-f]{32}\b"),
    _rule("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}"),
    _rule("google-oauth", r"\bya29\.[0-9A-Za-z_-]{20,}|\bGOCSPX-[A-Za-z0-9_-]{20,}|\b1//0[A-Za-z0-9_-]{30,}"),
    _rule("gcp-service-account", r"\"private_key_id\"\s*:\s*\"([0-9a-f]{40})\"", 1),
    _rule("azure-key", r"(?:AccountKey|SharedAccessKey|AccessKey)=([A-Za-z0-9+/]{30,}={0,2})|[?&]sig=([A-Za-z0-9%+/]{30,}={0,2}(?:%3D){0,2})"),
    _rule("azure-client-secret", r"\b[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}"),
    _rule("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    _rule("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    _rule("pypi-token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}"),
    _rule("huggingface-token", r"\bhf_[A-Za-z0-9]{34,}\b"),
    _rule("sendgrid-key", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b"),
    _rule("mailgun-key", r"\bkey-[0-9a-f]{32}\b"),
    _rule("digitalocean-token", r"\bdo[opr]_v1_[a-f0-9]{64}\b"),
    _rule("shopify-token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    _rule("telegram-bot-token", r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b"),
    _rule("databricks-token", r"\bdapi[a-f0-9]{32}\b"),
    _rule("age-secret-key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b"),
    _rule("url-password", r"\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@'\"<>]{0,64}:([^\s@/'\"<>]{3,128})@", 1,
          lambda v: not _CODE_VALUE.match(v)),
    _rule("bearer-token", r"\b(?:Bearer|Basic|Token)\s+([A-Za-z0-9._~+/-]{20,}={0,2})", 1, _high_entropy),
    _rule("password", r"(?i:" + _PASSWORD_NAME + r")" + _ASSIGN + r"([^\s\"'`,;]{6,200})", 1, _plausible_password,
          long_run=False),
    _rule("secret-assignment", r"(?i:" + _SECRET_NAME + r")" + _ASSIGN + r"([^\s\"'`,;]{12,400})", 1, _plausible_secret),
    _rule("high-entropy-near-keyword", r"(?i:\b(?:key|token|secret))\b[^\n]{0,24}?(?<![A-Za-z0-9+/_-])([A-Za-z0-9+/_-]{24,200})(?![A-Za-z0-9+/_-])", 1, _high_entropy),
)
