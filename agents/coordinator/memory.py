"""Memories in words: what the operator asks the system to keep in mind for later plans.

"remember that ...", "note: ...", "fyi ..." are notes; "always ...", "from now on ...",
"remember to ..." instructions; "I prefer ...", "we'd rather ..." preferences; "never ...",
"avoid ...", "beware ..." warnings; "remember as a warning: ..." names the kind. The text
kept drops the lead words ("remember that"), except for "remember to ..." instructions.
"""

from __future__ import annotations

import re

__all__ = ["parse_memory"]

_MEMORY_KIND_RE = re.compile(
    r"^(?:please\s+)?(?:remember|note|memo)(?:\s+(?:this|that|it|as))*\s*(?:an?\s+|as\s+an?\s+)?"
    r"(instruction|note|preference|warning)\s*[:\-]?\s*(.*)$",
    re.I | re.S,
)
_MEMORY_STRIP = re.compile(
    r"^(?:please\s+)?(?:remember(?:\s+that)?|note(?:\s+that)?|fyi|"
    r"keep\s+in\s+mind(?:\s+that)?|memo|instruction|preference|warning)"
    r"\s*[:,\-]?\s*",
    re.I,
)


def parse_memory(text: str) -> dict[str, str]:
    """The memory to keep: its kind and its text without the "remember that" lead."""
    raw = text.strip()
    m = _MEMORY_KIND_RE.match(raw)
    if m:
        return {"kind": m.group(1).lower(), "text": m.group(2).strip() or raw}
    low = raw.lower()
    if re.match(r"^(?:please\s+)?(?:warning|warn|beware|caution|avoid|never)\b", low):
        kind = "warning"
    elif re.match(
        r"^(?:please\s+)?(?:i\s+prefer|we\s+prefer|prefer|preference|i'd\s+rather|"
        r"we'd\s+rather)\b",
        low,
    ):
        kind = "preference"
    elif re.match(r"^(?:please\s+)?(?:always|from\s+now\s+on|instruction|remember\s+to)\b", low):
        kind = "instruction"
    else:
        kind = "note"
    stripped = (
        raw
        if kind == "instruction" and low.startswith("remember to")
        else _MEMORY_STRIP.sub("", raw, count=1)
    )
    return {"kind": kind, "text": stripped.strip() or raw}
