"""Classifying the operator's words: the intent of a text, and the kind of each clause.

``classify(text) -> Intent``, the first rule that applies (seed 000 §1's token table, plus
the executive's question and memory): ``what_if`` ("what if D1 had 300 fuel?", "suppose SAM2
were removed"), ``debug`` (error, traceback, crash, bug, broken, exception, fails ...),
``memory`` ("remember that ...", "always ...", "never use greedy allocation", "I prefer
..."), ``explain`` (a question starting with why / explain / describe / how come / how did),
``question`` (ends with "?" or starts with what / which / where / how / is / tell / show /
list / compare ...), ``reallocate`` (a command naming targets or drones: move, assign,
forbid, keep out of a region, require), ``replan`` (cut, checkpoint, continue, resume,
replan, the remainder ...), ``plan`` (plan, optimise, solve, compute, generate, maximise
...), else ``unknown``. "Can you / please ..." before an order makes it an order, not a
question. ``classify_with_rules`` also names, as ``also:<intent>``, the other intents whose
tokens the text holds (the decision's confidence is lower when there are some).

A command is split into clauses (on "and", ";", "then", ...), and each clause is a ``move``,
a ``forbid`` or a ``require`` (``clause_kind``), over the normalised text of ``ids``.
"""

from __future__ import annotations

import re
from enum import StrEnum

from agents.coordinator.ids import TOKEN_RE, normalise, tokens
from agents.coordinator.regions import regions_in

__all__ = [
    "Intent",
    "classify",
    "classify_with_rules",
    "clause_kind",
    "imperative",
    "split_clauses",
    "strip_what_if",
]


class Intent(StrEnum):
    """What the operator's words ask for."""

    PLAN = "plan"
    REPLAN = "replan"
    REALLOCATE = "reallocate"
    EXPLAIN = "explain"
    WHAT_IF = "what_if"
    DEBUG = "debug"
    QUESTION = "question"
    MEMORY = "memory"
    UNKNOWN = "unknown"


_WHAT_IF_RE = re.compile(
    r"^\s*(?:and\s+)?(?:what\s+(?:if|would\s+happen\s+if|happens\s+if|about\s+if)"
    r"|suppose|supposing|imagine|hypothetically|assume|assuming|say)\b",
    re.I,
)
_WHAT_IF_ANY = re.compile(
    r"\bwhat\s+(?:if|would\s+happen\s+if|happens\s+if)\b"
    # "what would be different / change if SAM2 were removed?"
    r"|\bwhat\s+would\s+(?:be\s+different|change|differ)\s+if\b",
    re.I,
)
_POLITE_RE = re.compile(
    r"^\s*(?:please\s+|pls\s+|kindly\s+)?(?:(?:can|could|would|will)\s+you\s+"
    r"(?:please\s+)?)?",
    re.I,
)
_QUESTION_START = re.compile(
    r"^(?:what|which|where|why|how|who|whom|whose|when|is|are|was|were|does|do(?!\s+not\b)|did|has|have|"
    r"had|can|could|will|would|should|shall|tell|show|list|explain|describe|give\s+me|"
    r"summari[sz]e|status|report|compare|contrast)\b",
    re.I,
)
_EXPLAIN_START = re.compile(
    r"^(?:why|explain|describe|how\s+come|how\s+(?:did|does|do|was|were|is)\b(?!\s+(?:many|much)))",
    re.I,
)
_DEBUG_RE = re.compile(
    r"\b(?:error|errors|traceback|stack\s*trace|crash|crashes|crashing|crashed|bug|bugs|buggy|"
    r"broken|exception|exceptions|fails|failing|failed\s+to\s+(?:plan|solve|run)|hangs?|"
    r"hanging|stuck|debug)\b",
    re.I,
)
# debug words about the mission itself, not the software: "D2 crashed" is a loss
_MISSION_FAILURE = re.compile(r"\b(?:d\d+|drone|uav)s?\b[^.?!]*\bcrash", re.I)
_MEMORY_START = re.compile(
    r"^(?:remember|note|fyi|keep\s+in\s+mind|from\s+now\s+on|always|never|i\s+prefer|"
    r"we\s+prefer|prefer|i'd\s+rather|we'd\s+rather|warning|warn|beware|caution|avoid|"
    r"instruction|preference|memo)\b",
    re.I,
)
_REPLAN_RE = re.compile(
    r"\b(?:replan|re-plan|re-?optimi[sz]e|cut|checkpoints?|continue|resume|rerun|re-run|"
    r"plan\s+again|plan\s+the\s+(?:rest|remainder)|remainder|from\s+here)\b",
    re.I,
)
_PLAN_RE = re.compile(
    r"\b(?:plan|optimi[sz]e|optimal|recompute|re-compute|compute|solve|generate|"
    r"new\s+plan|maximi[sz]e|minimi[sz]e|routes?)\b",
    re.I,
)


def imperative(text: str) -> str:
    """The text without a polite "can you / please" in front."""
    return _POLITE_RE.sub("", text, count=1).strip()


def strip_what_if(clause: str) -> str:
    """The clause without its "what if / suppose ..." lead."""
    body = _WHAT_IF_RE.sub("", clause, count=1)
    return _WHAT_IF_ANY.sub("", body).strip()


def classify(text: str) -> Intent:
    """The intent of ``text`` (see the module docstring for the rules, in order)."""
    return classify_with_rules(text)[0]


def classify_with_rules(text: str) -> tuple[Intent, list[str]]:
    """The intent of ``text`` and the rules that decided it (the decision's ``rules_hit``)."""
    intent, rules = _classify(text)
    return intent, rules + [f"also:{other}" for other in _also(text, intent)]


def _classify(text: str) -> tuple[Intent, list[str]]:
    raw = (text or "").strip()
    if not raw:
        return Intent.UNKNOWN, ["empty"]
    if _WHAT_IF_RE.search(raw) or _WHAT_IF_ANY.search(raw):
        return Intent.WHAT_IF, ["what_if_token"]
    if _DEBUG_RE.search(raw) and not _MISSION_FAILURE.search(raw):
        return Intent.DEBUG, ["debug_token"]
    bare = imperative(raw)
    polite = bare != raw
    norm = normalise(bare)
    has_ids = bool(TOKEN_RE.search(norm))
    if re.match(r"^(?:remember|note|fyi|keep\s+in\s+mind|memo)\b", bare, re.I):
        return Intent.MEMORY, ["memory_token"]
    if _MEMORY_START.match(bare) and not has_ids:
        return Intent.MEMORY, ["memory_token"]
    question = raw.endswith("?") or bool(_QUESTION_START.match(bare))
    if question and not (
        polite and not re.match(r"^(?:tell|show|list|explain|describe|give\s+me)\b", bare, re.I)
    ):
        if _EXPLAIN_START.match(bare) or re.search(r"\bexplain\b", bare, re.I):
            return Intent.EXPLAIN, ["explain_token"]
        if re.match(r"^(?:compare|contrast)\b", bare, re.I):
            return Intent.QUESTION, ["compare_token"]
        return Intent.QUESTION, ["question_token"]
    clauses = [clause_kind(c) for c in split_clauses(norm)]
    if any(kind is not None for kind, _ in clauses):
        return Intent.REALLOCATE, [hit for _, hit in clauses if hit]
    from agents.coordinator.orders import keep_of  # the orders read clauses of this module

    if keep_of(bare) is not None:  # "do not recompute routes", "only reorder"
        return Intent.PLAN, ["keep_token"]
    if _REPLAN_RE.search(bare):
        return Intent.REPLAN, ["replan_token"]
    if _PLAN_RE.search(bare):
        return Intent.PLAN, ["plan_token"]
    if question:
        return Intent.QUESTION, ["question_token"]
    return Intent.UNKNOWN, ["no_rule"]


def _also(text: str, intent: Intent) -> list[str]:
    """The other intents whose tokens ``text`` holds (an ambiguous request)."""
    raw = (text or "").strip()
    found = []
    for other, rx in (
        (Intent.DEBUG, _DEBUG_RE),
        (Intent.REPLAN, _REPLAN_RE),
        (Intent.PLAN, _PLAN_RE),
        (Intent.WHAT_IF, _WHAT_IF_ANY),
    ):
        if other != intent and rx.search(raw):
            found.append(str(other))
    # the plan family: "replan" holds "plan", a plan request names routes; not ambiguous
    if intent in (Intent.PLAN, Intent.REPLAN, Intent.REALLOCATE, Intent.WHAT_IF):
        found = [f for f in found if f not in ("plan", "replan")]
    return found


_SPLIT_RE = re.compile(
    r"\s*(?:;|\n|(?<!\d)\.(?!\d)|,?\s+(?:and\s+)?then\s+|,?\s+also\s+|,?\s+and\s+(?=(?:also\s+)?"
    r"(?:move|assign|reassign|re-assign|transfer|give|allocate|keep|forbid|ban|make\s+sure|"
    r"ensure|require|don'?t|do\s+not|never|let|#\S+|\$\S+)))\s*",
    re.I,
)
_SKIP_NEG = re.compile(
    r"\b(?:don'?t|do\s+not|never|must\s+not|mustn'?t|should\s+not|"
    r"shouldn'?t)\s+(?:skip|miss|drop|leave\s+out|forget)\b",
    re.I,
)
_NEG_RE = re.compile(
    r"\b(?:forbid|forbidden|forbids|ban|banned|bans|exclude|excluded|never|not|"
    r"no|avoid|avoids|prohibit|prohibited|disallow|disallowed)\b|n't\b|"
    # "without T4", "skip T4", "except T4": a negation of the target they name (not of
    # "move T5 to D3 without replanning")
    r"\b(?:without|except|excluding|skip|skipping|leave\s+out|leaving\s+out|ignore|"
    r"ignoring|exclude)\s+(?:the\s+)?(?:target\s+)?@|"
    r"\bkeep\b.*\b(?:out|away)\b|\bstay\s+(?:out|away|clear)\b|\baway\s+from\b"
    r"|\bout\s+of\b",
    re.I,
)
_REQUIRED_RE = re.compile(
    r"\b(?:required|require|requires|requirement|make\s+sure|ensure|"
    r"must\s+be\s+(?:visited|covered|collected|included)|mandatory|"
    r"no\s+matter\s+what|at\s+all\s+costs)\b",
    re.I,
)
_MOVE_RE = re.compile(
    r"\b(?:move|moves|assign|assigns|reassign|re-assign|transfer|give|gives|"
    r"allocate|reallocate|hand|send|take|takes|visit|visits|cover|covers|"
    r"collect|collects|handle|handles|get|gets|go\s+to|goes\s+to|went\s+to|"
    r"fly\s+to|moved|assigned|given|handled|taken|visited|covered|"
    r"reassigned|transferred)\b",
    re.I,
)


def split_clauses(norm: str) -> list[str]:
    """A normalised command's clauses: split at ";", a line end, a full stop, "then",
    "also", and an "and" before another order or a drone or SAM token."""
    return [c for c in _SPLIT_RE.split(norm) if c and c.strip()]


def clause_kind(clause: str) -> tuple[str | None, str | None]:
    """(move | forbid | require | swap | priority | reserve | None, the rule that decided)
    from a normalised clause."""
    from agents.coordinator import orders  # its regexes; it builds on this module

    targets, drones = tokens(clause, "@"), tokens(clause, "#")
    if orders.RESERVE_RE.search(clause):
        return "reserve", "reserve_token"
    if orders.PRIORITY_RE.search(clause) and orders.priority_range(clause) is not None:
        return "priority", "priority_token"
    if orders.SWAP_RE.search(clause) and len(targets) == 2:
        return "swap", "swap_token"
    if not targets and not drones:
        return None, None
    if _SKIP_NEG.search(clause):
        return ("move", "required_by_drone") if drones and targets else ("require", "dont_skip")
    unnegated = re.sub(r"\bno\s+matter\s+what\b", "", clause, flags=re.I)
    if _NEG_RE.search(unnegated) and (targets or (drones and regions_in(clause))):
        return "forbid", "region" if regions_in(clause) and drones else "negation"
    if _REQUIRED_RE.search(clause) and targets:
        return ("move", "required_by_drone") if drones else ("require", "required_token")
    if _MOVE_RE.search(clause) and targets and drones:
        return "move", "move_token"
    return None, None
