"""Our rule table against detect-secrets and gitleaks' published rule set, on the same two corpora.

    python bench/redact_eval.py                                  # ours only
    python bench/redact_eval.py --detect-secrets-python PY       # also detect-secrets, installed in PY's environment
    python bench/redact_eval.py --gitleaks-config PATH           # also gitleaks' default rules (its config/gitleaks.toml)

gitleaks: its default config ships in the Go module github.com/zricethezav/gitleaks/v8; fetch it
once into a module cache (`GOMODCACHE=DIR go mod download -json github.com/zricethezav/gitleaks/v8@latest`)
and pass DIR/github.com/zricethezav/gitleaks/v8@VERSION/config/gitleaks.toml; nothing is fetched at
run time. A small harness applies it as gitleaks does: each rule's keywords (one must be in the
text), its regex (Go's RE2 syntax read by Python's re: rules Python cannot compile are skipped and
counted), its secret group (else the first non-empty group), its entropy floor, and its and the
global allowlists (regexes on the secret, the match or the line; stopwords).

Lines flagged: of the lines holding a planted secret, how many the detector names. Coverage:
of the planted secrets (tests/export/secrets_corpus.py, 190 of 38 kinds, each in a
sentence), how many leave no 12-character piece behind once what the detector found is
replaced. False positives: of the ordinary lines (this repository's code, docs and scripts,
and every string of pi's session fixtures), how many the detector changes. And the time.
detect-secrets runs in its own environment (it is not a dependency of ours): pass the
python of a venv where `pip install detect-secrets` was done.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


corpus = _load("secrets_corpus", ROOT / "tests" / "export" / "secrets_corpus.py")

_DETECT_SECRETS = r"""
import json, os, sys, tempfile
from detect_secrets import SecretsCollection
from detect_secrets.settings import default_settings
lines = json.load(sys.stdin)
folder = tempfile.mkdtemp()
path = os.path.join(folder, "corpus.txt")
owner = []  # physical line -> the corpus line it belongs to (a PEM block spans several)
with open(path, "w") as out:
    for index, line in enumerate(lines):
        for physical in line.replace("\r", " ").split("\n"):
            out.write(physical + "\n")
            owner.append(index)
collection = SecretsCollection()
with default_settings():  # every plugin and filter on, as `detect-secrets scan` has them
    collection.scan_file(path)
found = [[] for _ in lines]
for secrets in collection.data.values():
    for secret in secrets:
        if secret.secret_value:
            found[owner[secret.line_number - 1]].append((secret.type, secret.secret_value))
json.dump(found, sys.stdout)
"""


def ordinary_lines() -> list[str]:
    # The test's corpus (tests/export/secrets_corpus.py) without this file, which names secrets' shapes,
    # and the ordinary texts the export test sends through a session (diffs and log lines among them).
    lines = [line for line in corpus.ordinary_lines(ROOT, frozenset({"redact_eval.py"})) if line.strip()]
    return lines + [line for text in corpus.ordinary_texts(ROOT) for line in text.split("\n")]


def planted_lines() -> list[tuple[str, object]]:
    """The suite's generated corpus: every form (every_form: provider shapes, key blocks whole and cut,
    named values in every syntax and alphabet, headers) with three draws of values, each in a sentence."""
    forms = [form for seed in (1, 2, 3) for form in corpus.every_form(seed)]
    return [(f"While debugging I found this in the config: {s.text} (see above).", s) for s in forms]


def ours(lines: list[str]) -> list[list[tuple[str, str]]]:
    from sidecar.export.redact import Redactor

    found = []
    for line in lines:
        redactor = Redactor()
        redactor.text(line)
        found.append([(kind, secret) for secret, kind in redactor._placeholders.items()])  # noqa: SLF001
    return found


def detect_secrets(python: str, lines: list[str]) -> list[list[tuple[str, str]]]:
    done = subprocess.run(
        [python, "-c", _DETECT_SECRETS], input=json.dumps(lines), capture_output=True, text=True, check=True
    )
    return [[tuple(pair) for pair in found] for found in json.loads(done.stdout)]


def _go_regex(pattern: str) -> str:
    """RE2 syntax Python's re reads differently: \\z, POSIX classes, an inline flag group past the start."""
    pattern = pattern.replace("\\z", "\\Z")
    at = pattern.find("(?i)", 1)
    if at > 0:  # Go allows a flag group anywhere; from there on to the end is what it scopes (top level)
        pattern = pattern[:at] + "(?i:" + pattern[at + 4 :] + ")"
    for posix, chars in (
        ("[:alnum:]", "A-Za-z0-9"),
        ("[:alpha:]", "A-Za-z"),
        ("[:digit:]", "0-9"),
        ("[:space:]", "\\s"),
        ("[:upper:]", "A-Z"),
        ("[:lower:]", "a-z"),
        ("[:xdigit:]", "0-9A-Fa-f"),
        ("[:punct:]", "!-/:-@\\[-`{-~"),
    ):
        pattern = pattern.replace(posix, chars)
    return pattern


def gitleaks_rules(config_path: str) -> tuple[list[dict], list[str]]:
    """gitleaks' rules compiled for Python, and the ids of those Python's re cannot read."""
    import re
    import tomllib

    config = tomllib.loads(Path(config_path).read_text())
    skipped: list[str] = []

    def compile_all(patterns):
        out = []
        for pattern in patterns or ():
            try:
                out.append(re.compile(_go_regex(pattern)))
            except re.error:
                pass
        return out

    global_allow = config.get("allowlist", {})
    rules = []
    for rule in config["rules"]:
        if "regex" not in rule:
            skipped.append(rule["id"] + " (path only)")
            continue
        try:
            regex = re.compile(_go_regex(rule["regex"]))
        except re.error:
            skipped.append(rule["id"])
            continue
        allows = [
            {
                "target": allow.get("regexTarget", "secret"),
                "regexes": compile_all(allow.get("regexes")),
                "stopwords": [w.lower() for w in allow.get("stopwords", ())],
                "paths": allow.get("paths"),
            }
            for allow in rule.get("allowlists", ())
        ]
        rules.append(
            {
                "id": rule["id"],
                "regex": regex,
                "group": rule.get("secretGroup", 0),
                "entropy": rule.get("entropy", 0.0),
                "keywords": [k.lower() for k in rule.get("keywords", ())],
                "allows": allows,
            }
        )
    rules.append(
        {
            "global": True,
            "regexes": compile_all(global_allow.get("regexes")),
            "stopwords": [w.lower() for w in global_allow.get("stopwords", ())],
        }
    )
    return rules, skipped


def gitleaks(rules: list[dict], lines: list[str]) -> list[list[tuple[str, str]]]:
    import math

    def entropy(value: str) -> float:
        counts: dict[str, int] = {}
        for char in value:
            counts[char] = counts.get(char, 0) + 1
        return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values()) if value else 0.0

    glob = rules[-1]
    found_all = []
    for line in lines:
        lower = line.lower()
        found = []
        for rule in rules[:-1]:
            if rule["keywords"] and not any(k in lower for k in rule["keywords"]):
                continue
            for match in rule["regex"].finditer(line):
                if rule["group"]:
                    secret = match.group(rule["group"]) or ""
                else:
                    secret = next((g for g in match.groups() if g), match.group())
                if not secret or (rule["entropy"] and entropy(secret) <= rule["entropy"]):
                    continue
                allowed = False
                for allow in rule["allows"]:
                    if allow["paths"]:
                        continue  # path conditions: no path here
                    target = {"secret": secret, "match": match.group(), "line": line}[allow["target"]]
                    if any(r.search(target) for r in allow["regexes"]) or any(
                        w in secret.lower() for w in allow["stopwords"]
                    ):
                        allowed = True
                if (
                    allowed
                    or any(r.search(secret) for r in glob["regexes"])
                    or any(w in secret.lower() for w in glob["stopwords"])
                ):
                    continue
                found.append((rule["id"], secret))
        found_all.append(found)
    return found_all


def evaluate(name: str, scan) -> None:
    planted = planted_lines()
    started = time.perf_counter()
    found = scan([line for line, _ in planted])
    planted_time = time.perf_counter() - started
    covered, missed = 0, {}
    caught = set()
    for (line, secret), hits in zip(planted, found):
        cleaned = line
        for _, value in sorted(hits, key=lambda hit: -len(hit[1])):
            cleaned = cleaned.replace(value, "[X]")
        if corpus.leaks([("message", secret)], cleaned):
            family = secret.kind.split(":")[0] if ":" not in secret.kind else ":".join(secret.kind.split(":")[:2])
            missed[family] = missed.get(family, 0) + 1
        else:
            covered += 1
            caught.add(line)
    ordinary = ordinary_lines()
    started = time.perf_counter()
    hits = scan(ordinary)
    ordinary_time = time.perf_counter() - started
    flagged = [line for line, found_here in zip(ordinary, hits) if found_here]
    size = sum(len(line) + 1 for line in ordinary) / 1e6
    print(f"{name}:")
    print(
        f"  lines flagged   {sum(1 for hits in found if hits)}/{len(planted)} planted lines (where it says a secret is)"
    )
    print(
        f"  coverage        {covered}/{len(planted)} planted secrets ({covered / len(planted):.1%}); "
        f"kinds missed: {', '.join(f'{k} x{n}' for k, n in sorted(missed.items())) or 'none'}"
    )
    print(f"  false positives {len(flagged)}/{len(ordinary)} ordinary lines ({len(flagged) / len(ordinary):.2%})")
    print(
        f"  time            {planted_time:.2f} s on the planted lines, {ordinary_time:.2f} s on {size:.1f} MB of ordinary lines"
    )
    for line in flagged[:5]:
        print(f"    e.g. {line.strip()[:110]}")
    return caught, len(flagged)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--detect-secrets-python", help="python of an environment with detect-secrets installed")
    parser.add_argument(
        "--gitleaks-config", help="gitleaks' config/gitleaks.toml, from its Go module in a module cache"
    )
    args = parser.parse_args()
    our_caught, our_fp = evaluate("ours (sidecar/export/redact/rules.py)", ours)
    others = []
    if args.detect_secrets_python:
        version = subprocess.run(
            [
                args.detect_secrets_python,
                "-c",
                "from importlib.metadata import version; print(version('detect-secrets'))",
            ],
            capture_output=True,
            text=True,
        ).stdout.strip()
        others.append(
            (
                f"detect-secrets {version}",
                evaluate(f"detect-secrets {version}", lambda lines: detect_secrets(args.detect_secrets_python, lines)),
            )
        )
    if args.gitleaks_config:
        rules, skipped = gitleaks_rules(args.gitleaks_config)
        name = f"gitleaks rules ({Path(args.gitleaks_config).parents[1].name}, {len(rules) - 1} rules read, {len(skipped)} skipped)"
        others.append((name, evaluate(name, lambda lines: gitleaks(rules, lines))))
        if skipped:
            print(f"  skipped (Python's re cannot read the Go regex, or a path-only rule): {', '.join(skipped)}")
    for name, (caught, fp) in others:
        extra = caught - our_caught
        print(f"{name} vs ours: it covers {len(extra)} planted lines we leak; false positives {fp} vs ours {our_fp}")
        for line in sorted(extra)[:5]:
            print(f"    e.g. {line[:110]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
