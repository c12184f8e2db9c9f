"""Tests for planner.geometry.DistanceTable: a table updated edit by edit equals the table
built from scratch on the same world (distances to rounding, legs exactly), and an edit
recomputes only what it may change.

The yardstick is the from-scratch build, which tests/planner/test_geometry.py checks against
closed forms and shapely's own visibility graph.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.errors import PlannerError
from planner.geometry import (
    AddPoint,
    AddSam,
    DistanceTable,
    MovePoint,
    MoveSam,
    RemovePoint,
    RemoveSam,
    SamField,
    planning_radius,
)
from planner.geometry._incremental import fewer_sources, way_bounds
from planner.geometry.distance_table import _anchors

# Integers half the time: symmetric worlds, ties between two equal paths, points on circles.
coord = st.one_of(st.floats(0.0, 100.0, allow_nan=False), st.integers(0, 100).map(float))
radius = st.one_of(st.floats(1.0, 20.0), st.integers(1, 20).map(float))


def _same_as_scratch(table: DistanceTable) -> None:
    points = {k: table.position(k) for k in table.keys}
    scratch = DistanceTable(table.sams, points)
    keys = sorted(points)
    got, want = table.matrix(keys), scratch.matrix(keys)
    assert np.array_equal(np.isfinite(got), np.isfinite(want)), "reachability differs"
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-9, atol=1e-9)
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            if math.isfinite(scratch.dist(a, b)):
                assert table.path(a, b) == scratch.path(a, b), (a, b)
                assert table.path(b, a) == scratch.path(b, a), (b, a)
            else:
                with pytest.raises(PlannerError):
                    table.path(a, b)


@st.composite
def edit_sequences(draw):
    sams = {
        f"S{i}": (draw(coord), draw(coord), draw(radius)) for i in range(draw(st.integers(0, 4)))
    }
    points = {f"P{i}": (draw(coord), draw(coord)) for i in range(draw(st.integers(0, 8)))}
    steps = []
    live_points, live_sams = list(points), list(sams)
    for n in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["add", "move", "remove", "add_sam", "move_sam", "rm_sam"]))
        if kind == "add":
            key = f"N{n}"
            steps.append(AddPoint(key, draw(coord), draw(coord)))
            live_points.append(key)
        elif kind == "move" and live_points:
            steps.append(MovePoint(draw(st.sampled_from(live_points)), draw(coord), draw(coord)))
        elif kind == "remove" and live_points:
            key = draw(st.sampled_from(live_points))
            steps.append(RemovePoint(key))
            live_points.remove(key)
        elif kind == "add_sam":
            key = f"M{n}"
            steps.append(AddSam(key, draw(coord), draw(coord), draw(radius)))
            live_sams.append(key)
        elif kind == "move_sam" and live_sams:
            key = draw(st.sampled_from(live_sams))
            steps.append(MoveSam(key, draw(coord), draw(coord), draw(radius)))
        elif kind == "rm_sam" and live_sams:
            key = draw(st.sampled_from(live_sams))
            steps.append(RemoveSam(key))
            live_sams.remove(key)
    return sams, points, steps


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=edit_sequences())
def test_edit_by_edit_equals_from_scratch(case):
    sams, points, steps = case
    table = DistanceTable(sams, points)
    for edit in steps:
        table.apply(edit)
        _same_as_scratch(table)


def test_scratch_table_matches_the_field():
    rng = np.random.default_rng(3)
    sams = {f"S{i}": (*rng.uniform(0, 100, 2), rng.uniform(3, 12)) for i in range(8)}
    pts = rng.uniform(0, 100, (30, 2))
    table = DistanceTable(sams, {f"P{i}": tuple(p) for i, p in enumerate(pts)})
    field = SamField(list(sams.values())).all_pairs(pts)
    got = table.matrix([f"P{i}" for i in range(30)])
    assert np.array_equal(np.isfinite(got), np.isfinite(field.dist))
    ok = np.isfinite(got)
    np.testing.assert_allclose(got[ok], field.dist[ok], rtol=1e-12)


def test_a_new_point_costs_its_own_row():
    table = DistanceTable({"S": (50.0, 50.0, 10.0)}, {f"P{i}": (i * 10.0, 0.0) for i in range(6)})
    report = table.apply(AddPoint("T", 50.0, 100.0))
    assert (report.pairs, report.sources) == (6, 1)
    assert table.dist("T", "P0") == pytest.approx(
        SamField([(50.0, 50.0, 10.0)]).shortest_path((50.0, 100.0), (0.0, 0.0)).length
    )


def test_a_far_sam_recomputes_nothing_and_a_near_one_only_what_it_may_touch():
    # Two clusters 1,000 km apart: a SAM in one cannot change pairs within the other.
    west = {f"W{i}": (float(i), float(i % 3)) for i in range(6)}
    east = {f"E{i}": (1000.0 + i, float(i % 3)) for i in range(6)}
    table = DistanceTable({}, {**west, **east})
    far = table.apply(AddSam("far", 500.0, 5000.0, 5.0))
    assert far.pairs == 0
    near = table.apply(AddSam("near", 1002.5, 1.0, 0.5))
    within_east = 6 * 5 // 2
    assert 0 < near.pairs <= within_east + 6 * 6  # east pairs, and west-east ones passing by
    _same_as_scratch(table)


def test_removing_a_wall_joins_what_it_parted():
    # A point enclosed by a ring of overlapping SAMs is cut off; open the ring and it is not.
    ring = {
        f"R{k}": (
            50.0 + 20.0 * math.cos(k * math.pi / 6),
            50.0 + 20.0 * math.sin(k * math.pi / 6),
            6.0,
        )
        for k in range(12)
    }
    table = DistanceTable(ring, {"in": (50.0, 50.0), "out": (0.0, 0.0)})
    assert table.dist("in", "out") == math.inf
    table.apply(RemoveSam("R7"))
    assert math.isfinite(table.dist("in", "out"))
    _same_as_scratch(table)


def test_a_point_swallowed_by_a_sam_is_cut_off_and_freed_again():
    table = DistanceTable({}, {"a": (0.0, 0.0), "b": (30.0, 0.0)})
    table.apply(AddSam("S", 30.0, 1.0, 5.0))
    assert not table.reachable("b") and table.dist("a", "b") == math.inf
    table.apply(MoveSam("S", 15.0, 20.0, 5.0))
    assert table.reachable("b") and table.dist("a", "b") == pytest.approx(30.0)
    _same_as_scratch(table)


def test_bad_edits_are_refused_and_change_nothing():
    table = DistanceTable({"S": (0.0, 0.0, 5.0)}, {"a": (10.0, 0.0)})
    before = table.matrix(["a"])
    for edit in (
        RemovePoint("nope"),
        MovePoint("nope", 1.0, 1.0),
        AddPoint("a", 1.0, 1.0),
        RemoveSam("nope"),
        MoveSam("nope", 1.0, 1.0, 1.0),
        AddSam("S", 1.0, 1.0, 1.0),
        AddPoint("b", math.nan, 1.0),
        AddSam("T", 1.0, 1.0, -1.0),
    ):
        with pytest.raises(PlannerError):
            table.apply(edit)
    assert table.keys == ["a"] and table.sams == {"S": (0.0, 0.0, 5.0)}
    assert np.array_equal(table.matrix(["a"]), before)


def test_snapshots_do_not_follow_later_edits():
    table = DistanceTable({}, {"a": (0.0, 0.0), "b": (100.0, 0.0)})
    snapshot = table.path_table(["a", "b"])
    table.apply(AddSam("S", 50.0, 0.0, 10.0))
    assert snapshot.dist[0, 1] == 100.0 and snapshot.path(0, 1).length == 100.0
    assert table.dist("a", "b") > 100.0


def test_snapshots_share_the_legs_nothing_changed_and_keep_their_own(monkeypatch):
    sams = {"S": (50.0, 3.0, 10.0)}
    table = DistanceTable(sams, {"a": (0.0, 0.0), "b": (100.0, 0.0), "s1": (0.0, 20.0)})
    searched = []
    search = SamField.leg

    def counted(field, queries, i, j):
        searched.append((i, j))
        return search(field, queries, i, j)

    monkeypatch.setattr(SamField, "leg", counted)
    first = table.path_table(["a", "b", "s1"])
    leg = first.path(1, 0)  # searched from "a", the key that sorts first, and reversed
    assert leg.start == (100.0, 0.0) and leg.length == pytest.approx(first.dist[1, 0])
    assert len(searched) == 1
    # a new start, the old one freed (a replan's cut): the legs between the others are kept
    table.apply_points([RemovePoint("s1"), AddPoint("s2", 0.0, -20.0)])
    second = table.path_table(["s2", "b", "a"])
    assert second.path(1, 2).pieces == leg.pieces and len(searched) == 1
    second.path(0, 2)  # the new start's leg is searched
    assert len(searched) == 2
    # a SAM moved: the next snapshot searches its legs again, the older ones keep theirs
    table.apply(MoveSam("S", 50.0, -3.0, 10.0))
    third = table.path_table(["a", "b"])
    moved = third.path(0, 1)
    assert len(searched) == 3 and moved.pieces != first.path(0, 1).pieces
    assert moved.length == pytest.approx(third.dist[0, 1])
    assert first.path(0, 1).length == pytest.approx(first.dist[0, 1])
    assert second.path(2, 1).pieces == first.path(0, 1).pieces and len(searched) == 3


def test_sync_reaches_the_world_given():
    table = DistanceTable({"S": (0.0, 0.0, 5.0)}, {"a": (10.0, 0.0), "b": (-10.0, 0.0)})
    sams = {"S": (0.0, 2.0, 5.0), "T": (40.0, 0.0, 3.0)}
    points = {"b": (-10.0, 1.0), "c": (30.0, 30.0)}
    table.sync(sams, points)
    assert table.sams == sams and sorted(table.keys) == ["b", "c"]
    assert table.edits_to(sams, points) == []
    _same_as_scratch(table)


def test_two_workers_make_the_same_table(monkeypatch):
    from planner.geometry import _static, distance_table, sam_field

    monkeypatch.setattr(sam_field, "THREADED_PAIRS", 0)  # threads even for a small table
    monkeypatch.setattr(distance_table, "THREADED_ROWS", 1)  # and for its affected pairs,
    monkeypatch.setattr(sam_field, "THREADED_POINTS", 1)  # its points' entries
    monkeypatch.setattr(_static, "THREADED_DISKS", 1)  # and its fields' bitangents
    rng = np.random.default_rng(9)
    sams = {f"S{i}": (*rng.uniform(0, 100, 2), rng.uniform(3, 12)) for i in range(6)}
    points = {f"P{i}": tuple(rng.uniform(0, 100, 2)) for i in range(40)}
    one = DistanceTable(sams, points)
    two = DistanceTable(sams, points, workers=2)
    popped = {**sams, "Q1": (30.0, 60.0, 6.0), "Q2": (70.0, 40.0, 5.0)}
    popped.pop("S1")
    done = []
    for table in (one, two):
        done.append([table.apply(AddSam("new", 50.0, 50.0, 10.0)), table.apply(RemoveSam("S0"))])
        popped["new"] = (50.0, 50.0, 10.0)
        popped.pop("S0", None)
        done[-1] += table.sync(popped, points)  # three SAMs added or removed at once
    keys = sorted(points)
    assert np.array_equal(one.matrix(keys), two.matrix(keys))
    # each pass found the same pairs, and the same sources to search them from
    assert [(r.pairs, r.sources) for r in done[0]] == [(r.pairs, r.sources) for r in done[1]]
    assert all(r.pairs > 0 for r in done[1])
    _same_as_scratch(two)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=edit_sequences())
def test_point_edits_in_one_batch_equal_them_one_by_one(case):
    sams, points, steps = case
    moves = [e for e in steps if isinstance(e, AddPoint | MovePoint | RemovePoint)]
    batched = DistanceTable(sams, points)
    report = batched.apply_points(moves)
    assert report.edit == tuple(moves)
    single = DistanceTable(sams, points)
    for edit in moves:
        single.apply(edit)
    assert sorted(batched.keys) == sorted(single.keys)
    _same_as_scratch(batched)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=edit_sequences(), more=st.lists(st.tuples(coord, coord, radius), max_size=4))
def test_sam_edits_synced_in_one_batch_equal_the_table_from_scratch(case, more):
    # Several SAMs come, move and go between two rounds (pop-ups at once): one field, one
    # pass over the pairs any of them may touch, and the same table as built from scratch.
    sams, points, steps = case
    table = DistanceTable(sams, points)
    after = dict(sams)
    for edit in steps:
        match edit:
            case AddSam(key, x, y, r) | MoveSam(key, x, y, r):
                after[key] = (x, y, r)
            case RemoveSam(key):
                after.pop(key)
    after |= {f"Q{i}": sam for i, sam in enumerate(more)}
    sam_edits = (AddSam, MoveSam, RemoveSam)
    due = [e for e in table.edits_to(after, points) if isinstance(e, sam_edits)]
    reports = table.sync(after, points)
    assert table.edits_to(after, points) == [] and table.sams == after
    if len(due) > 1:  # several SAM edits went as one
        assert [r.edit for r in reports] == [tuple(due)]
    _same_as_scratch(table)


def test_a_batch_naming_a_missing_point_changes_nothing():
    table = DistanceTable({}, {"a": (0.0, 0.0)})
    with pytest.raises(PlannerError):
        table.apply_points([AddPoint("b", 1.0, 1.0), RemovePoint("nope")])
    assert table.keys == ["a"]


def test_a_matrix_memory_is_used_again_only_once_nothing_holds_it():
    from planner.geometry.distance_table import _Matrices

    pool = _Matrices(spare=1, prefault=False)
    first = pool.take(40)
    first[:] = 1.0
    row = first[7]  # a view of it, held on: its memory is not free
    address = first.ctypes.data
    del first
    second = pool.take(40)
    assert not np.shares_memory(second, row)
    held = [pool.take(40) for _ in range(3)]  # all in use: each gets memory of its own
    assert len({a.ctypes.data for a in [second, *held]}) == 4
    del row
    third = pool.take(30)  # the first's memory, nothing holds it now (a smaller one fits)
    assert third.ctypes.data == address and third.shape == (30, 30)
    del held, second
    assert len({pool.take(10).ctypes.data for _ in range(3)}) == 1  # each dropped at once


def test_snapshots_in_use_keep_their_distances_while_the_table_makes_more():
    rng = np.random.default_rng(4)
    sams = {f"S{i}": (*rng.uniform(0, 100, 2), rng.uniform(3, 9)) for i in range(5)}
    points = {f"P{i}": tuple(rng.uniform(0, 100, 2)) for i in range(30)}
    table = DistanceTable(sams, points)
    keys = sorted(points)
    alive = [table.path_table(keys) for _ in range(4)]
    want = alive[0].dist.copy()
    for round_ in range(6):
        table.apply(MovePoint("P3", float(round_), 50.0))
        snapshot = table.path_table(keys)
        assert np.array_equal(snapshot.dist, table.matrix(keys), equal_nan=True)
        alive = [*alive[-2:], snapshot]
    for older in alive:
        assert not any(np.shares_memory(older.dist, o.dist) for o in alive if o is not older)
    assert not np.array_equal(alive[0].dist, want)  # P3 moved since the first
    del alive, snapshot
    for _ in range(4):  # the memory the dropped ones free is used again, filled anew
        again = table.path_table(keys)
        assert np.array_equal(again.dist, table.matrix(keys), equal_nan=True)


def test_after_a_take_a_spare_matrix_is_made_in_the_background():
    import time

    from planner.geometry.distance_table import _Matrices

    pool = _Matrices(spare=2)

    def buffers(count: int) -> list[int]:  # where the pool's buffers are, once it has count
        deadline = time.monotonic() + 10
        while len(pool._pool) < count and time.monotonic() < deadline:  # noqa: SLF001
            time.sleep(0.01)
        return [b.ctypes.data for b in pool._pool]  # noqa: SLF001

    first = pool.take(300)
    made = buffers(2)  # the first's, and the spare a thread made meanwhile
    assert len(made) == 2 and first.ctypes.data == made[0]
    second = pool.take(300)
    assert second.ctypes.data == made[1]  # the spare, already faulted in
    assert len(buffers(3)) == 3  # none left free: the next spare is made


def test_the_spare_made_after_the_first_mission_fits_a_replan_that_adds_every_start():
    import time

    rng = np.random.default_rng(9)
    sams = {f"S{i}": (*rng.uniform(0, 100, 2), rng.uniform(3, 9)) for i in range(5)}
    points = {f"P{i}": tuple(rng.uniform(0, 100, 2)) for i in range(300)}
    table = DistanceTable(sams, points, spare=100)  # room for 100 drones' new starts
    first = table.path_table(sorted(points))
    pool = table._matrices  # noqa: SLF001
    deadline = time.monotonic() + 10
    while len(pool._pool) < 2 and time.monotonic() < deadline:  # noqa: SLF001
        time.sleep(0.01)
    spare = pool._pool[-1].ctypes.data  # noqa: SLF001  (its address: a reference would hold it)
    starts = [AddPoint(f"start{i}", *rng.uniform(0, 100, 2)) for i in range(100)]
    table.apply_points(starts)
    keys = [*sorted(points), *(s.key for s in starts)]
    replan = table.path_table(keys)
    assert replan.dist.ctypes.data == spare  # no fresh memory on the replan's path
    assert np.array_equal(replan.dist, table.matrix(keys), equal_nan=True)
    del first


def _synced_entries_as_from_scratch(
    before: dict[str, tuple[float, float, float]],
    after: dict[str, tuple[float, float, float]],
    pts: dict[str, tuple[float, float]],
) -> None:
    """A table on ``before`` synced to ``after`` has the entries (and the table) one built
    on ``after`` has, exactly."""
    table = DistanceTable(before, pts)
    table.sync(after, pts)
    scratch = DistanceTable(after, pts)
    got, want = table._q, scratch._q  # noqa: SLF001
    for g, w in zip((*got.ent, got.side), (*want.ent, want.side), strict=True):
        np.testing.assert_array_equal(g, w)
    _same_as_scratch(table)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sams=st.lists(st.tuples(coord, coord, radius), max_size=5),
    points=st.lists(st.tuples(coord, coord), min_size=1, max_size=10),
    added=st.lists(st.tuples(coord, coord, radius), min_size=1, max_size=4),
    on=st.booleans(),
)
def test_sams_only_added_give_the_entries_a_table_from_scratch_has(sams, points, added, on):
    # With disks only added, a point's way onto a circle it had none onto is not worked out
    # again (none can open): the entries are those a table built with every SAM has,
    # points on a circle included (they join it directly).
    before = {f"S{i}": s for i, s in enumerate(sams)}
    pts = {f"P{i}": p for i, p in enumerate(points)}
    if on and sams:
        x, y, r = sams[0]
        r = planning_radius(r)
        pts["ON"] = (x + r, y)  # on the first circle, as the graph buffers it
    after = before | {f"A{i}": s for i, s in enumerate(added)}
    _synced_entries_as_from_scratch(before, after, pts)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sams=st.lists(st.tuples(coord, coord, radius), min_size=1, max_size=6),
    points=st.lists(st.tuples(coord, coord), min_size=1, max_size=10),
    gone=st.lists(st.integers(0, 5), min_size=1, max_size=3),
    added=st.lists(st.tuples(coord, coord, radius), max_size=2),
)
def test_sams_removed_give_the_entries_a_table_from_scratch_has(sams, points, gone, added):
    # A point's old entries onto a circle are kept when both its ways onto it miss every
    # disk removed or added (none of them can open or close): the entries equal those a
    # table built on the world after has, exactly.
    before = {f"S{i}": s for i, s in enumerate(sams)}
    pts = {f"P{i}": p for i, p in enumerate(points)}
    after = {k: v for k, v in before.items() if int(k[1:]) not in gone}
    after |= {f"A{i}": s for i, s in enumerate(added)}
    _synced_entries_as_from_scratch(before, after, pts)


_REACHES = st.sampled_from([math.inf, math.inf, 0.0, 10.0, 30.0, 60.0])


@st.composite
def reach_sequences(draw):
    """``edit_sequences`` whose points have reaches (drones' starts with fuel), some not."""
    sams, points, steps = draw(edit_sequences())
    reach = {key: draw(_REACHES) for key in points}
    with_reach = []
    for edit in steps:
        match edit:
            case AddPoint(key, x, y) | MovePoint(key, x, y):
                with_reach.append(type(edit)(key, x, y, draw(_REACHES)))
            case _:
                with_reach.append(edit)
    return sams, points, reach, with_reach


def _beyond_its_way(table: DistanceTable, a: str, b: str, exact: DistanceTable) -> bool:
    """Whether the pair's way is longer than the smaller reach of its points, though they
    are no farther apart than that in a straight line: a value any way's length, or inf."""
    r = min(table.reach(a), table.reach(b))
    pa, pb = np.array(table.position(a)), np.array(table.position(b))
    return float(np.sum((pb - pa) ** 2)) <= r * r and exact.dist(a, b) > r - 1e-6


def _bounded_as_the_contract_says(table: DistanceTable) -> None:
    """Within the smaller reach of a pair, the exact km (a table without reaches); beyond
    it, the straight km when even that is beyond it (inf when either point is
    unreachable), else a longer way's km or inf: never below the exact, and beyond the
    reach either way."""
    keys = sorted(table.keys)
    exact = DistanceTable(table.sams, {k: table.position(k) for k in keys})
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            pa, pb = np.array(table.position(a)), np.array(table.position(b))
            straight = float(np.hypot(*(pb - pa)))
            got, want = table.dist(a, b), exact.dist(a, b)
            r = min(table.reach(a), table.reach(b))
            if _beyond_its_way(table, a, b, exact):
                assert got > r - 1e-6
                assert got == math.inf or got >= want - 1e-9 * max(1.0, want)
            elif r == math.inf or float(np.sum((pb - pa) ** 2)) <= r * r:
                assert got == pytest.approx(want, rel=1e-9, abs=1e-9) or got == want == math.inf
            elif table.reachable(a) and table.reachable(b):
                assert got == pytest.approx(straight, rel=1e-12) and got <= want + 1e-9
            else:
                assert got == math.inf


def _equal_where_exact(table: DistanceTable, scratch: DistanceTable, keys: list[str]) -> None:
    """The table and one built from scratch with the same reaches agree on every pair, but
    those whose way is beyond their reach (each holds some way's km, or inf)."""
    got, want = table.matrix(keys), scratch.matrix(keys)
    exact = DistanceTable(table.sams, {k: table.position(k) for k in keys})
    mask = np.array(
        [[not _beyond_its_way(table, a, b, exact) for b in keys] for a in keys], dtype=bool
    ).reshape(len(keys), len(keys))
    assert np.array_equal(np.isfinite(got[mask]), np.isfinite(want[mask]))
    finite = mask & np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-9, atol=1e-9)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=reach_sequences())
def test_points_with_a_reach_edit_by_edit_equal_from_scratch_and_bound_what_is_beyond(case):
    sams, points, reach, steps = case
    table = DistanceTable(sams, points, reach=reach)
    _bounded_as_the_contract_says(table)
    for edit in steps:
        table.apply(edit)
        keys = sorted(table.keys)
        scratch = DistanceTable(
            table.sams,
            {k: table.position(k) for k in keys},
            reach={k: table.reach(k) for k in keys},
        )
        _equal_where_exact(table, scratch, keys)
        _bounded_as_the_contract_says(table)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=reach_sequences(), more=st.lists(st.tuples(coord, coord, radius), max_size=3))
def test_a_sync_with_reaches_equals_the_table_from_scratch(case, more):
    # a round's compile: the SAMs popped up and every start moved, with its drone's fuel
    sams, points, reach, _steps = case
    table = DistanceTable(sams, points, reach=reach)
    after = sams | {f"Q{i}": sam for i, sam in enumerate(more)}
    moved = {k: (x + 1.0, y) for k, (x, y) in points.items()}
    new_reach = {k: r for k, r in zip(points, reversed(list(reach.values())))}
    table.sync(after, moved, new_reach)
    assert table.edits_to(after, moved, new_reach) == []
    scratch = DistanceTable(after, moved, reach=new_reach)
    _equal_where_exact(table, scratch, sorted(moved))
    _bounded_as_the_contract_says(table)


@st.composite
def pop_ups_in_a_maze(draw):
    """A world whose ways wind (big SAMs among the points), points with and without
    reaches, and small SAMs popping up next to points: each pop-up has an anchor (the point
    beside it) when nothing stands between them, else none (a SAM within its reach)."""
    big = st.tuples(coord, coord, st.floats(5.0, 25.0))
    sams = {f"S{i}": s for i, s in enumerate(draw(st.lists(big, min_size=2, max_size=7)))}
    points = draw(st.lists(st.tuples(coord, coord), min_size=4, max_size=14))
    reach = {f"P{i}": draw(_REACHES) for i in range(len(points))}
    near = st.tuples(
        st.integers(0, len(points) - 1), st.floats(0.3, 6.0), st.floats(0.0, 6.3), radius
    )
    pops = {}
    for n, (k, off, angle, r) in enumerate(draw(st.lists(near, min_size=1, max_size=3))):
        x, y = points[k]
        pops[f"Q{n}"] = (x + off * math.cos(angle), y + off * math.sin(angle), min(r, 3.0))
    return sams, {f"P{i}": p for i, p in enumerate(points)}, reach, pops


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=pop_ups_in_a_maze())
def test_pop_ups_beside_points_on_winding_ways_equal_the_table_from_scratch(case):
    # The anchor's bound (``_incremental.way_bounds``) skips the pairs whose ways pass far
    # from a pop-up in the table's own distances: it must skip none whose way it blocks.
    sams, points, reach, pops = case
    table = DistanceTable(sams, points, reach=reach)
    table.sync(sams | pops, points, reach)
    keys = sorted(points)
    scratch = DistanceTable(sams | pops, points, reach=reach)
    _equal_where_exact(table, scratch, keys)
    _bounded_as_the_contract_says(table)
    table.sync(sams, points, reach)  # and gone again
    _equal_where_exact(table, DistanceTable(sams, points, reach=reach), keys)


def test_a_pop_up_beside_the_far_end_of_a_tangent_blocks_it_though_the_circle_is_nearer():
    # P's tangent onto S is 8 km long (S 10 km away, 6 in radius): a pop-up 6.5 km from P
    # beside its far end blocks it, though it is farther from P than S's circle (4 km). The
    # entries kept as they were (``query_entries``) are only those nearer than the pop-up.
    sams = {"S": (10.0, 0.0, 6.0)}
    r = planning_radius(6.0)
    t = math.acos(r / 10.0)  # P's tangent point at +alpha, seen from S's centre
    tx, ty = 10.0 + r * math.cos(math.pi - t), r * math.sin(math.pi - t)
    points = {"P": (0.0, 0.0), "Q": (20.0, 0.5), "R": (10.0, 12.0)}
    table = DistanceTable(sams, points)
    pop = {"pop": (0.9 * tx, 0.9 * ty, 0.3)}
    table.sync(sams | pop, points)
    scratch = DistanceTable(sams | pop, points)
    got, want = table._q, scratch._q  # noqa: SLF001
    for g, w in zip((*got.ent, got.side), (*want.ent, want.side), strict=True):
        np.testing.assert_array_equal(g, w)
    _same_as_scratch(table)


def _cup() -> tuple[dict[str, tuple[float, float, float]], dict[str, tuple[float, float]]]:
    """A cup of SAMs open at the bottom, a point ``a`` inside it under its wall, and a road
    from ``i`` to ``j`` just above the wall: from ``i`` to ``a`` is the long way round."""
    sams = {f"T{k}": (35.0 + 3.0 * k, 47.0, 2.0) for k in range(11)}
    for k in range(9):
        sams |= {f"L{k}": (35.0, 20.0 + 3.0 * k, 2.0), f"R{k}": (65.0, 20.0 + 3.0 * k, 2.0)}
    return sams, {"a": (50.0, 44.0), "i": (0.0, 50.5), "j": (100.0, 50.5)}


def test_a_pop_up_whose_nearest_point_is_behind_a_wall_has_no_anchor():
    # ``a`` is the nearest point to the pop-up on the road, but its ways to ``i`` and ``j``
    # go round the cup: as an anchor it would call the road far from the pop-up (it is on
    # it). The wall within reach of the pop-up refuses it.
    sams, points = _cup()
    table = DistanceTable(sams, points)
    assert table.dist("i", "j") == pytest.approx(100.0)
    assert table.dist("i", "a") > 75.0  # round the cup
    pop = {"pop": (50.0, 50.5, 1.0)}
    disks = np.array([(50.0, 50.5, planning_radius(1.0))])
    slots = np.arange(len(points), dtype=np.int64)
    anchors, _ = _anchors(disks, table._pts, slots, table.field)  # noqa: SLF001
    assert anchors.tolist() == [-1]
    table.sync(sams | pop, points)
    assert table.dist("i", "j") == pytest.approx(DistanceTable(sams | pop, points).dist("i", "j"))
    assert table.dist("i", "j") > 100.0


def test_an_anchor_keeps_only_the_pairs_whose_ways_pass_near_the_pop_up(monkeypatch):
    # Points on both sides of a big SAM: their ways wind round it, and their ellipses are
    # wide. A pop-up beside a point on the west side, in the open: its anchor is that point.
    sams = {"S": (50.0, 50.0, 30.0)}
    points = {f"W{k}": (5.0, 10.0 + 10.0 * k) for k in range(9)}
    points |= {f"E{k}": (95.0, 10.0 + 10.0 * k) for k in range(9)}
    pop = {"pop": (8.0, 50.0, 1.0)}
    table = DistanceTable(sams, points)
    report = table.sync(sams | pop, points)[0]
    _same_as_scratch(table)
    monkeypatch.setattr(
        "planner.geometry.distance_table._anchors",
        lambda disks, *_: (np.full(len(disks), -1, dtype=np.int64), np.zeros(len(disks))),
    )
    straight = DistanceTable(sams, points)
    straight_report = straight.sync(sams | pop, points)[0]
    _same_as_scratch(straight)
    # W4's 17 pairs (the pop-up is 3 km from it) and a few passing by, against 35
    assert 17 <= report.pairs < straight_report.pairs, (report.pairs, straight_report.pairs)


def test_way_bounds_read_the_anchor_only_where_the_table_is_exact():
    # Point 1's value to the anchor (0) is beyond their reach (10): it may be any longer way,
    # or inf, so only the straight km bounds it. Point 2's is exact (inf reaches).
    pts = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 8.0]])
    inf = math.inf
    dist = np.array([[0.0, inf, 30.0], [inf, 0.0, inf], [30.0, inf, 0.0]])
    reach = np.array([inf, 10.0, inf])
    disks = np.array([[1.0, 0.0, 0.5]])
    slots = np.arange(3, dtype=np.int64)
    to = np.hypot(pts[:, 0] - 1.0, pts[:, 1])[None, :]
    low = way_bounds(slots, dist, pts, reach, disks, to, np.array([0]), np.array([1.5]))
    assert low[0, 1] == pytest.approx(5.0 - 0.5)  # straight: |p c| - R
    assert low[0, 2] == pytest.approx(30.0 - 1.5)  # the table's: D(p, a) - w
    assert low[0, 0] == pytest.approx(0.5)  # the anchor itself: its straight km


def test_a_reach_that_changes_alone_redoes_the_point():
    table = DistanceTable({"S": (50.0, 0.0, 5.0)}, {"a": (0.0, 0.0), "b": (100.0, 0.0)})
    exact = table.dist("a", "b")
    assert exact > 100.0  # round the SAM
    table.sync(table.sams, {"a": (0.0, 0.0), "b": (100.0, 0.0)}, {"a": 50.0})
    assert table.dist("a", "b") == 100.0  # beyond a's reach: the straight km
    table.sync(table.sams, {"a": (0.0, 0.0), "b": (100.0, 0.0)}, {})
    assert table.dist("a", "b") == exact
    with pytest.raises(PlannerError, match="reach"):
        table.apply(MovePoint("a", 0.0, 0.0, -1.0))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sams=st.lists(st.tuples(coord, coord, st.floats(2.0, 12.0)), min_size=3, max_size=14),
    points=st.lists(st.tuples(coord, coord), min_size=2, max_size=7),
    pick=st.integers(1, 6),
)
def test_a_way_just_within_the_reach_is_exact_however_it_winds(sams, points, pick):
    # a start's entries and its search stop at its reach: a way of exactly that length,
    # round several SAMs, must still be found whole
    keyed_sams = {f"S{i}": sam for i, sam in enumerate(sams)}
    keyed = {f"P{i}": xy for i, xy in enumerate(points)}
    exact = DistanceTable(keyed_sams, keyed)
    other = f"P{pick % (len(points) - 1) + 1}"
    way = exact.dist("P0", other)
    if not (0.0 < way < math.inf):
        return
    for reach in (way * (1 + 1e-9) + 1e-9, way * 0.999):
        table = DistanceTable(keyed_sams, keyed, reach={"P0": reach})
        moved = DistanceTable(keyed_sams, {**keyed, "P0": (0.0, 0.0)}, reach={"P0": reach})
        moved.sync(keyed_sams, keyed, {"P0": reach})  # the start's row made by an edit
        for t in (table, moved):
            for key in keyed:
                want = exact.dist("P0", key)
                if want <= reach:
                    assert t.dist("P0", key) == pytest.approx(want, rel=1e-9, abs=1e-9), key
                else:
                    assert t.dist("P0", key) > reach


@settings(max_examples=100, deadline=None)
@given(
    pairs=st.sets(st.tuples(st.integers(0, 30), st.integers(0, 30))).map(
        lambda ps: sorted({(min(a, b), max(a, b)) for a, b in ps if a != b})
    )
)
def test_fewer_sources_keep_every_pair_once_and_search_from_the_busier_point(pairs):
    by_first: dict[int, list[int]] = {}
    for a, b in pairs:
        by_first.setdefault(a, []).append(b)
    sources = np.array(sorted(by_first), dtype=np.int64)
    ptr = np.cumsum([0] + [len(by_first[a]) for a in sources]).astype(np.int64)
    dests = np.array([b for a in sources for b in by_first[a]], dtype=np.int64)
    got_sources, got_ptr, got_dests = fewer_sources(sources, ptr, dests, 31)
    got = [
        (int(got_sources[k]), int(j))
        for k in range(len(got_sources))
        for j in got_dests[got_ptr[k] : got_ptr[k + 1]]
    ]
    assert sorted((min(a, b), max(a, b)) for a, b in got) == pairs  # each once, none new
    assert len(got_sources) <= len(sources)
    degree = np.bincount(np.array(pairs, dtype=np.int64).ravel(), minlength=31)
    as_given = got == [(a, b) for a in sources for b in by_first[a]]
    # the greedy choice can make more sources: then the pairs come back as given
    assert as_given or all(degree[a] >= degree[b] for a, b in got)
    assert np.all(np.diff(got_sources) > 0) and np.all(np.diff(got_ptr) > 0)


@settings(max_examples=100, deadline=None)
@given(
    counts=st.lists(st.integers(0, 6), max_size=12),
    starts=st.lists(st.integers(0, 50), min_size=12, max_size=12),
)
def test_the_splice_index_is_numpys_repeat(counts, starts):
    # the entries' splice in a kernel that lets the GIL go (np.repeat held it)
    from planner.geometry._incremental import splice_index

    n = len(counts)
    start = np.array(starts[:n], dtype=np.int64)
    ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    want = np.repeat(start - ptr[:-1], counts) + np.arange(ptr[-1])
    assert np.array_equal(splice_index(start, ptr), want)
