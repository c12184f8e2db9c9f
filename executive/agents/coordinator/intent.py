"""Classifying the operator's words: the intent of a text, and the kind of each clause.

``classify(text) -> Intent``, the first rule that applies: ``what_if`` ("what if D1 had 300
fuel?", "suppose SAM2 were removed"), ``memory`` ("remember that ...", "always ...", "never
use greedy allocation", "I prefer ..."), ``question`` (ends with "?" or starts with what /
which / where / why / how / is / tell / show / list ...), ``reallocate`` (a command naming
targets or drones: move, assign, forbid, keep out of a region, require), ``replan`` (replan,
optimise, recompute, cut, continue, solve ...), else ``unknown``. "Can you / please ..."
before an order makes it an order, not a question.

A command is split into clauses (on "and", ";", "then", ...), and each clause is a ``move``,
a ``forbid`` or a ``require`` (``clause_kind``), over the normalised text of ``ids``.
"""

from __future__ import annotations

import re
from enum import StrEnum

from executive.agents.coordinator.ids import TOKEN_RE, normalise, tokens
from executive.agents.coordinator.regions import regions_in

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

    QUESTION = "question"
    REALLOCATE = "reallocate"
    WHAT_IF = "what_if"
    REPLAN = "replan"
    MEMORY = "memory"
    UNKNOWN = "unknown"


_WHAT_IF_RE = re.compile(
    r"^\s*(?:and\s+)?(?:what\s+(?:if|would\s+happen\s+if|happens\s+if|about\s+if)"
    r"|suppose|supposing|imagine|hypothetically|assume|assuming|say)\b",
    re.I,
)
_WHAT_IF_ANY = re.compile(r"\bwhat\s+(?:if|would\s+happen\s+if|happens\s+if)\b", re.I)
_POLITE_RE = re.compile(
    r"^\s*(?:please\s+|pls\s+|kindly\s+)?(?:(?:can|could|would|will)\s+you\s+"
    r"(?:please\s+)?)?",
    re.I,
)
_QUESTION_START = re.compile(
    r"^(?:what|which|where|why|how|who|whom|whose|when|is|are|was|were|does|do|did|has|have|"
    r"had|can|could|will|would|should|shall|tell|show|list|explain|describe|give\s+me|"
    r"summari[sz]e|status|report)\b",
    re.I,
)
_MEMORY_START = re.compile(
    r"^(?:remember|note|fyi|keep\s+in\s+mind|from\s+now\s+on|always|never|i\s+prefer|"
    r"we\s+prefer|prefer|i'd\s+rather|we'd\s+rather|warning|warn|beware|caution|avoid|"
    r"instruction|preference|memo)\b",
    re.I,
)
_REPLAN_RE = re.compile(
    r"\b(?:replan|re-plan|optimi[sz]e|re-?optimi[sz]e|recompute|re-compute|"
    r"cut|checkpoint|continue|solve|generate|rerun|re-run|plan\s+again|"
    r"new\s+plan|plan\s+the\s+(?:mission|rest|remainder)|maximi[sz]e)\b",
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
    raw = (text or "").strip()
    if not raw:
        return Intent.UNKNOWN, ["empty"]
    if _WHAT_IF_RE.search(raw) or _WHAT_IF_ANY.search(raw):
        return Intent.WHAT_IF, ["what_if_token"]
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
        return Intent.QUESTION, ["question_token"]
    clauses = [clause_kind(c) for c in split_clauses(norm)]
    if any(kind in ("move", "forbid", "require") for kind, _ in clauses):
        return Intent.REALLOCATE, [hit for _, hit in clauses if hit]
    if _REPLAN_RE.search(bare):
        return Intent.REPLAN, ["replan_token"]
    if question:
        return Intent.QUESTION, ["question_token"]
    return Intent.UNKNOWN, ["no_rule"]


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
    """(move | forbid | require | None, the rule that decided) from a normalised clause."""
    targets, drones = tokens(clause, "@"), tokens(clause, "#")
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
