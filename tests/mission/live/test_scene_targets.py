"""The scene's targets inside a known SAM: one answer per set of positions, kept between
snapshots, and a new one as soon as a target or a SAM moves."""

from __future__ import annotations

import numpy as np

from mission.live.scene import _inside
from planner.model import Sam, Target


def _target(k: int, x: float, y: float) -> Target:
    return Target(id=f"T{k}", x=x, y=y, priority=1, type="A")


def test_inside_follows_every_move_and_is_kept_between_snapshots():
    targets = [_target(k, float(k), 0.0) for k in range(10)]
    sams = [Sam(id="S1", pos=(2.0, 0.0), range=1.5)]
    first = _inside(targets, sams)
    assert first.tolist() == [k in (1, 2, 3) for k in range(10)]
    assert _inside(list(targets), list(sams)) is first  # the same positions: kept
    moved = [Sam(id="S1", pos=(7.0, 0.0), range=1.5)]
    assert _inside(targets, moved).tolist() == [k in (6, 7, 8) for k in range(10)]
    targets[0] = _target(0, 7.2, 0.5)
    assert _inside(targets, moved).tolist() == [k in (0, 6, 7, 8) for k in range(10)]
    assert not _inside(targets, []).any()
    reference = np.zeros(10, dtype=bool)  # one SAM at a time, as drawn before
    for s in moved:
        reference |= np.hypot([t.x - s.x for t in targets], [t.y - s.y for t in targets]) < s.range
    assert _inside(targets, moved).tolist() == reference.tolist()
