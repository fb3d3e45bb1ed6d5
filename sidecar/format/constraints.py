"""Is this sentence a constraint? Rules, preferences and prohibitions, however phrased.

A constraint limits how the work may be done from now on ("use pnpm, not
npm", "that signature has to stay as it is", "if a test fails, fix the code",
"Ne modifie jamais ce fichier"). A request for work ("fix the parser"), a
question, a report ("the test never finishes") or thanks is not one, even
when it uses the same words.

No model: a handful of cue families, each a regular expression, checked on
the whole sentence or at the start of each of its clauses (imperatives sit
there). The families are imperatives of constraint verbs, negated
imperatives, modal obligation, soft preference, invariants ("stays",
"as it is", "frozen"), conditionals whose main clause is an order, and the
same in French, German, Spanish, Italian, Portuguese, Dutch, Russian,
Chinese and Japanese. A sentence that is a report or chatter by its shape
("it doesn't work", "never mind", "must have been") is rejected first.
tests/compaction/test_constraints.py measures recall and false positives on
a corpus.
"""

from __future__ import annotations

import re

_FLAGS = re.IGNORECASE | re.UNICODE
# A "sentence" longer than this is pasted material (logs, code, data), not a rule someone wrote;
# reading it would cost time for nothing (the patterns are tried at every position).
MAX_SENTENCE_CHARS = 800

# Sentences end at . ! ? (and the CJK full stops) followed by space, or at a line break.
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
# Clause boundaries where an imperative can start: "fix it, but don't touch X".
_CLAUSE_SPLIT = re.compile(r"[,;:—–]\s*(?:(?:and|but|also|so|then|et|mais|und|aber|y|pero|e|ma|en|maar)\s+)?", _FLAGS)
_LEAD_IN = re.compile(
    r"^(?:(?:and|but|also|so|then|just|oh|ok|okay|alright|and also)\s*,?\s+)*(?:please\s*,?\s+)?", _FLAGS
)

# Verbs whose imperative lays down a rule rather than asking for a piece of work.
_RULE_VERBS = (
    r"use|keep|leave|stick|avoid|follow|respect|preserve|retain|maintain|limit|restrict|target|stay|remain|"
    r"prefer|refrain|stop|never|always|only|name|log|indent|format|reuse|default|favou?r"
)
_IMPERATIVE = re.compile(rf"^(?:{_RULE_VERBS})\b", _FLAGS)
_NEGATED_IMPERATIVE = re.compile(
    r"^(?:don'?t|do not|never|no|not a|not one|not any|nothing|none of|no more)\b(?!\s*,)(?!\s+(?:idea|problem|worries|luck|need)\b)",
    _FLAGS,
)
# An imperative with a universal quantifier is a standing rule: "format everything with black".
_IMPERATIVE_ALL = re.compile(r"^\w+\b[^,.]*\b(?:every|everything|all|each|always|any time|anytime)\b", _FLAGS)

_WHOLE = [
    # modal obligation and permission
    r"\b(?:must|mustn'?t|shall|shan'?t|has to|have to|had better|needs? to|is required|are required|required|mandatory)\b",
    r"\b(?:may not|may only|can only|cannot use|can'?t use|can'?t have|can'?t touch|not allowed|isn'?t allowed|aren'?t allowed|forbidden|prohibited|off[- ]limits|frozen|read[- ]only)\b",
    r"\b(?:should|shouldn'?t|ought to)\b",
    r"\b(?:make sure|ensure|be sure|remember to|don'?t forget|never forget)\b",
    # a rule over every member of a kind: "every public function needs a docstring"
    r"^(?:every|all|each|any)\b[^,]*\b(?:needs?|has|have|gets?|may|must|should)\b",
    # "you never / we always ..." addressed to the agent
    r"\b(?:you|we)\s+(?:\w+\s+)?(?:always|never)\b",
    # "X, not Y" / "X instead of Y" / "rather than"
    r",\s*(?:not|no)\s+\w",
    r"\b(?:instead of|rather than)\b",
    # soft preference
    r"\bi(?:'d| would)\s+(?:rather|prefer|like)\b",
    r"\bi\s+(?:prefer|don'?t want|do not want)\b",
    r"\bi want\b.*\b(?:to stay|to remain|to be|kept|unchanged|no)\b",
    r"\b(?:ideally|would be better|'d be better|would be nice|'d be nice|preferably)\b",
    r"\blet'?s\s+(?:not|stick|keep|stay|use|avoid|leave)\b",
    r"\btry (?:to|not to)\s+(?:keep|avoid|stay|not|limit|use)\b",
    r"\b(?:could|can|would) you\s+(?:please\s+)?(?:avoid|not|keep|stick|leave|stop|refrain|use)\b",
    # invariants
    r"\b(?:stays?|remains?)\b.*\b(?:as (?:it|they) (?:is|are)|unchanged|intact|the same|in sync|optional|compatible|pure|untouched)\b",
    r"\b(?:stays?|remains?|kept|left) (?:as (?:it|they) (?:is|are)|unchanged|intact|untouched|in sync|optional|pure)\b",
    r"\bbyte[- ](?:identical|for[- ]byte)\b|\bbackwards?[- ]compatib",
    r"\b(?:ask me|check with me) (?:first|before)\b|\bask (?:me )?before\b",
    # French
    r"\b(?:ne|n')\s*\w+\s+(?:jamais|pas|plus|rien)\b|\bjamais\b",
    r"\b(?:il faut|faut|doit|doivent|devez|dois|interdit|obligatoire|toujours|plutôt|telle? quelle?|tels? quels?)\b",
    r"\bet pas\b|\bs'il (?:te|vous) pla[iî]t\b",
    # German
    r"\b(?:nie|niemals|immer|muss|müssen|musst|darf|dürfen|soll|sollst|sollen|bitte|verboten|keine?n?)\b",
    # Spanish, Portuguese, Italian
    r"\b(?:nunca|siempre|debe|debes|deben|tiene que|tienes que|hay que|por favor|prefiero|prohibido)\b",
    r"\b(?:deve|deves|devem|sempre|mai|bisogna|per favore|vietato|obrigatório)\b",
    # Dutch
    r"\b(?:nooit|altijd|moet|moeten|geen|alsjeblieft|graag)\b",
    # Russian
    r"(?:^|\s)(?:не|никогда|всегда|нельзя|должен|должна|должны|пожалуйста|обязательно)(?:\s|$)",
    # Chinese and Japanese (no word boundaries)
    r"不要|不能|不得|别|必须|务必|总是|永远|禁止|保持|只能|请使用|请勿",
    r"必ず|常に|絶対|ないで|禁止|こと[。.]?$|べき",
]
# Matched against the lowercased sentence: case-insensitive matching of this many
# alternatives at every position is several times slower.
_WHOLE_RE = re.compile("|".join(f"(?:{p})" for p in _WHOLE), re.UNICODE)
# The words that can start a match of _WHOLE_RE: a sentence with none of them
# (and no CJK, no ", not", no elision) cannot match, and is not searched at all.
_TRIGGERS = frozenset(
    """must mustn't mustnt shall shan't shant has have had need needs is are required mandatory may can cannot can't
    cant isn't isnt aren't arent not forbidden prohibited off frozen read should shouldn't shouldnt ought make ensure be
    remember don't dont never you we instead rather i i'd ideally would preferably let's lets try could stay stays
    remain remains kept left byte backward backwards backwards-compatible ask check every all each any
    ne jamais il faut doit doivent devez dois interdit obligatoire toujours plutôt telle telles tel tels et s'il
    nie niemals immer muss müssen musst darf dürfen soll sollst sollen bitte verboten kein keine keinen
    nunca siempre debe debes deben tiene tienes hay por prefiero prohibido deve deves devem sempre mai bisogna per
    vietato obrigatório nooit altijd moet moeten geen alsjeblieft graag
    не никогда всегда нельзя должен должна должны пожалуйста обязательно""".split()
)
_TOKEN = re.compile(r"[\w']+", re.UNICODE)
_NEEDS_FULL_SEARCH = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]|,\s*(?:not|no)\b|\bn'|'d\b", re.UNICODE)


def _may_match_whole(lowered: str) -> bool:
    return bool(_NEEDS_FULL_SEARCH.search(lowered)) or not _TRIGGERS.isdisjoint(_TOKEN.findall(lowered))


# Imperatives of constraint verbs in other languages, at a clause's start.
_FOREIGN_IMPERATIVE = re.compile(
    r"^(?:utilise|utilisez|garde|gardez|conserve|conservez|évite|évitez|laisse|laissez|"
    r"benutze|benutzt|verwende|verwendet|nutze|behalte|lass|vermeide|"
    r"usa|utiliza|mantén|mantenga|evita|deja|no|"
    r"use|utilize|mantenha|evite|não|"
    r"usa|mantieni|evita|lascia|non|"
    r"gebruik|houd|vermijd|laat|"
    r"используй|используйте|оставь|оставьте|избегай|не)\b",
    _FLAGS,
)

# Conditionals: "if X, <order>" / "when X, <order>" where the main clause starts with a verb.
_CONDITIONAL = re.compile(
    r"^(?:if|when|whenever|unless|before|after|once|in case|as long as|si|quand|wenn|falls|bevor|cuando|antes de|se|quando|als)\b[^,]*,\s*(\S+)",
    _FLAGS,
)
_NOT_A_VERB_START = frozenset(
    "it i the that this we they he she there you a an my our your his her its their then it's that's i'm there's "
    "il elle ça ce le la les je on er sie es das der die ich el ella lo yo".split()
)

# Shapes of reports and chatter that use the cue words without laying down a rule.
_REPORT = re.compile(
    r"^(?:never ?mind|no worries|no problem|no idea|not yet|not sure|no luck|no,|nope)\b"
    r"|\b(?:must|should) have (?:been|\w+ed)\b"
    r"|\b(?:it|that|this|which|something|nothing) (?:never|always|doesn'?t|does not|didn'?t|did not|won'?t|isn'?t|wasn'?t)\b(?!.*\b(?:change|stay|remain)\b)"
    r"|\bi (?:don'?t|do not|didn'?t|did not) (?:know|understand|see|get|think|remember)\b"
    r"|\bi (?:always|never) (?:forget|remember|wonder|get|thought)\b"
    r"|\bbut it (?:returns|gives|is|does|fails|prints)\b"
    r"|\b(?:ça|ca|cela) ne (?:marche|fonctionne) pas\b",
    _FLAGS,
)
# A question asks; it lays down a rule only as a polite order ("could you avoid X?").
_POLITE_ORDER = re.compile(
    r"\b(?:could|can|would) you\s+(?:please\s+)?(?:avoid|not|keep|stick|leave|stop|refrain|use|make sure)\b", _FLAGS
)
_QUESTION_START = re.compile(
    r"^(?:should|shall|must|do|does|did|is|are|can|could|would|will|what|why|how|where|which|who|when)\b", _FLAGS
)


def sentences(text: str) -> list[str]:
    """The sentences of a message (lines and terminal punctuation split them)."""
    return [s.strip() for s in _SENTENCE_SPLIT.split(text) if s and len(s.strip()) > 1]


def _normalized(sentence: str) -> str:
    return " ".join(sentence.replace("’", "'").replace("‘", "'").split())


def _clauses(sentence: str) -> list[str]:
    return [_LEAD_IN.sub("", part).strip() for part in _CLAUSE_SPLIT.split(sentence) if part.strip()]


def is_constraint(sentence: str) -> bool:
    """Whether ``sentence`` (one sentence, any language) states a constraint or preference."""
    text = _normalized(sentence)
    if not text or len(text) > MAX_SENTENCE_CHARS:
        return False
    if text.rstrip().endswith(("?", "？")):
        return bool(_POLITE_ORDER.search(text))
    clauses = _clauses(text)
    if _REPORT.search(text) and not any(_NEGATED_IMPERATIVE.match(c) or _IMPERATIVE.match(c) for c in clauses[1:]):
        return False
    if _QUESTION_START.match(text) and not _CONDITIONAL.match(text) and not re.match(r"^when\b", text, _FLAGS):
        # "should we add caching" without a question mark is still a question
        if re.match(
            r"^(?:should|shall|do|does|did|is|are|can|could|would|will|what|why|how|where|which|who)\s+(?:we|i|you|it|this|that|there|the)\b",
            text,
            _FLAGS,
        ):
            return False
    lowered = text.lower()
    if _may_match_whole(lowered) and _WHOLE_RE.search(lowered):
        return True
    conditional = _CONDITIONAL.match(text)
    if conditional and conditional.group(1).lower().strip("'\"") not in _NOT_A_VERB_START:
        return True
    for clause in clauses:
        if _IMPERATIVE.match(clause) or _NEGATED_IMPERATIVE.match(clause) or _FOREIGN_IMPERATIVE.match(clause):
            return True
        if _IMPERATIVE_ALL.match(clause) and not re.match(r"^(?:it|the|this|that|i|we|they|he|she)\b", clause, _FLAGS):
            return True
    return False


def constraint_sentences(text: str) -> list[str]:
    """The sentences of ``text`` that are constraints, in order."""
    return [s for s in sentences(text) if is_constraint(s)]
