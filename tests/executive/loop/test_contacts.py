"""Contacts and boxes of paths about to fly, worked out in a worker thread for the safety
layer's first check after a commit (``executive.loop.contacts``)."""

from __future__ import annotations

from executive.loop.contacts import Contacts, Known
from planner.geometry import Path
from planner.geometry.contact import first_contact, path_box
from planner.geometry.pieces import Line


def _line(*points: tuple[float, float]) -> Path:
    return Path.from_pieces(Line(a, b) for a, b in zip(points, points[1:]))


def test_a_paths_contact_and_box_are_what_the_tick_would_work_out_and_taken_once():
    disks = ((10.0, 0.0, 2.0), (30.0, 5.0, 1.0))
    known = Known(3, disks, ("S1", "S2"))
    meets, misses = _line((0.0, 0.0), (20.0, 0.0)), _line((0.0, 10.0), (40.0, 10.0), (40.0, 30.0))
    contacts = Contacts()
    contacts.work_out(known, [meets, misses])
    hit = first_contact(meets, disks)
    assert hit is not None
    assert contacts.take(meets, 3) == (True, (hit[0], "S1"))
    assert contacts.take(misses, 4) == (False, None)  # another known world: worked out again
    assert contacts.take(meets, 3) == (False, None)  # taken once
    for path in (meets, misses):
        assert contacts.box(path) == path_box(path)
        assert contacts.box(path) is None  # the layer keeps its own
    assert contacts.box(_line((0.0, 0.0), (1.0, 1.0))) is None  # never worked out
