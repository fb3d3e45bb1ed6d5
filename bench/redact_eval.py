"""Our rule table against a detector library (detect-secrets), on the same two corpora.

    python bench/redact_eval.py                                  # ours only
    python bench/redact_eval.py --detect-secrets-python PY       # also detect-secrets, installed in PY's environment

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
    # The test's corpus (tests/export/secrets_corpus.py) without this file, which names secrets' shapes.
    return [line for line in corpus.ordinary_lines(ROOT, frozenset({"redact_eval.py"})) if line.strip()]


def planted_lines() -> list[tuple[str, object]]:
    return [(f"While debugging I found this in the config: {s.text} (see above).", s) for _, s in corpus.plant()]


def ours(lines: list[str]) -> list[list[tuple[str, str]]]:
    from sidecar.export.redact import Redactor

    found = []
    for line in lines:
        redactor = Redactor()
        redactor.text(line)
        found.append([(kind, secret) for secret, kind in redactor._placeholders.items()])  # noqa: SLF001
    return found


def detect_secrets(python: str, lines: list[str]) -> list[list[tuple[str, str]]]:
    done = subprocess.run([python, "-c", _DETECT_SECRETS], input=json.dumps(lines), capture_output=True, text=True,
                          check=True)
    return [[tuple(pair) for pair in found] for found in json.loads(done.stdout)]


def evaluate(name: str, scan) -> None:
    planted = planted_lines()
    started = time.perf_counter()
    found = scan([line for line, _ in planted])
    planted_time = time.perf_counter() - started
    covered, missed = 0, {}
    for (line, secret), hits in zip(planted, found):
        cleaned = line
        for _, value in sorted(hits, key=lambda hit: -len(hit[1])):
            cleaned = cleaned.replace(value, "[X]")
        if corpus.leaks([("message", secret)], cleaned):
            missed[secret.kind] = missed.get(secret.kind, 0) + 1
        else:
            covered += 1
    ordinary = ordinary_lines()
    started = time.perf_counter()
    hits = scan(ordinary)
    ordinary_time = time.perf_counter() - started
    flagged = [line for line, found_here in zip(ordinary, hits) if found_here]
    size = sum(len(line) + 1 for line in ordinary) / 1e6
    print(f"{name}:")
    print(f"  lines flagged   {sum(1 for hits in found if hits)}/{len(planted)} planted lines (where it says a secret is)")
    print(f"  coverage        {covered}/{len(planted)} planted secrets ({covered / len(planted):.1%}); "
          f"kinds missed: {', '.join(f'{k} x{n}' for k, n in sorted(missed.items())) or 'none'}")
    print(f"  false positives {len(flagged)}/{len(ordinary)} ordinary lines ({len(flagged) / len(ordinary):.2%})")
    print(f"  time            {planted_time:.2f} s on the planted lines, {ordinary_time:.2f} s on {size:.1f} MB of ordinary lines")
    for line in flagged[:5]:
        print(f"    e.g. {line.strip()[:110]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--detect-secrets-python", help="python of an environment with detect-secrets installed")
    args = parser.parse_args()
    evaluate("ours (sidecar/export/redact/rules.py)", ours)
    if args.detect_secrets_python:
        version = subprocess.run([args.detect_secrets_python, "-c", "from importlib.metadata import version; print(version('detect-secrets'))"],
                                 capture_output=True, text=True).stdout.strip()
        evaluate(f"detect-secrets {version}", lambda lines: detect_secrets(args.detect_secrets_python, lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
