"""Path geometry to JSON and back, losslessly (floats keep their repr), so a recorded
``fly_path`` command replays bit for bit."""

from __future__ import annotations

from typing import Any

from planner.errors import PlannerError
from planner.geometry import Arc, Line, Path, Piece

__all__ = ["path_from_json", "path_to_json"]


def path_to_json(path: Path) -> dict[str, Any]:
    """``{"pieces": [["L", x0, y0, x1, y1] | ["A", cx, cy, r, start, sweep], ...], "length"}``."""
    pieces: list[list[str | float]] = []
    for p in path.pieces:
        if isinstance(p, Line):
            pieces.append(["L", p.start[0], p.start[1], p.end[0], p.end[1]])
        else:
            pieces.append(["A", p.center[0], p.center[1], p.radius, p.start_angle, p.sweep])
    return {"pieces": pieces, "length": path.length}


def path_from_json(data: dict[str, Any]) -> Path:
    """The Path :func:`path_to_json` wrote; :class:`PlannerError` if ``data`` is malformed."""
    try:
        pieces: list[Piece] = []
        for kind, *v in data["pieces"]:
            if kind == "L":
                pieces.append(Line((float(v[0]), float(v[1])), (float(v[2]), float(v[3]))))
            elif kind == "A":
                pieces.append(
                    Arc((float(v[0]), float(v[1])), float(v[2]), float(v[3]), float(v[4]))
                )
            else:
                raise PlannerError(f"unknown path piece kind {kind!r}")
        return Path(tuple(pieces), float(data["length"]))
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise PlannerError(f"malformed path JSON: {exc}") from exc
