"""Finding ids in words: targets, drones and SAMs, as the operator writes them.

Each reference becomes one token in a normalised clause: ``@T5`` (a target), ``#2`` (a drone
as written, a number or a name), ``$SAM2`` (a SAM). Patterns first ("T5", "target 5",
"d2", "drone 2", "uav 2", "sam 2", "SAM_2", a possessive "'s" dropped), then the mission's
literal ids that follow no pattern (a target called "Bridge"). ``Ids`` resolves the written
ids against the mission's, case-insensitively, and collects an error naming each unknown one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from planner.constraints import normalise_drone
from planner.model import drone_label

__all__ = ["TOKEN_RE", "Ids", "normalise", "numbers", "plain", "tokens"]

_SAM_RE = re.compile(r"\bsam[\s_-]?(\d+)\b(?:'s)?", re.I)
_DRONE_RE = re.compile(r"\b(?:(?:drone|uav)s?\s*#?\s*d?(\d+)|d(\d+))\b(?:'s)?", re.I)
_TARGET_RE = re.compile(r"\b(?:targets?\s*#?\s*t?(\d+)|t(\d+))\b(?:'s)?", re.I)
TOKEN_RE = re.compile(r"([@#$])(\S+?)(?=[\s,.;:!?)]|$)")
"""One token of a normalised clause: group 1 its sigil (``@``, ``#``, ``$``), group 2 the id."""


def _as_token(sigil: str) -> Callable[[re.Match[str]], str]:
    return lambda m: f" {sigil}{m.group(1)} "


def normalise(
    text: str, extra_targets: Iterable[str] = (), extra_drones: Iterable[str] = ()
) -> str:
    """The text with every id reference replaced by its token."""
    out = _SAM_RE.sub(lambda m: f" $SAM{m.group(1)} ", text)
    out = _DRONE_RE.sub(lambda m: f" #{m.group(1) or m.group(2)} ", out)
    out = _TARGET_RE.sub(lambda m: f" @T{m.group(1) or m.group(2)} ", out)
    # ids that follow no pattern (e.g. a target called "Bridge") when the mission has them
    for sigil, ids in (("@", extra_targets), ("#", extra_drones)):
        plain_ids = sorted(
            (i for i in ids if not re.fullmatch(r"[TtDd]?\d+", i)), key=len, reverse=True
        )
        if plain_ids:
            rx = re.compile(r"(?<![@#$\w])(" + "|".join(map(re.escape, plain_ids)) + r")\b", re.I)
            out = rx.sub(_as_token(sigil), out)
    return re.sub(r"\s+", " ", out).strip()


def tokens(clause: str, sigil: str) -> list[str]:
    """The ids written with ``sigil`` in a normalised clause, in order."""
    return [m.group(2) for m in TOKEN_RE.finditer(clause) if m.group(1) == sigil]


def numbers(clause: str) -> list[float]:
    """The numbers in a normalised clause that are not part of an id."""
    bare = TOKEN_RE.sub(" ", clause)
    return [float(x) for x in re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])", bare)]


def plain(clause: str) -> str:
    """A normalised clause back in the operator's id spelling."""
    return TOKEN_RE.sub(
        lambda m: drone_label(m.group(2)) if m.group(1) == "#" else m.group(2), clause
    )


class Ids:
    """Resolves written ids against the mission's, collecting errors for unknown ones."""

    def __init__(self, targets: Iterable[str], drones: Iterable[str], sams: Iterable[str]):
        """The mission's target, drone and SAM ids; no errors yet."""
        self.targets = {t.lower(): t for t in targets}
        self.drones = list(drones)
        self.sams = {s.lower(): s for s in sams}
        self.errors: list[str] = []

    def _unknown(self, what: str, written: str, known: list[str]) -> None:
        shown = ", ".join(known[:20]) + (" ..." if len(known) > 20 else "")
        msg = f"unknown {what} {written} (known: {shown or 'none'})"
        if msg not in self.errors:
            self.errors.append(msg)

    def target(self, written: str) -> str | None:
        """The mission's target written ``written``, or None (and an error)."""
        found = self.targets.get(written.lower())
        if found is None:
            self._unknown("target", written, list(self.targets.values()))
        return found

    def drone(self, written: str) -> str | None:
        """The mission's drone (the scenario's spelling: "2" for "D2"), or None (and an error)."""
        candidates = [written, f"D{written}"] if written.isdigit() else [written]
        for cand in candidates:
            found = normalise_drone(cand, self.drones)
            if found in self.drones:
                return found
            low = {d.lower(): d for d in self.drones}
            if cand.lower() in low:
                return low[cand.lower()]
        self._unknown(
            "drone",
            drone_label(written) if written.isdigit() else written,
            [drone_label(d) for d in self.drones],
        )
        return None

    def sam(self, written: str) -> str | None:
        """The mission's SAM written ``written``, or None (and an error)."""
        found = self.sams.get(written.lower())
        if found is None:
            self._unknown("SAM", written, list(self.sams.values()))
        return found
