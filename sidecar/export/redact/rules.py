"""The detectors: one row per kind of secret, a compiled pattern and what of its match is the secret.

A compact table of our own rather than a scanner library (see bench/redact_eval.py for
the measurement behind that choice): most rows are a provider's documented token shape
with a fixed prefix, so a scan is a fast literal search. Three rows read context:

- a private key block, which ends at its own END line or at the first thing that cannot be
  part of its body (a block cut short, as a one-line summary quotes it, takes nothing past it);
- a value assigned to a secret-sounding name (``APP_KEY=``, ``"access_token": "..."``, quoted
  or JSON-escaped to any depth, ``--api-key v``, ``X-Api-Key: v``, ``?token=v``): the name
  decides, whatever the value's alphabet, unless the value is code, a path or words;
- random-looking strings next to key/token/secret.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import AnyStr

from ... import corepath
from ...corepath import GateRules, LineGate


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
    # A row whose match may be shorter than a run of 12 (a key block's BEGIN line alone, a URL's short
    # password): searched in any text holding its needle, run or none.
    needle_gated: bool = False
    # Every match contains one of these (in the text lowercased, for a row whose names are
    # matched in any case): a text holding none is not searched. Empty: always searched.
    needles: tuple[str, ...] = ()
    lowercase_needles: bool = False
    # A row that reads past or around its match (blocks, named values): given the text and the
    # match, the secret's (start, end, kind), or None when the match holds no secret.
    span: Callable[[str, re.Match[str]], tuple[int, int, str] | None] | None = None
    # A row that is no pattern but a scan of its own: given the text and the text lowercased, the
    # secrets' (start, end, kind).
    scan: Callable[[str, str], list[tuple[int, int, str]]] | None = None


def entropy(value: str) -> float:
    """Shannon entropy per character (bits)."""
    if not value:
        return 0.0
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$")


def _high_entropy(value: str) -> bool:
    """A bare string next to a key/token/secret word: random-looking enough to be one."""
    if _IDENTIFIER.match(value) or "/" in value[:1]:
        return False
    classes = sum((any(c.islower() for c in value), any(c.isupper() for c in value), any(c.isdigit() for c in value)))
    hexlike = all(c in "0123456789abcdefABCDEF" for c in value)
    if hexlike:
        return len(value) >= 32 and entropy(value) >= 3.2
    return classes >= 2 and entropy(value) >= 4.0


def _rule(
    kind: str,
    pattern: str,
    group: int = 0,
    accept: Callable[[str], bool] | None = None,
    long_run: bool = True,
    span: Callable[[str, re.Match[str]], tuple[int, int, str] | None] | None = None,
    needle_gated: bool = False,
) -> Rule:
    needles, lowercase = NEEDLES[kind]
    return Rule(kind, re.compile(pattern), group, accept, long_run, needle_gated, needles, lowercase, span)


# What each row's matches must contain, as (needles, in the lowercased text?). A `str in str`
# search runs at C speed; a row's regex then runs only on text that has one of its needles.
# The stems of secret-sounding names (the named row's needles, and the gate that lets a short text
# through to it): every name that row accepts holds one of them.
NAME_HINTS = ("key", "token", "secret", "pass", "pwd", "cred", "auth")
NEEDLES: dict[str, tuple[tuple[str, ...], bool]] = {
    "private-key": (("PRIVATE KEY",), False),
    "aws-access-key": (("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"), False),
    "aws-secret-key": (("aws",), True),
    "anthropic-api-key": (("sk-ant-",), False),
    "openai-api-key": (("sk-",), False),
    "github-token": (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), False),
    "gitlab-token": (
        ("glpat-", "glptt-", "gldt-", "glrt-", "glcbt-", "gloas-", "glsoat-", "glft-", "glimt-", "glagent-"),
        False,
    ),
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
    "cut-token": (("…", "u2026", "more characters cut]"), False),
    "url-password": (("://",), False),
    "bearer-token": (("bearer", "basic", "token"), True),
    "high-entropy-near-keyword": (("key", "token", "secret"), True),
}


# Fields that hold the tree's structure, an identity or a figure, never free text: never redacted
# (changing them would break parentId links or tool-call pairing), and passed over by the
# pre-filter that decides whether an entry's line is walked at all.
STRUCTURAL_KEYS = frozenset(
    {
        "type",
        "id",
        "parentId",
        "timestamp",
        "targetId",
        "firstKeptEntryId",
        "fromId",
        "toolCallId",
        "role",
        "api",
        "provider",
        "model",
        "modelId",
        "stopReason",
        "mimeType",
        "customType",
        "thinkingSignature",
        "usage",
    }
)

# The gates (see ``Redactor.text``). Every row but the named row needs a run of 12 or more
# non-space characters (its shortest secret is 12 characters, or is joined to its name or URL
# by no space); the named row needs one of its name stems (NAME_HINTS).
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


def has_name_hint(lower: str) -> bool:
    """The named row's gate, on the text lowercased: one of the stems of a secret-sounding name."""
    return any(hint in lower for hint in NAME_HINTS)


# The same gates on a session file's line as written (JSON), run before an entry is walked at all.
# The structural fields of a line as pi writes it are passed over: the envelope first (type, id,
# parentId, timestamp), and a message's tail after its content (api, provider, model, usage,
# stopReason, timestamp, in any order, up to the closing braces). The tail is passed over only when
# nothing else follows it: pi writes an assistant's errorMessage after its last timestamp, and that
# is free text. Found by anchored matches and a reverse search, not a scan of the line; a line
# written any other way is read whole.
_ENVELOPE = re.compile(rb'\{"type":"[^"\\]*","id":"[^"\\]*","parentId":(?:null|"[^"\\]*"),"timestamp":"[^"\\]*"')
_NUMBER = rb"(?:-?[0-9][0-9.eE+-]{0,30}|null)"
_FIGURES = rb'\{(?:"[A-Za-z]{1,40}":' + _NUMBER + rb",?)*\}"  # {"input":0,"total":0.1}
_USAGE = rb'\{(?:"[A-Za-z]{1,40}":(?:' + _NUMBER + rb"|" + _FIGURES + rb"),?)*\}"  # figures, and one level of them
_TAIL = re.compile(
    rb'(?:,"(?:api|provider|model|stopReason)":"[^"\\]{0,200}"|,"usage":'
    + _USAGE
    + rb'|,"timestamp":[0-9]{1,20})+\}\}\n?\Z'
)


def _free_bounds(raw: bytes) -> tuple[int, int]:
    """Where the free text of ``raw`` begins and ends (its envelope and its message's tail left out)."""
    envelope = _ENVELOPE.match(raw)
    start = envelope.end() if envelope else 0
    end = len(raw)
    # The tail is short: looked for near the end only (a longer one is read as free text).
    near_end = max(start, end - 1024)
    for field in (b',"api":"', b',"timestamp":'):
        at = raw.rfind(field, near_end)
        if at > start and _TAIL.match(raw, at):
            # From the tail's first structural field on (a field before the one found may be one too).
            return start, at
    return start, end


# Every row but the named row matches inside one run of the line (no space, no quote, no colon or "="
# but where a row's match holds one), and that run holds the row's needle or is 20 characters or
# more (the rows whose secret is a bare run: bearer, near a keyword, the AWS, GCP, Azure and Telegram
# secrets after their "=" or ":"). The rows that reach across a run's end are looked for by what they
# always hold, in the whole free text: a key block's "PRIVATE KEY" (its BEGIN line alone is no run of
# 12), a URL's "user:password@" (its colons split it into short runs), a cut token's "…" or cut
# marker (its rest may hold an "="). A line that escapes ASCII (\u003d for "=", \/ for "/": a writer
# other than pi's) hides separators and runs from these counts, and is walked.
_RUNS_AND_SEPARATORS = bytes(
    0x20 if i < 128 and (chr(i).isspace() or chr(i) == '"') else 0x3A if i in (0x3A, 0x3D) else 0x78 for i in range(256)
)
_RUN_OF_TWELVE = b"x" * 12
_RUN_NEEDLE_LIST = tuple(
    needle.encode()
    for needle in sorted(
        {
            needle
            for needles, lowercase in NEEDLES.values()
            if not lowercase
            for needle in needles
            if not any(char in needle for char in ' "') and needle.isascii()
        },
        key=len,
        reverse=True,
    )
)
_RUN_NEEDLES = re.compile(b"|".join(map(re.escape, _RUN_NEEDLE_LIST)))
_URL_USERINFO = re.compile(rb"://[^\s:/@'\"<>]{0,64}:[^\s@/'\"<>]{1,128}@")
# Escapes that hide what the counts below read: ASCII written as \u00XX (\u003d for "=", by a writer
# other than pi's), "\/", the cut marker's "…" as \u2026, and the cut_text marker after its newline.
_TELLING_ESCAPE = re.compile(rb"\\(?:/|u00[2-7]|u2026|n\[\.\.\. )")
_ELLIPSIS = "…".encode()
# Keys met that name no secret (bounded: most sessions hold the same few dozen keys).
_PLAIN_KEYS: set[bytes] = {key.encode() for key in STRUCTURAL_KEYS}
_NAME_HINTS_BYTES = tuple(hint.encode() for hint in NAME_HINTS)
_QUOTE, _BACKSLASH = 0x22, 0x5C
_KEY_OPENERS = frozenset(b"{,")


def _runs_may_match(raw: bytes, runs: bytes, start: int, end: int) -> bool:
    """A run of ``raw`` (``runs``: its bytes as "x", a space or a separator) that a row other than the
    named one can match."""
    at = runs.find(_RUN_OF_TWELVE, start, end)
    while at >= 0:
        stop = min((x for x in (runs.find(b" ", at + 12, end), runs.find(b":", at + 12, end)) if x >= 0), default=end)
        if stop - at >= 20 or _RUN_NEEDLES.search(raw, at, stop) is not None:
            return True
        at = runs.find(_RUN_OF_TWELVE, stop, end)
    return False


def _across_runs(raw: bytes, start: int, end: int) -> bool:
    """Whether the free text holds what a row reaching across runs always holds (see above). Each
    test that is no single byte's search (memchr) waits for a byte its needle holds."""
    if raw.find(b"PRIVATE KEY", start, end) >= 0:
        return True
    if raw.find(b"\\", start, end) >= 0 and _TELLING_ESCAPE.search(raw, start, end) is not None:
        return True
    if raw.find(b"@", start, end) >= 0 and _URL_USERINFO.search(raw, start, end) is not None:
        return True
    # (cut_text's marker follows a newline, which a line holds as \n: the escape above finds it)
    return raw.find(b"\xe2", start, end) >= 0 and raw.find(_ELLIPSIS, start, end) >= 0


_NO_SEPARATOR, _SEPARATOR, _NAMED_KEY = 0, 1, 2


def _separators_or_named_key(raw: bytes, start: int, end: int) -> int:
    """_NAMED_KEY when a key of the free text has a secret-sounding name (or one this reading cannot
    tell); else _SEPARATOR when it holds a separator inside a string's text (a ":" or "=" that ends
    no key); else _NO_SEPARATOR. Outside a string JSON has no "=" and no ":" but after
    a key, whose closing quote (pi's and msgspec's writers put no space before the colon) has no
    backslash before it: a string's own quote is escaped. Each separator is found by a single
    byte's search; a line holds about as many as it has keys."""
    plain = _PLAIN_KEYS
    found = _SEPARATOR if raw.find(b"=", start, end) >= 0 else _NO_SEPARATOR
    at = raw.find(b":", start, end)
    while at >= 0:
        if raw[at - 1] != _QUOTE or raw[at - 2] == _BACKSLASH:
            found = _SEPARATOR  # a colon in a string's text, or an escaped quote's (\\": read as one)
        else:
            opening = raw.rfind(b'"', start, at - 1)
            key = raw[opening + 1 : at - 1]
            if key not in plain:
                # A key opens after "{" or ","; a quote after anything else is a string's own (a key
                # holding an escaped quote): a key this reading cannot tell.
                if opening < 1 or raw[opening - 1] not in _KEY_OPENERS or b"\\" in key or len(key) > 80:
                    return _NAMED_KEY
                if name_kind(key.decode("utf-8", "replace")):
                    return _NAMED_KEY
                if len(plain) < 8192:
                    plain.add(key)
        at = raw.find(b":", at + 1, end)
    return found


def _free_text_may_hold_secret(raw: bytes, start: int, end: int) -> bool:
    if _runs_may_match(raw, raw.translate(_RUNS_AND_SEPARATORS), start, end) or _across_runs(raw, start, end):
        return True
    # A flag (--api-key v) needs no separator but its dash and a space.
    flags = raw.find(b"-", start, end) >= 0 and (raw.find(b"->", start, end) >= 0 or raw.find(b" -", start, end) >= 0)
    separators = _separators_or_named_key(raw, start, end)
    if separators == _NAMED_KEY:
        return True
    if not flags and separators == _NO_SEPARATOR:
        return False
    lower = raw[start:end].lower()
    if not any(hint in lower for hint in _NAME_HINTS_BYTES):
        # No stem: no name in a string's text names a secret (the keys' names were read above).
        return False
    return bool(_stems_before_separators(lower)) or (b"-" in lower and _FLAG_WITH_STEM_BYTES.search(lower) is not None)


def line_may_hold_secret(raw: bytes) -> bool:
    """False only when no row can match any string of this JSON line (its structural fields aside):
    no run a row can match, nothing a row reaching across runs holds, no key with a secret-sounding
    name, and no name with a stem followed by a separator (or a flag holding one) in a string's text.
    Each test is a pass or two over the line in C; the name stems are looked for only where a string
    holds a separator.

    The compiled core reads the same tests (core/src/gate.rs, chosen by ``line_gate``): a change to
    them here is a change there too, and tests/export/test_gate_differential.py holds the two to the
    same verdicts."""
    start, end = _free_bounds(raw)
    return _free_text_may_hold_secret(raw, start, end)


def _key_names_secret(key: bytes) -> bool:
    """Whether a key of a line, as written, has a secret-sounding name (the compiled gate asks this of a key
    it has not met)."""
    return name_kind(key.decode("utf-8", "replace")) is not None


_GATE_RULES = GateRules(
    run_needles=_RUN_NEEDLE_LIST,
    stems=_NAME_HINTS_BYTES,
    plain_keys=tuple(sorted(key.encode() for key in STRUCTURAL_KEYS)),
)
_LINE_GATES: dict[str, LineGate] = {}


def line_gate() -> LineGate:
    """``line_may_hold_secret`` on the chosen core (sidecar/corepath): the compiled gate when the compiled core
    runs (the same tests, read in one pass each), this module's otherwise. Made once per core."""
    core = corepath.chosen()
    gate = _LINE_GATES.get(core)
    if gate is None:
        gate = _LINE_GATES[core] = corepath.gate_of(core, _GATE_RULES, line_may_hold_secret, _key_names_secret)
    return gate


# --- Names decide -------------------------------------------------------------------------------
# A name is split into words (snake_case, kebab-case, dotted, camelCase, ACRONYMCase); it is
# secret-sounding when a word is one of these, or one of them glued to a known prefix (apikey,
# accesstoken, clientsecret, dbpassword), and no word says the value is something else (an id,
# a path, a count, a public key).
_PASSWORD_WORDS = frozenset({"password", "passwd", "pwd", "passphrase", "pass", "passcode", "passwords"})
_SECRET_WORDS = frozenset(
    {
        "key",
        "token",
        "secret",
        "secrets",
        "credential",
        "credentials",
        "creds",
        "auth",
        "authorization",
        "oauth",
        "apikey",
        "xsrf",
        "csrf",
    }
)
_GLUED_SUFFIXES = ("key", "token", "secret", "password", "passwd", "creds")
_GLUED_PREFIXES = frozenset(
    {
        "api",
        "app",
        "application",
        "access",
        "secret",
        "private",
        "client",
        "auth",
        "session",
        "refresh",
        "bearer",
        "master",
        "signing",
        "encryption",
        "service",
        "account",
        "license",
        "webhook",
        "deploy",
        "consumer",
        "oauth",
        "db",
        "admin",
        "root",
        "user",
        "id",
        "github",
        "gh",
        "npm",
        "pypi",
        "slack",
        "stripe",
        "aws",
        "openai",
        "anthropic",
        "secure",
        "shared",
    }
)
_NOT_SECRET_WORDS = frozenset(
    {
        "public",
        "pub",
        "publishable",
        "id",
        "ids",
        "name",
        "names",
        "type",
        "types",
        "path",
        "paths",
        "file",
        "files",
        "dir",
        "url",
        "uri",
        "urls",
        "endpoint",
        "host",
        "user",
        "username",
        "email",
        "login",
        "count",
        "counts",
        "max",
        "min",
        "limit",
        "limits",
        "size",
        "length",
        "len",
        "index",
        "idx",
        "prefix",
        "suffix",
        "field",
        "fields",
        "kind",
        "usage",
        "budget",
        "estimate",
        "ttl",
        "expiry",
        "expires",
        "expiration",
        "expire",
        "env",
        "var",
        "mode",
        "method",
        "algorithm",
        "alg",
        "format",
        "version",
        "fingerprint",
        "bits",
        "policy",
        "scope",
        "scopes",
        "required",
        "enabled",
        "status",
        "label",
        "description",
        "hint",
        "placeholder",
        "example",
        "location",
        "region",
        "provider",
        "source",
        "tokens",
        "keys",
        "number",
        "char",
        "chars",
        "tokenizer",
        "encoding",
        "column",
        "table",
    }
)
_NAME_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def name_kind(name: str) -> str | None:
    """ "password" or "secret-assignment" for a secret-sounding name, else None."""
    words = [word.lower() for word in _NAME_WORD.findall(name)]
    if not words or any(word in _NOT_SECRET_WORDS for word in words):
        return None
    kind = None
    for word in words:
        if word in _PASSWORD_WORDS:
            return "password"
        if word in _SECRET_WORDS:
            kind = "secret-assignment"
            continue
        for suffix in _GLUED_SUFFIXES:
            if word.endswith(suffix) and word[: -len(suffix)] in _GLUED_PREFIXES:
                if suffix.startswith("passw"):
                    return "password"
                kind = "secret-assignment"
    return kind


# Values that sit after "password =" or "token:" in ordinary code and are no secret.
_CODE_VALUE = re.compile(
    r"""^(?:
        (?:self|this|cls|os|env|process|config|settings|args|opts|options|params|ctx|req|request|secrets?|vars|inputs)[.\[]
      | \$\{ | \$[A-Za-z_(] | %\( | %[sdr]$ | [{<(\[]   # ${VAR}, $VAR, %(name)s, %s, {{ template }}, <placeholder>, (expr), [list]
      | (?:none|null|nil|true|false|undefined|str|string|int|bool|bytes|any|optional|required|redacted|changeme|password|passwd|pass|pwd|pw|secret|xxx+|\*+)$
      | .*\[REDACTED          # already a placeholder
    )""",
    re.IGNORECASE | re.VERBOSE,
)
_HEX_WITH_DIGITS = re.compile(r"(?=[^0-9]*[0-9])(?=[^a-fA-F]*[a-fA-F])[0-9a-fA-F]+")
_WORDY = re.compile(r"[A-Za-z0-9_.\-:/ @]+")
# A word part: an acronym, two capitals before lower case as one word (OAuth, ETag, IPhone), a
# capitalised or lower-case word, a letter, a number.
_WORD_PART = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z]{2}[a-z]{2,}|[A-Z]?[a-z]+|[A-Z]|[0-9]+")
_CONSONANT_RUN = re.compile(r"[bcdfghjklmnpqrstvwxz]{5,}")
# Two-letter words of prose and code (NumberOrString, ls.service, os.environ).
_SHORT_WORDS = frozenset(
    "or of to in on is at by up my no as if it an be do go we me so id db io ui js ts rs py "
    "ok ls os fs re tx rx cb fn vm pg gh sk".split()
)
# Words of code without a vowel (or with too few for the test below): names, commands, file types.
_CODE_WORDS = frozenset(
    "fmt str strcpy strncpy strcmp strncmp strlen strdup strtok strchr strrchr strstr cmd cmds ctx pkg pkgs "
    "src dst tmp msg msgs ptr std cfg rpc grpc http https tcp udp dns ssh ssl tls xml html css sql npm pnpm nvm "
    "png jpg svg pdf csv pwd cwd nth len lst dbg crc rnd vcs ctl cnt txt dll".split()
)
_FOUR_CONSONANTS = re.compile(r"[bcdfghjklmnpqrstvwxz]{4}")
_HARD_PAIR = re.compile(r"q[^u]|[jvz][bcdfghjkmnpqstvwxz]|x[bdfghjkmnqrsvwxz]|([a-z])\1\1")
_REPEAT = re.compile(r"(.)\1{5,}")


def _is_word(part: str, acronyms: bool = True) -> bool:
    """A word of a language or of code (``Token``, ``HTTP``, ``sonnet``, ``Script``), not a random run
    of letters: enough vowels, no long consonant run, no pair of letters words do not hold (q
    without u, j/v/x/z before most consonants)."""
    if acronyms and part.isupper() and 2 <= len(part) <= 5:
        return True  # an acronym (in a value all in capitals, a part is read as a word)
    if part.lower() in _SHORT_WORDS or part.lower() in _CODE_WORDS:
        return True
    if not 3 <= len(part) <= 14:
        return False  # a letter or two (random text is full of them), or a run longer than words are
    lower = part.lower()
    vowels = sum(lower.count(v) for v in "aeiou") or lower.count("y")
    if not vowels or _CONSONANT_RUN.search(lower) or _HARD_PAIR.search(lower):
        return False
    if len(part) <= 6 and _FOUR_CONSONANTS.search(lower):
        return False
    return vowels / len(part) >= (0.15 if len(part) <= 6 else 0.25)


def word_like(value: str) -> bool:
    """Words and numbers joined as code and prose join them: ``CancellationToken``,
    ``settings.secret``, ``claude-3-5-sonnet-20241022``, ``src/export/redact``: not a secret's value."""
    if not _WORDY.fullmatch(value) or _HEX_WITH_DIGITS.fullmatch(value):
        return False
    letters = [part for part in _WORD_PART.findall(value) if not part.isdigit()]
    if not letters:
        return False
    if not value.islower() and not value.isupper() and len(letters) * 4 > sum(map(len, letters)):
        return False  # mixed case cut into parts shorter than words are: random letters, not camelCase
    capitals = value.isupper()
    words = [part for part in letters if _is_word(part, acronyms=not capitals)]
    acronyms = sum(1 for part in words if part.isupper())
    # Mostly words, and not mostly capital runs (random mixed-case letters split into many of those).
    return len(words) >= 0.8 * len(letters) and (capitals or acronyms <= 1 or acronyms * 2 <= len(words))


def named_value(value: str, kind: str) -> bool:
    """A value assigned to a secret-sounding name is a secret unless it is code, a path, a URL,
    words or a placeholder. Its alphabet does not matter: hex, digits, base64, letters."""
    if len(value) < (6 if kind == "password" else 10) or _CODE_VALUE.match(value) or "://" in value:
        return False
    if value.isdigit():
        return len(value) >= (8 if kind == "password" else 16)
    if len(set(value)) < 4 or _REPEAT.search(value) or "EXAMPLE" in value:
        return False  # xxxxxxxx, ********, 00000000, a documentation key's ...EXAMPLEKEY: a placeholder
    return not word_like(value)


# NAME [quote] SEP [quote] [scheme] VALUE, the quotes escaped to any depth (\" \\\" ...); a flag
# (--api-key v) may be joined to its value by a space alone. The scan starts from each stem of a
# name found by a plain substring search in the lowercased text (at C speed: a regex for whole
# names, or even for the stems in any case, tries every character of every text).
_VALUE = (
    r"(?:\\*[\"'`])?"
    r"(?:(?i:bearer|basic|token|bot|digest|apikey)[ \t]+)?"
    r"(?P<value>[^\s\"'`,;&\\<>(){}\[\]|]{1,400})"
)
_AFTER_NAME = re.compile(r"(?:\\*[\"'])?[ \t]{0,4}(?::=|=>|=|:|->)[ \t]{0,4}" + _VALUE)
_AFTER_FLAG = re.compile(r"(?:=|[ \t]+)" + _VALUE)
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.$@-")
_VALUE_TAIL = ".:"


# Where a name with a stem is followed by a separator (or a flag by = or a space), in the text
# lowercased: a search with a literal or a set of first letters, run in C; a hit is read in full below.
_STEMS = "key|token|secret|pass|pwd|cred|auth"
_AFTER_STEM = r"[a-z0-9_.$@-]{0,64}(?:\\*[\"'])?[ \t]{0,4}(?:[=:]|->)"
_AFTER_STEM_STR = re.compile(_AFTER_STEM)
_AFTER_STEM_BYTES = re.compile(_AFTER_STEM.encode())
_FLAG_WITH_STEM = re.compile(r"-[a-z0-9_.-]{0,64}?(?:" + _STEMS + r")[a-z0-9_.-]{0,64}[ \t=]")
_FLAG_WITH_STEM_BYTES = re.compile(_FLAG_WITH_STEM.pattern.encode())
_ASCII_LOWER = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}


def _stems_before_separators(lower: str | bytes) -> list[int]:
    """Where a stem begins a name's tail that a separator follows (``token:``, ``key":``), in a str
    or bytes lowercased: each stem found by a plain search, the rest matched where it stands (a
    regex searching for the stems themselves tried every character)."""
    if isinstance(lower, str):
        return _stems_followed(lower, NAME_HINTS, _AFTER_STEM_STR)
    return _stems_followed(lower, _NAME_HINTS_BYTES, _AFTER_STEM_BYTES)


def _stems_followed(lower: AnyStr, hints: tuple[AnyStr, ...], after: re.Pattern[AnyStr]) -> list[int]:
    found = []
    for hint in hints:
        at = lower.find(hint)
        while at >= 0:
            if after.match(lower, at + len(hint)) is not None:
                found.append(at)
            at = lower.find(hint, at + 1)
    return found


def _named_spans(text: str, lower: str) -> list[tuple[int, int, str]]:
    if len(lower) != len(text):  # a character whose lowercase is longer (İ): positions must agree
        lower = text.translate(_ASCII_LOWER)
    spans: list[tuple[int, int, str]] = []
    size = len(text)
    # No separator, no assignment (most prose): the search for stems is skipped.
    assignments = _stems_before_separators(lower) if ("=" in text or ":" in text or "->" in text) else ()
    for at in assignments:
        start = at
        while start > 0 and text[start - 1] in _NAME_CHARS and at - start < 64:
            start -= 1  # back to the name's first character
        end = at
        while end < size and text[end] in _NAME_CHARS:
            end += 1
        name = text[start:end].rstrip("-.")
        match = _AFTER_NAME.match(text, start + len(name))
        if match is not None:
            found = _named_value_span(text, match, name)
            if found is not None:
                spans.append(found)
    if "-" in text:
        for hit in _FLAG_WITH_STEM.finditer(lower):
            start = hit.start()
            if start and (text[start - 1].isalnum() or text[start - 1] in "_-"):
                continue  # inside a word (well-known) or a longer flag
            end = start
            while end < size and text[end] in _NAME_CHARS:
                end += 1
            match = _AFTER_FLAG.match(text, end)
            if match is not None:
                found = _named_value_span(text, match, text[start:end])
                if found is not None:
                    spans.append(found)
    return spans


def _named_value_span(text: str, match: re.Match[str], name: str) -> tuple[int, int, str] | None:
    kind = name_kind(name)
    if kind is None:
        return None
    start, end = match.span("value")
    while end > start and text[end - 1] in _VALUE_TAIL:
        end -= 1  # the sentence's full stop, a YAML key's colon
    if match.end("value") < len(text) and text[match.end("value")] in "([{<":
        return None  # a call, an index, a generic: code
    if not named_value(text[start:end], kind):
        return None
    return start, end, kind


# --- Blocks --------------------------------------------------------------------------------------
# A block's body: base64 lines of one width, the last one shorter, with an encrypted PEM's header
# lines first. Lines are separated by newlines, escaped newlines (\n, \\n ... in JSON text) or, in
# text flattened onto one line, spaces. The body ends at its END line, or at the first thing that
# cannot be part of it: a chunk wider than the lines, a short chunk that reads as a word, text
# that is not base64. A block cut short keeps what follows it.
_BLOCK_SEPARATOR = re.compile(r"(?:[ \t]*(?:\r?\n|\\+r|\\+n)[ \t]*)+|[ \t]+")
_BLOCK_CHUNK = re.compile(r"[A-Za-z0-9+/=]+")
_BLOCK_HEADER_LINE = re.compile(r"(?:Proc-Type|DEK-Info|Comment|Version|Hash|Charset): ?[^\n\\]{0,200}")
_BLOCK_END = re.compile(r"-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----")


def _block_span(text: str, match: re.Match[str]) -> tuple[int, int, str]:
    begin, end = match.start(), match.end()
    width = 0
    pos = end
    while True:
        separator = _BLOCK_SEPARATOR.match(text, pos)
        at = separator.end() if separator else pos
        if text.startswith("-----END", at):
            closing = _BLOCK_END.match(text, at)
            return begin, (closing.end() if closing else end), "private-key"
        if separator is None:
            return begin, end, "private-key"
        if not width:
            header = _BLOCK_HEADER_LINE.match(text, at)
            if header:
                pos = end = header.end()
                continue
        chunk = _BLOCK_CHUNK.match(text, at)
        if chunk is None:
            return begin, end, "private-key"
        size = chunk.end() - at
        if not width and size >= 40:
            width = size  # the first full line sets the width
            pos = end = chunk.end()
            continue
        if width and size == width:
            pos = end = chunk.end()
            continue
        if width and size > width:
            return begin, end, "private-key"
        # A short chunk: the last line, or the cut end of one, or a word of the text that follows.
        after = chunk.end()
        closing = _BLOCK_SEPARATOR.match(text, after)
        if text.startswith("-----END", closing.end() if closing else after):
            pos = end = after
            continue
        if not word_like(chunk.group()):  # the last line, or the cut end of one; a word is the text that follows
            end = after
        return begin, end, "private-key"


# A password written as a placeholder is: words that stand for one (your_password, <password>,
# example-secret, changeme), glued or joined by - _ . and held in <>.
_PLACEHOLDER_PASSWORD = re.compile(
    r"<?(?:(?:your|my|the|some|an?|example|sample|dummy|fake|test|secret|password|passwd|pass|pwd|pw|changeme|change"
    r"|me|here|placeholder|redacted|x{3,}|\*{3,})[-_.]?)+>?",
    re.IGNORECASE,
)
# Hosts that are no one's server: loopback, and the names RFC 2606 and RFC 6761 keep for examples
# and tests (example.com, *.example, *.test, *.invalid, *.localhost).
_RESERVED_HOST = re.compile(
    r"(?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[::1\]|(?:[a-z0-9-]+\.)*(?:example(?:\.com|\.net|\.org)?|test|invalid|localhost))"
    r"(?![a-z0-9.-])",
    re.IGNORECASE,
)
_LOWER_WORD = re.compile(r"[a-z]{3,12}")


def _url_password_span(text: str, match: re.Match[str]) -> tuple[int, int, str] | None:
    """user:password@ in a URL, unless the password is code, a placeholder or the user's name again
    (postgres://postgres:postgres@localhost, a local default), or a plain word to a host that is no
    one's server (a test's postgres://app:wrong@127.0.0.1)."""
    value = match.group("value")
    if _CODE_VALUE.match(value) or value == match.group("user") or _PLACEHOLDER_PASSWORD.fullmatch(value):
        return None
    if _LOWER_WORD.fullmatch(value) and _is_word(value) and _RESERVED_HOST.match(text, match.end()):
        return None
    return match.start("value"), match.end("value"), "url-password"


def _not_documentation(value: str) -> bool:
    """AWS's documentation keys say so (AKIAIOSFODNN7EXAMPLE, wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY)."""
    return "EXAMPLE" not in value


# Order matters where shapes overlap: the more specific row first (an overlap keeps the earlier row).
RULES: tuple[Rule, ...] = (
    _rule("private-key", r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----", span=_block_span, needle_gated=True),
    _rule(
        "aws-access-key",
        r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b",
        accept=_not_documentation,
    ),
    _rule(
        "aws-secret-key",
        r"(?i:aws)[A-Za-z0-9_ .-]{0,30}(?i:secret)[A-Za-z0-9_ .-]{0,30}(?:\\*[\"'])?\s{0,3}(?::=|=>|=|:)\s{0,3}(?:\\*[\"'])?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        1,
        _not_documentation,
    ),
    _rule("anthropic-api-key", r"\bsk-ant-(?:api|admin|oat|ort)\d{2}-[A-Za-z0-9_-]{20,}"),
    _rule(
        "openai-api-key",
        r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}|\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|\bsk-[A-Za-z0-9]{48}\b",
    ),
    _rule("github-token", r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b|\bgithub_pat_[A-Za-z0-9_]{40,255}"),
    _rule("gitlab-token", r"\bgl(?:pat|ptt|dt|rt|cbt|oas|soat|ft|imt|agent)-[A-Za-z0-9_-]{20,}"),
    _rule("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}"),
    _rule("slack-token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{20,}"),
    _rule("stripe-key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}|\bwhsec_[A-Za-z0-9]{24,}"),
    _rule("twilio-key", r"\b(?:SK|AC)[0-9a-f]{32}\b"),
    _rule("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}"),
    _rule("google-oauth", r"\bya29\.[0-9A-Za-z_-]{20,}|\bGOCSPX-[A-Za-z0-9_-]{20,}|\b1//0[A-Za-z0-9_-]{30,}"),
    _rule("gcp-service-account", r"(?:\\*\")private_key_id(?:\\*\")\s*:\s*(?:\\*\")([0-9a-f]{40})", 1),
    _rule(
        "azure-key",
        r"(?:AccountKey|SharedAccessKey|AccessKey)=([A-Za-z0-9+/]{30,}={0,2})|[?&]sig=([A-Za-z0-9%+/]{30,}={0,2}(?:%3D){0,2})",
    ),
    _rule("azure-client-secret", r"\b[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}"),
    _rule("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    _rule("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    _rule("pypi-token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}"),
    _rule("huggingface-token", r"\bhf_[A-Za-z0-9]{34,}\b"),
    # Their values may end in "-": the end is "no more of the alphabet", not a word boundary (which a
    # "-" at the end has only before a word character).
    _rule("sendgrid-key", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])"),
    _rule("mailgun-key", r"\bkey-[0-9a-f]{32}\b"),
    _rule("digitalocean-token", r"\bdo[opr]_v1_[a-f0-9]{64}\b"),
    _rule("shopify-token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    _rule("telegram-bot-token", r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])"),
    _rule("databricks-token", r"\bdapi[a-f0-9]{32}\b"),
    _rule("age-secret-key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b"),
    # A token of a known shape cut short where a summary or an output was cut ("…", cut_text's marker,
    # either as JSON text quoted in a string writes it: \u2026, \\n): too short for its own row, still
    # the start of a secret.
    _rule(
        "cut-token",
        r"(?:\b(?:AKIA|ASIA|sk-ant-|sk-proj-|sk-|gh[pousr]_|github_pat_|glpat-|xox[abposre]-|xapp-|[sr]k_live_|"
        r"sk_test_|whsec_|AIza|ya29\.|GOCSPX-|npm_|pypi-AgE|hf_|SG\.|do[opr]_v1_|shp(?:at|ca|pa|ss)_|dapi|"
        r"AGE-SECRET-KEY-1|eyJ))[A-Za-z0-9_.+/=~-]{6,}(?=…|\\+u2026|(?:\n|\\+n)\[\.\.\. \d+ more characters cut\])",
    ),
    _rule(
        "url-password",
        r"\b[a-z][a-z0-9+.-]{1,20}://(?P<user>[^\s:/@'\"<>]{0,64}):(?P<value>[^\s@/'\"<>]{3,128})@",
        span=_url_password_span,
        needle_gated=True,
    ),
    _rule("bearer-token", r"\b(?:Bearer|Basic|Token)\s+([A-Za-z0-9._~+/-]{20,}={0,2})", 1, _high_entropy),
    Rule(
        "secret-assignment",
        re.compile(""),
        long_run=False,
        needles=NAME_HINTS,
        lowercase_needles=True,
        scan=_named_spans,
    ),
    _rule(
        "high-entropy-near-keyword",
        r"(?i:\b(?:key|token|secret))\b[^\n]{0,24}?(?<![A-Za-z0-9+/_-])([A-Za-z0-9+/_-]{24,200})(?![A-Za-z0-9+/_-])",
        1,
        _high_entropy,
    ),
)
