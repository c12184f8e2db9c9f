"""First contacts of paths about to fly with the known SAMs, worked out off the tick.

The safety layer's first check after a commit meets every re-tasked drone's new flight:
at 1,000 drones and 500 SAMs, tens of ms of exact geometry on the tick. The worker thread
that made the plan (or its rebase) works them out against the known SAMs as they were
when the round started (``Known``, taken on the tick); the check takes a path's answer
only while the known world is still that version, and works it out itself otherwise, so
it answers exactly what it would have.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from planner.geometry import Path
from planner.geometry.contact import Disk, first_contact, path_box, piece_boxes

__all__ = ["Contacts", "Found", "Known"]

Found = tuple[float, str] | None  # (arc length of the first contact, the SAM's id), or none
Box = tuple[float, float, float, float]

_KEPT = 16_384  # paths: a few plans' worth at 1,000 drones


@dataclass(frozen=True)
class Known:
    """The known SAMs' contact disks at one known-world version."""

    version: int
    disks: tuple[Disk, ...]
    ids: tuple[str, ...]


class Contacts:
    """Path -> its first contact with one version's known SAMs (entries hold their path,
    so an id is never reused while its entry lives)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._found: OrderedDict[int, tuple[Path, int, Found]] = OrderedDict()
        # path -> a box round it (``path_box``), for a new SAM's quick test: 1,000 new
        # flights' boxes were 15 ms on the first pop-up's tick after a commit
        self._boxes: OrderedDict[int, tuple[Path, Box]] = OrderedDict()

    def work_out(self, known: Known, paths: Iterable[Path]) -> None:
        """Each path's first contact with ``known`` (a worker thread)."""
        for path in paths:
            boxes = piece_boxes(path)  # the pieces' boxes, for both
            hit = first_contact(path, known.disks, boxes=boxes)
            found = None if hit is None else (hit[0], known.ids[hit[1]])
            box = path_box(path, boxes)
            with self._lock:
                self._found[id(path)] = (path, known.version, found)
                self._boxes[id(path)] = (path, box)
                while len(self._found) > _KEPT:
                    self._found.popitem(last=False)
                while len(self._boxes) > _KEPT:
                    self._boxes.popitem(last=False)

    def take(self, path: Path, version: int) -> tuple[bool, Found]:
        """(True, the contact) if ``path``'s was worked out at ``version``, else (False,
        None); the entry is dropped either way (the safety layer keeps its own)."""
        with self._lock:
            entry = self._found.pop(id(path), None)
        if entry is None or entry[0] is not path or entry[1] != version:
            return False, None
        return True, entry[2]

    def box(self, path: Path) -> Box | None:
        """The box round ``path`` worked out beside its contact, or None; dropped either way
        (the safety layer keeps its own)."""
        with self._lock:
            entry = self._boxes.pop(id(path), None)
        return None if entry is None or entry[0] is not path else entry[1]
