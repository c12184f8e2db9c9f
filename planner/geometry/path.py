"""``Path``: a continuous chain of pieces, the geometry a drone flies for a leg or a route."""

from __future__ import annotations

import weakref
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from planner.errors import PlannerError
from planner.geometry.margins import DEFAULT_SAGITTA
from planner.geometry.pieces import Line, Piece, Point

__all__ = ["Path"]


@dataclass(frozen=True)
class Path:
    """A continuous chain of pieces; ``length`` is the sum of the piece lengths."""

    pieces: tuple[Piece, ...]
    length: float
    _cum: tuple[float, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.pieces:
            raise PlannerError("a Path needs at least one piece")
        if not self._cum:
            # Cumulative start offsets so locate() is a bisect, not a scan.
            cum = [0.0]
            for piece in self.pieces[:-1]:
                cum.append(cum[-1] + piece.length)
            object.__setattr__(self, "_cum", tuple(cum))

    @property
    def offsets(self) -> tuple[float, ...]:
        """Each piece's start offset along the path (what ``locate`` bisects)."""
        return self._cum

    @staticmethod
    def from_pieces(pieces: Iterable[Piece]) -> Path:
        """A path of these pieces, its length their sum."""
        pieces = tuple(pieces)
        return Path(pieces, float(sum(p.length for p in pieces)))

    @staticmethod
    def point(p: Point) -> Path:
        """The zero-length path that stays at ``p``."""
        p = (float(p[0]), float(p[1]))
        return Path((Line(p, p),), 0.0)

    @property
    def start(self) -> Point:
        """Where the path begins."""
        return self.pieces[0].start

    @property
    def end(self) -> Point:
        """Where the path ends."""
        return self.pieces[-1].end

    def reversed(self) -> Path:
        """The same curve flown backwards (same length), made once: a leg the distance
        table keeps is read backwards by every round's mission (a swarm's round reversed
        3,000 legs, 15-20 ms of Python), and the reverse of the reverse is this path while
        it lives. The reverse knows its path by a weak reference: a cycle would leave every
        reversed path to the cyclic collector, which runs between ticks."""
        state = self.__dict__
        back: Path | None = state.get("_reversed")
        if back is None:
            of = state.get("_reverse_of")
            back = None if of is None else of()
        if back is None:
            back = Path(tuple(p.reversed() for p in reversed(self.pieces)), self.length)
            object.__setattr__(self, "_reversed", back)
            object.__setattr__(back, "_reverse_of", weakref.ref(self))
        return back

    def __getstate__(self) -> dict[str, object]:
        # the reverse made once is a cache (and a weak reference cannot be pickled)
        return {k: v for k, v in self.__dict__.items() if k not in ("_reversed", "_reverse_of")}

    def locate(self, s: float) -> tuple[float, float, float]:
        """(x, y, heading) at arc length ``s`` from the start, clamped to [0, length]."""
        if s <= 0.0:
            return self.pieces[0].locate(0.0)
        if s >= self.length:
            last = self.pieces[-1]
            return last.locate(last.length)
        i = bisect_right(self._cum, s) - 1
        return self.pieces[i].locate(s - self._cum[i])

    def sample(self, max_sagitta: float | None = None) -> np.ndarray:
        """(k, 2) polyline from start to end.

        Arcs are subdivided so every chord's sagitta is <= ``max_sagitta`` (default half of
        MARGIN_ABS, which is at most half of any SAM's margin): the chords cut at most that
        deep into a buffered disk and so stay outside the true one.
        """
        sag = DEFAULT_SAGITTA if max_sagitta is None else float(max_sagitta)
        if sag <= 0.0:
            raise PlannerError("max_sagitta must be positive")
        out: list[np.ndarray] = [np.asarray([self.start], dtype=float)]
        for piece in self.pieces:
            if isinstance(piece, Line):
                out.append(np.asarray([piece.end], dtype=float))
            else:
                a = piece.sample_angles(sag)[1:]
                cx, cy = piece.center
                out.append(
                    np.column_stack((cx + piece.radius * np.cos(a), cy + piece.radius * np.sin(a)))
                )
        return np.concatenate(out, axis=0)

    @staticmethod
    def concat(paths: Sequence[Path]) -> Path:
        """Join legs end to start into one path (the caller guarantees they connect)."""
        if not paths:
            raise PlannerError("cannot concatenate zero paths")
        pieces: list[Piece] = []
        for path in paths:
            pieces.extend(p for p in path.pieces if p.length > 0.0)
        if not pieces:
            return Path.point(paths[0].start)
        return Path(tuple(pieces), float(sum(p.length for p in paths)))
