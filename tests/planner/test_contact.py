"""``first_contact``: the exact first entry of a path into a disk, against dense sampling."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.geometry import Arc, Line, Path, SamField
from planner.geometry.contact import _entry, first_contact, may_meet, path_box, piece_boxes

coord = st.floats(-20, 20, allow_nan=False)
radius = st.floats(0.2, 6)


def _sampled(path: Path, disks, start: float, step: float = 1e-3) -> float | None:
    """The first of the points every ``step`` of arc length from ``start`` inside a disk, or
    None. A point whose clearance from every disk is ``m`` lets the points of the next
    ``m / 2`` go unread: along a path by arc length none of them has moved ``m``, so none is
    inside (the same points as reading them all, the same answer, in a fraction of the time).
    """
    s = start
    while s <= path.length:
        x, y, _ = path.locate(s)
        clearance = min(math.hypot(x - cx, y - cy) - (r - 1e-9) for cx, cy, r in disks)
        if clearance < 0:
            return s
        clear_until = s + clearance / 2
        s += step
        while s < clear_until:  # the same sums of steps as reading each point
            s += step
    return None


def test_a_line_through_a_disk_enters_at_its_edge():
    path = Path((Line((0.0, 0.0), (10.0, 0.0)),), 10.0)
    s, k = first_contact(path, [(5.0, 0.0, 1.0)])
    assert k == 0 and s == 4.0


def test_touching_or_running_along_a_circle_is_not_contact():
    tangent = Path((Line((0.0, 1.0), (10.0, 1.0)),), 10.0)
    assert first_contact(tangent, [(5.0, 0.0, 1.0)]) is None
    along = Arc((0.0, 0.0), 2.0, 0.0, math.pi)
    assert first_contact(Path((along,), along.length), [(0.0, 0.0, 2.0)]) is None


def test_contact_before_the_start_is_not_reported():
    path = Path((Line((0.0, 0.0), (10.0, 0.0)),), 10.0)
    assert first_contact(path, [(1.0, 0.0, 0.5)], start=2.0) is None
    assert first_contact(path, [(1.0, 0.0, 0.5)], start=1.0) == (1.0, 0)  # already inside


@settings(max_examples=300, deadline=None)
@given(
    cx=coord,
    cy=coord,
    rho=st.floats(0.5, 8),
    a0=st.floats(-math.pi, math.pi),
    sweep=st.floats(-2 * math.pi, 2 * math.pi).filter(lambda v: abs(v) > 0.05),
    dx=coord,
    dy=coord,
    r=radius,
    start_frac=st.floats(0, 1),
)
def test_arcs_agree_with_dense_sampling(cx, cy, rho, a0, sweep, dx, dy, r, start_frac):
    arc = Arc((cx, cy), rho, a0, sweep)
    path = Path((arc,), arc.length)
    disk = (dx, dy, r)
    start = start_frac * arc.length
    got = first_contact(path, [disk], start=start)
    want = _sampled(path, [disk], start)
    if want is None:
        # sampling may step over a sliver the exact answer finds: it must be a sliver
        assert got is None or _depth(path, disk, got[0]) < 1e-4
    else:
        assert got is not None and got[0] <= want + 1e-9 and want - got[0] < 2e-3


@settings(max_examples=100, deadline=None)
def _planned(sams, p, q) -> Path | None:
    """The way round ``sams`` from ``p`` to ``q`` a plan would fly (None: no such way)."""
    field = SamField(list(sams))
    if any(field.inside_true(pt) for pt in (p, q)):
        return None
    path = field.shortest_path(p, q)
    return None if path is None or path.length <= 0 else path


@given(
    sams=st.lists(st.tuples(coord, coord, radius), min_size=1, max_size=4),
    p=st.tuples(coord, coord),
    q=st.tuples(coord, coord),
    other=st.tuples(coord, coord, radius),
)
def test_planned_paths_avoid_their_sams_and_contact_finds_new_ones(sams, p, q, other):
    path = _planned(sams, p, q)
    if path is None:
        return
    assert first_contact(path, list(sams)) is None  # a plan never enters its own SAMs
    got = first_contact(path, [other])
    want = _sampled(path, [other], 0.0, step=5e-3)
    if want is not None:
        assert got is not None and got[0] <= want + 1e-9
    # ``may_meet`` spares the exact test: it may say True for nothing, never False for a contact
    assert got is None or may_meet(path_box(path), [other])
    # the pieces' boxes made once (as the plan's flights have theirs) answer the same
    boxes = piece_boxes(path)
    assert first_contact(path, [other], boxes=boxes) == got
    x0, x1, y0, y1 = path_box(path, boxes)
    drawn = path.sample()
    assert (drawn[:, 0] >= x0).all() and (drawn[:, 0] <= x1).all()
    assert (drawn[:, 1] >= y0).all() and (drawn[:, 1] <= y1).all()


def _depth(path: Path, disk, s: float) -> float:
    """How far inside the disk the path gets around ``s`` (km)."""
    cx, cy, r = disk
    ss = np.linspace(max(0.0, s - 0.01), min(path.length, s + 0.01), 200)
    return max(r - math.hypot(path.locate(v)[0] - cx, path.locate(v)[1] - cy) for v in ss)


def _every_disk(path: Path, disks, start: float):
    """``first_contact`` without its boxes: every piece against every disk, in order."""
    offset = 0.0
    for piece in path.pieces:
        if offset + piece.length >= start - 1e-12:
            found = [
                (u, k)
                for k, (cx, cy, r) in enumerate(disks)
                if (u := _entry(piece, cx, cy, r, max(0.0, start - offset))) is not None
            ]
            if found:
                u, k = min(found)
                return offset + u, k
        offset += piece.length
    return None


@settings(max_examples=150, deadline=None)
@given(
    sams=st.lists(st.tuples(coord, coord, radius), min_size=1, max_size=6),
    p=st.tuples(coord, coord),
    q=st.tuples(coord, coord),
    others=st.lists(st.tuples(coord, coord, radius), min_size=1, max_size=30),
    start_frac=st.floats(0.0, 1.0),
)
def test_the_boxes_leave_out_no_disk_a_piece_enters(sams, p, q, others, start_frac):
    """All pieces' boxes tested at once against all disks' give the contact the exact test of
    every piece against every disk gives (the same disk on a tie: the first)."""
    path = _planned(sams, p, q)
    if path is None:
        return
    disks = tuple(others)
    start = start_frac * path.length
    assert first_contact(path, disks, start=start) == _every_disk(path, disks, start)
