"""Tests for planner.geometry: exact SAM-avoiding shortest paths.

Reference values are computed independently here (closed forms, shapely polygons with
their own visibility graph) rather than by re-using the module's internals.
"""

from __future__ import annotations

import gc
import math
import pickle
import weakref
from unittest import mock

import numpy as np
import pytest
import shapely
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import dijkstra
from shapely.geometry import MultiPolygon, Polygon
from shapely.ops import unary_union

from planner.errors import PlannerError
from planner.geometry import (
    MARGIN_ABS,
    MARGIN_REL,
    Arc,
    Line,
    Path,
    PathTable,
    SamField,
    planning_radius,
)
from planner.geometry._disks import inside_any, strictly_inside
from planner.geometry.margins import TRUE_TOL
from planner.geometry.sam_field import field_of, static_nodes

EPS = 1e-9


def _R(r: float) -> float:
    """Planning radius, written out independently of the module."""
    return r + max(MARGIN_ABS, MARGIN_REL * r)


# ----------------------------------------------------------------------------------------
# independent checkers
# ----------------------------------------------------------------------------------------


def _seg_min_dist(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """(E, m) minimum distance from segments a[e]-b[e] to points c[m]."""
    d = b - a
    dd = np.einsum("ij,ij->i", d, d)
    dd = np.where(dd > 0, dd, 1.0)
    t = np.einsum("emk,ek->em", c[None] - a[:, None], d) / dd[:, None]
    t = np.clip(t, 0.0, 1.0)
    closest = a[:, None] + t[..., None] * d[:, None]
    return np.linalg.norm(closest - c[None], axis=2)


def assert_path_safe(path: Path, sams: list[tuple[float, float, float]]) -> None:
    """Samples, chords between samples, and locate(s) stay outside every TRUE disk."""
    if not sams:
        return
    c = np.array([(x, y) for x, y, _ in sams], dtype=float)
    r = np.array([rr for _, _, rr in sams], dtype=float)
    pts = path.sample()
    assert pts.shape[1] == 2 and pts.shape[0] >= 2
    d_pts = np.linalg.norm(pts[:, None] - c[None], axis=2)
    assert np.all(d_pts >= r - EPS), "a sampled point enters a true disk"
    mids = 0.5 * (pts[1:] + pts[:-1])
    d_mid = np.linalg.norm(mids[:, None] - c[None], axis=2)
    assert np.all(d_mid >= r - EPS), "a chord midpoint enters a true disk"
    # Stronger than midpoints: the whole chord.
    d_seg = _seg_min_dist(pts[:-1], pts[1:], c)
    assert np.all(d_seg >= r - EPS), "a chord enters a true disk"
    for s in np.linspace(0.0, path.length, 97):
        x, y, _ = path.locate(float(s))
        assert np.all(np.hypot(x - c[:, 0], y - c[:, 1]) >= r - EPS)


def assert_path_well_formed(path: Path, p, q) -> None:
    assert path.start == pytest.approx(tuple(p), abs=EPS)
    assert path.end == pytest.approx(tuple(q), abs=EPS)
    assert path.length == pytest.approx(sum(pc.length for pc in path.pieces), rel=1e-12, abs=1e-12)
    for a, b in zip(path.pieces[:-1], path.pieces[1:]):
        assert math.dist(a.end, b.start) <= EPS, "pieces do not join"
    x0, y0, _ = path.locate(0.0)
    x1, y1, _ = path.locate(path.length)
    assert math.dist((x0, y0), path.start) <= EPS
    assert math.dist((x1, y1), path.end) <= EPS
    # Clamping.
    assert path.locate(-5.0)[:2] == path.locate(0.0)[:2]
    assert path.locate(path.length + 5.0)[:2] == path.locate(path.length)[:2]


def _polygon_detour(
    circles: list[tuple[float, float, float]], p, q, sides: int, outer: bool
) -> float:
    """Shortest p->q path avoiding the interiors of regular polygons around the circles.

    outer=True: polygons circumscribe the circles (a feasible detour: an upper bound).
    outer=False: polygons are inscribed (smaller obstacles: a lower bound).
    """
    polys = []
    for x, y, R in circles:
        rho = R / math.cos(math.pi / sides) if outer else R
        ang = np.arange(sides) * 2 * math.pi / sides
        polys.append(Polygon(np.column_stack((x + rho * np.cos(ang), y + rho * np.sin(ang)))))
    union = unary_union(polys)
    geoms = list(union.geoms) if isinstance(union, MultiPolygon) else [union]
    verts = [tuple(p), tuple(q)]
    for g in geoms:
        for ring in [g.exterior, *g.interiors]:
            verts.extend(tuple(v) for v in list(ring.coords)[:-1])
    V = np.array(verts)
    n = len(V)
    ii, jj = np.triu_indices(n, 1)
    segs = shapely.linestrings(np.stack((V[ii], V[jj]), axis=1))
    shapely.prepare(union)
    # Blocked iff the segment meets the polygon interior (DE-9IM interior/interior).
    blocked = shapely.relate_pattern(union, segs, "T********")
    w = np.full((n, n), np.inf)
    ok = ~blocked
    L = np.linalg.norm(V[ii] - V[jj], axis=1)
    w[ii[ok], jj[ok]] = L[ok]
    w[jj[ok], ii[ok]] = L[ok]
    w[~np.isfinite(w)] = 0.0  # dense csgraph input: 0 means "no edge"
    return float(dijkstra(w, directed=False, indices=0)[1])


# ----------------------------------------------------------------------------------------
# strategies
# ----------------------------------------------------------------------------------------

coord = st.floats(0.0, 100.0, allow_nan=False, allow_infinity=False)
sam_st = st.tuples(coord, coord, st.floats(1.0, 15.0))
point_st = st.tuples(coord, coord)
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ----------------------------------------------------------------------------------------
# 1. safety
# ----------------------------------------------------------------------------------------


@FAST
@given(sams=st.lists(sam_st, max_size=6), pts=st.lists(point_st, min_size=2, max_size=6))
def test_paths_never_enter_a_true_disk(sams, pts):
    field = SamField(sams)
    table = field.all_pairs(np.array(pts))
    n = len(pts)
    for i in range(n):
        for j in range(n):
            if pts[i] == pts[j]:
                assert table.dist[i, j] == 0.0
            elif field.inside_true(pts[i]):
                assert table.dist[i, j] == math.inf
            elif np.isfinite(table.dist[i, j]):
                path = table.path(i, j)
                assert_path_safe(path, sams)
                assert_path_well_formed(path, pts[i], pts[j])


def test_dense_field_all_paths_safe_and_consistent():
    rng = np.random.default_rng(7)
    sams = [
        (float(x), float(y), float(r))
        for x, y, r in zip(rng.uniform(0, 100, 10), rng.uniform(0, 100, 10), rng.uniform(3, 12, 10))
    ]
    pts = rng.uniform(0, 100, (60, 2))
    field = SamField(sams)
    table = field.all_pairs(pts)
    D = table.dist
    reach = ~np.array([field.inside_true(p) for p in pts])
    assert reach.sum() >= 40  # the instance is not degenerate
    finite = np.isfinite(D)
    assert finite[np.ix_(reach, reach)].mean() > 0.9
    for i in range(len(pts)):
        for j in range(len(pts)):
            if i != j and finite[i, j]:
                path = table.path(i, j)
                assert path.length == pytest.approx(D[i, j], rel=1e-12, abs=1e-12)
                assert_path_well_formed(path, pts[i], pts[j])
                if i < j:
                    assert_path_safe(path, sams)


# ----------------------------------------------------------------------------------------
# 2. unobstructed
# ----------------------------------------------------------------------------------------


@FAST
@given(p=point_st, q=point_st)
def test_no_sams_is_straight_line(p, q):
    assume(p != q)
    path = SamField([]).shortest_path(p, q)
    assert path is not None
    assert len(path.pieces) == 1 and isinstance(path.pieces[0], Line)
    # numpy's hypot and math.dist may differ in the last bit: compare to a few ulps.
    assert path.length == pytest.approx(math.dist(p, q), rel=1e-12, abs=1e-12)
    table = SamField([]).all_pairs(np.array([p, q]))
    assert table.dist[0, 1] == pytest.approx(math.dist(p, q), rel=1e-12, abs=1e-12)


def test_unobstructed_with_sams_is_straight_line():
    field = SamField([(50.0, 50.0, 10.0), (0.0, 100.0, 5.0)])
    p, q = (0.0, 0.0), (100.0, 10.0)
    path = field.shortest_path(p, q)
    assert path is not None
    assert len(path.pieces) == 1 and isinstance(path.pieces[0], Line)
    assert path.length == pytest.approx(math.dist(p, q), rel=1e-15)
    assert field.all_pairs(np.array([p, q])).dist[0, 1] == pytest.approx(math.dist(p, q), rel=1e-15)


# ----------------------------------------------------------------------------------------
# 3. single circle closed form
# ----------------------------------------------------------------------------------------


@FAST
@given(
    cx=st.floats(-50, 50),
    cy=st.floats(-50, 50),
    r=st.floats(0.5, 30.0),
    kp=st.floats(1.05, 6.0),
    kq=st.floats(1.05, 6.0),
    phi=st.floats(-math.pi, math.pi),
    frac=st.floats(0.05, 1.0),
)
def test_single_circle_closed_form(cx, cy, r, kp, kq, phi, frac):
    R = _R(r)
    dp, dq = kp * R, kq * R
    bp, bq = math.acos(R / dp), math.acos(R / dq)
    # Angular separation large enough that the straight line is blocked, at most pi.
    lo = bp + bq
    assume(lo < math.pi - 1e-3)
    delta = lo + frac * (math.pi - lo)
    p = (cx + dp * math.cos(phi), cy + dp * math.sin(phi))
    q = (cx + dq * math.cos(phi + delta), cy + dq * math.sin(phi + delta))
    # Tangent points on the side the path wraps around: their angular gap is theta.
    tp = phi + bp
    tq = phi + delta - bq
    theta = tq - tp
    expected = math.sqrt(dp**2 - R**2) + math.sqrt(dq**2 - R**2) + R * theta
    path = SamField([(cx, cy, r)]).shortest_path(p, q)
    assert path is not None
    assert path.length == pytest.approx(expected, abs=1e-9, rel=1e-12)
    kinds = [type(pc) for pc in path.pieces]
    assert kinds == [Line, Arc, Line]
    assert_path_safe(path, [(cx, cy, r)])


# ----------------------------------------------------------------------------------------
# 4. polygonal sandwich
# ----------------------------------------------------------------------------------------

SIDES = 40


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sams=st.lists(sam_st, min_size=1, max_size=4), p=point_st, q=point_st)
# two SAMs one to rounding: each lay "inside" the other, and no way went round them
@example(sams=[(0.0, 2.0, 1.0), (2.3413387101464644e-19, 2.0, 1.0)], p=(0.0, 0.0), q=(0.0, 4.0))
def test_exact_between_inscribed_and_circumscribed_polygons(sams, p, q):
    circles = [(x, y, _R(r)) for x, y, r in sams]
    slack = 1.0 / math.cos(math.pi / SIDES) + 1e-6
    for pt in (p, q):
        for x, y, R in circles:
            assume(math.dist(pt, (x, y)) > R * slack)
    assume(math.dist(p, q) > 1e-6)
    exact = SamField(sams).shortest_path(p, q)
    exact_len = math.inf if exact is None else exact.length
    upper = _polygon_detour(circles, p, q, SIDES, outer=True)
    lower = _polygon_detour(circles, p, q, SIDES, outer=False)
    assert exact_len <= upper + 1e-9
    if math.isfinite(exact_len):
        assert lower <= exact_len + 1e-9


def test_two_sams_equal_to_rounding_are_one_sam():
    one = SamField([(0.0, 2.0, 1.0)])
    twins = SamField([(0.0, 2.0, 1.0), (2.3413387101464644e-19, 2.0, 1.0)])
    for p, q in (((0.0, 0.0), (0.0, 4.0)), ((-3.0, 2.0), (3.0, 2.0)), ((0.0, 0.0), (2.0, 4.0))):
        alone, both = one.shortest_path(p, q), twins.shortest_path(p, q)
        assert alone is not None and both is not None
        assert both.length == pytest.approx(alone.length, rel=1e-12)


# ----------------------------------------------------------------------------------------
# 5. table properties
# ----------------------------------------------------------------------------------------


@FAST
@given(sams=st.lists(sam_st, max_size=6), pts=st.lists(point_st, min_size=2, max_size=8))
def test_table_symmetric_triangle_and_consistent(sams, pts):
    table = SamField(sams).all_pairs(np.array(pts))
    D = table.dist
    n = len(pts)
    assert D.shape == (n, n) and D.dtype == np.float64
    assert np.all(np.diag(D) == 0.0)
    assert np.array_equal(D, D.T)
    assert np.all(D >= 0.0)
    # Never shorter than the straight line.
    E = np.linalg.norm(np.array(pts)[:, None] - np.array(pts)[None], axis=2)
    assert np.all(D >= E - 1e-9)
    # Triangle inequality (inf-safe).
    via = D[:, :, None] + D[None, :, :]  # via[i, j, k] = D[i,j] + D[j,k]
    assert np.all(D[:, None, :] <= via + 1e-9)
    for i in range(n):
        for j in range(n):
            if i != j and np.isfinite(D[i, j]):
                path = table.path(i, j)
                assert path.length == pytest.approx(D[i, j], rel=1e-12, abs=1e-12)
                assert_path_well_formed(path, pts[i], pts[j])


def test_locate_heading_matches_direction_of_travel():
    field = SamField([(0.0, 0.0, 10.0), (25.0, 3.0, 6.0)])
    path = field.shortest_path((-30.0, 1.0), (45.0, -2.0))
    assert path is not None and any(isinstance(pc, Arc) for pc in path.pieces)
    h = 1e-6
    for s in np.linspace(0.01, path.length - 0.01, 50):
        x, y, heading = path.locate(float(s))
        x2, y2, _ = path.locate(float(s) + h)
        assert math.dist((x, y), (x2, y2)) == pytest.approx(h, rel=1e-3)
        direction = math.atan2(y2 - y, x2 - x)
        assert abs(math.remainder(direction - heading, 2 * math.pi)) < 1e-4


def test_concat_and_reverse():
    field = SamField([(0.0, 0.0, 10.0)])
    a = field.shortest_path((-30.0, 0.0), (0.0, 30.0))
    b = field.shortest_path((0.0, 30.0), (30.0, 0.0))
    assert a is not None and b is not None
    ab = Path.concat([a, b])
    assert ab.length == pytest.approx(a.length + b.length)
    assert ab.start == a.start and ab.end == b.end
    assert_path_well_formed(ab, a.start, b.end)
    table = field.all_pairs(np.array([(-30.0, 0.0), (30.0, 0.0)]))
    fwd, back = table.path(0, 1), table.path(1, 0)
    assert back.length == fwd.length == table.dist[0, 1]
    assert back.start == pytest.approx(fwd.end) and back.end == pytest.approx(fwd.start)
    with pytest.raises(PlannerError):
        Path.concat([])


def test_a_path_is_reversed_once_and_its_reverse_back_is_itself():
    # a leg the distance table keeps is read backwards by every round: made once, and equal
    # to the pieces reversed one by one
    field = SamField([(0.0, 0.0, 10.0)])
    leg = field.shortest_path((-30.0, 0.0), (0.0, 30.0))
    assert leg is not None
    back = leg.reversed()
    assert back is leg.reversed() and back.reversed() is leg
    fresh = Path(tuple(p.reversed() for p in reversed(leg.pieces)), leg.length)
    assert back == fresh and back.length == leg.length
    assert back.start == leg.end and back.end == leg.start
    # no cycle: a reversed path goes with its last reference, not at the cyclic collector's
    # next pass (which runs between ticks)
    gc.disable()
    try:
        made = Path.from_pieces([Line((0.0, 0.0), (2.0, 0.0))])
        gone = weakref.ref(made.reversed())
        del made
        assert gone() is None
    finally:
        gc.enable()
    # the cache is not pickled (a process pool's missions carry their legs)
    again = pickle.loads(pickle.dumps(back))
    assert again == back and again.reversed() == leg


# ----------------------------------------------------------------------------------------
# 6. corner cases
# ----------------------------------------------------------------------------------------


def test_planning_radius():
    assert planning_radius(1.0) == pytest.approx(1.05)
    assert planning_radius(10.0) == pytest.approx(10.1)
    assert planning_radius(20.0) == pytest.approx(20.2)


def test_target_in_buffer_ring_is_reachable_by_radial_escape():
    field = SamField([(0.0, 0.0, 10.0)])
    target = (10.02, 0.0)  # outside the true disk, inside the 10.1 km buffer
    assert not field.inside_true(target)
    path = field.shortest_path((30.0, 5.0), target)
    assert path is not None
    assert_path_safe(path, [(0.0, 0.0, 10.0)])
    assert_path_well_formed(path, (30.0, 5.0), target)
    # The last piece is the radial escape segment, run backwards.
    last = path.pieces[-1]
    assert isinstance(last, Line)
    assert last.start == pytest.approx((planning_radius(10.0), 0.0))
    # Round trip through the escape point, and to the other side around the circle.
    table = field.all_pairs(np.array([(30.0, 5.0), target, (-30.0, 0.0)]))
    assert np.all(np.isfinite(table.dist))
    for i in range(3):
        for j in range(3):
            if i != j:
                assert_path_safe(table.path(i, j), [(0.0, 0.0, 10.0)])


def test_target_whose_escape_lands_in_another_buffer_is_unreachable():
    # True disks 0.15 km apart; buffers (10.1 km) overlap. The escape of (10.02, 0) from
    # the first disk ends at (10.1, 0), inside the second buffered disk.
    field = SamField([(0.0, 0.0, 10.0), (20.15, 0.0, 10.0)])
    table = field.all_pairs(np.array([(10.02, 0.0), (40.0, 20.0)]))
    assert table.dist[0, 1] == math.inf and table.dist[1, 0] == math.inf
    assert table.dist[0, 0] == 0.0
    assert field.shortest_path((10.02, 0.0), (40.0, 20.0)) is None


def test_inside_true_many_asked_again_answers_the_same_and_new_points_their_own():
    field = SamField([(0.0, 0.0, 10.0), (40.0, 0.0, 5.0)])
    pts = np.array([(1.0, 2.0), (30.0, 0.0), (41.0, 1.0)])
    first = field.inside_true_many(pts)
    assert first.tolist() == [True, False, True]
    first[:] = False  # the caller's copy: the field's answer is not changed by it
    assert field.inside_true_many(pts.copy()).tolist() == [True, False, True]
    moved = pts[[1, 0, 2]].copy()  # an answer of its own (the last one would be wrong)
    assert field.inside_true_many(moved).tolist() == [False, True, True]
    assert field.inside_true_many(moved[:2]).tolist() == [False, True]
    assert field.inside_true_many(pts).tolist() == [True, False, True]


@settings(max_examples=60)
@given(
    sams=st.lists(
        st.tuples(st.floats(-50, 50), st.floats(-50, 50), st.floats(0.5, 20.0)),
        min_size=1,
        max_size=12,
    ),
    picks=st.lists(
        st.tuples(st.integers(0, 11), st.floats(0, 2 * math.pi), st.sampled_from([-1, 0, 1])),
        min_size=1,
        max_size=40,
    ),
)
def test_inside_true_many_through_the_grid_is_every_disk_tested(sams, picks):
    """The true-disk test read through the buffered disks' grid answers as testing every
    disk does, for points on the true circles and a hair either side of them."""
    field = SamField(sams)
    pts = []
    for k, angle, side in picks:
        x, y = field.centers[k % field.centers.shape[0]]
        r = field.true_radii[k % field.centers.shape[0]] + side * 2e-7
        pts.append((x + r * math.cos(angle), y + r * math.sin(angle)))
    pts += [(x, y) for x, y in field.centers]  # the centres: inside
    points = np.array(pts)
    every = strictly_inside(points, field.centers, field.true_radii, TRUE_TOL).any(axis=1)
    assert field.inside_true_many(points).tolist() == every.tolist()
    assert field.inside_true_many(points)[-field.centers.shape[0] :].all()


def test_point_inside_true_disk_is_unreachable():
    field = SamField([(0.0, 0.0, 10.0)])
    inside = (1.0, 2.0)
    assert field.inside_true(inside)
    assert not field.inside_true((10.0, 0.0))  # on the circle is not strictly inside
    table = field.all_pairs(np.array([inside, (30.0, 0.0), (-30.0, 0.0)]))
    assert table.dist[0, 0] == 0.0
    assert np.all(np.isinf(table.dist[0, 1:])) and np.all(np.isinf(table.dist[1:, 0]))
    assert np.isfinite(table.dist[1, 2])
    assert field.shortest_path(inside, (30.0, 0.0)) is None
    same = field.shortest_path(inside, inside)
    assert same is not None and same.length == 0.0
    assert table.path(0, 0).length == 0.0
    with pytest.raises(PlannerError):
        table.path(0, 1)


def test_overlapping_sams_are_one_obstacle():
    sams = [(0.0, 0.0, 10.0), (15.0, 0.0, 10.0)]  # overlap in the strip 5 < x < 10
    field = SamField(sams)
    p, q = (7.5, 30.0), (7.5, -30.0)
    path = field.shortest_path(p, q)
    assert path is not None
    assert_path_safe(path, sams)
    pts = path.sample()
    # Around the union: the path leaves the strip between the two centres.
    assert pts[:, 0].min() < -10.0 or pts[:, 0].max() > 25.0
    # Never through the lens where the disks overlap.
    c = np.array([(0.0, 0.0), (15.0, 0.0)])
    d = np.linalg.norm(pts[:, None] - c[None], axis=2)
    assert np.all(d >= planning_radius(10.0) - 1e-6)
    # Independent check against the polygonal sandwich.
    circles = [(x, y, _R(r)) for x, y, r in sams]
    assert _polygon_detour(circles, p, q, SIDES, False) <= path.length + 1e-9
    assert path.length <= _polygon_detour(circles, p, q, SIDES, True) + 1e-9


@FAST
@given(
    sams=st.lists(sam_st, max_size=8),
    pts=st.lists(point_st, min_size=1, max_size=8),
    on_edge=st.integers(0, 7),
    tol=st.sampled_from([-1e-7, 0.0, 1e-7]),
)
def test_inside_any_through_the_grid_answers_as_every_disk_does(sams, pts, on_edge, tol):
    # the grid looks in the point's own cell only: points on and within a hair of an edge
    # (the escape test's -TOL) must still find their disk
    field = SamField(sams)
    points = np.array(pts, dtype=np.float64)
    if sams:
        k = on_edge % field.radii.shape[0]  # exact duplicates are dropped
        (x, y), r = field.centers[k], field.radii[k]
        rt = field.true_radii[k]
        edge = [(x + r + d, y) for d in (-2e-7, -5e-8, 0.0, 5e-8, 2e-7)]
        edge += [(x - rt + d, y) for d in (-2e-9, -1e-9, 0.0, 1e-9, 2e-9)]
        points = np.vstack([points, edge, [(x, y - r - 5e-8)]])
    want = strictly_inside(points, field.centers, field.radii, tol).any(axis=1)
    got = inside_any(points, field.centers, field.radii, tol, field.grid)
    assert got.tolist() == want.tolist()
    # the true disks, inside the buffered ones the grid was built for (the escape test's)
    want = strictly_inside(points, field.centers, field.true_radii, 1e-9).any(axis=1)
    got = inside_any(points, field.centers, field.true_radii, 1e-9, field.grid)
    assert got.tolist() == want.tolist()


def test_buffers_overlap_but_true_disks_do_not():
    # A 0.06 km gap between true disks: buffers (>= 0.05 each) close it for planning.
    sams = [(0.0, 0.0, 5.0), (10.06, 0.0, 5.0)]
    path = SamField(sams).shortest_path((5.03, 20.0), (5.03, -20.0))
    assert path is not None
    assert path.length > 2 * 20.0 + 1.0
    assert_path_safe(path, sams)


def test_point_enclosed_by_a_ring_is_unreachable():
    k, ring, r = 8, 10.0, 5.0  # neighbours 7.65 km apart < 2 r: the ring is closed
    sams = [
        (ring * math.cos(2 * math.pi * i / k), ring * math.sin(2 * math.pi * i / k), r)
        for i in range(k)
    ]
    field = SamField(sams)
    pts = np.array([(0.0, 0.0), (1.0, 1.0), (40.0, 0.0), (-40.0, 3.0)])
    table = field.all_pairs(pts)
    D = table.dist
    assert np.all(np.isinf(D[:2, 2:])) and np.all(np.isinf(D[2:, :2]))
    assert D[0, 1] == pytest.approx(math.sqrt(2.0))  # inside the ring, straight line
    assert np.isfinite(D[2, 3])
    assert_path_safe(table.path(2, 3), sams)


def test_nested_tangent_and_duplicate_sams():
    sams = [
        (0.0, 0.0, 10.0),
        (2.0, 0.0, 3.0),  # inside the first
        (0.0, 0.0, 10.0),  # duplicate
        (planning_radius(10.0) + planning_radius(4.0), 0.0, 4.0),  # buffered circles touch
    ]
    field = SamField(sams)
    p, q = (-5.0, 25.0), (5.0, -25.0)
    path = field.shortest_path(p, q)
    assert path is not None
    assert_path_safe(path, sams)
    assert_path_well_formed(path, p, q)
    # Same as the single big circle: the inner one and the duplicate change nothing, and
    # the touching circle is on the far side.
    single = SamField([(0.0, 0.0, 10.0)]).shortest_path(p, q)
    assert single is not None
    assert path.length == pytest.approx(single.length, rel=1e-12)


def test_query_point_exactly_on_buffered_circle():
    R = planning_radius(10.0)
    field = SamField([(0.0, 0.0, 10.0)])
    p = (0.0, R)
    path = field.shortest_path(p, (0.0, -R))
    assert path is not None
    assert path.length == pytest.approx(math.pi * R, rel=1e-9)
    assert_path_safe(path, [(0.0, 0.0, 10.0)])


def test_coincident_query_points():
    field = SamField([(0.0, 0.0, 10.0)])
    pts = np.array([(20.0, 0.0), (20.0, 0.0), (-20.0, 0.0)])
    table = field.all_pairs(pts)
    assert table.dist[0, 1] == 0.0
    assert table.dist[0, 2] == pytest.approx(table.dist[1, 2], rel=1e-12)
    assert table.path(0, 1).length == 0.0


def test_sample_sagitta_bound():
    arc = Arc((0.0, 0.0), 100.0, 0.0, math.pi)
    path = Path.from_pieces([arc])
    for sag in (0.5, 0.01):
        pts = path.sample(sag)
        mids = 0.5 * (pts[1:] + pts[:-1])
        depth = 100.0 - np.linalg.norm(mids, axis=1)
        assert depth.max() <= sag + 1e-12
        assert np.linalg.norm(pts[-1] - np.array(arc.end)) < 1e-12


def test_path_table_type_and_lazy_paths():
    field = SamField([(50.0, 50.0, 10.0)])
    pts = np.array([(0.0, 50.0), (100.0, 50.0), (50.0, 0.0)])
    table = field.all_pairs(pts)
    assert isinstance(table, PathTable)
    p = table.path(0, 1)
    assert p is table.path(0, 1)  # cached
    assert p.length == pytest.approx(table.dist[0, 1])


@FAST
@given(
    sams=st.lists(sam_st, max_size=8),
    points=st.lists(point_st, min_size=1, max_size=12),
    workers=st.integers(2, 3),
)
def test_a_field_built_and_queried_on_threads_is_one_threads_field(sams, points, workers):
    # The bitangents (and their count) and the query points' entries are shared out to
    # threads by rows (a swarm's 500 SAMs, 7,000 points); joined in row order they must be
    # the very arrays one thread makes: node numbers, entries, their order.
    from planner.geometry import _static, sam_field

    with (
        mock.patch.object(_static, "THREADED_DISKS", 1),
        mock.patch.object(sam_field, "THREADED_POINTS", 1),
    ):
        one, many = SamField(sams), SamField(sams, workers)
        counted = _static.count_static_nodes(many.centers, many.radii, many.grid, workers)
        pts = np.array(points, dtype=np.float64)
        ones, manys = one.queries(pts), many.queries(pts, workers)
    assert counted == one.static_nodes
    for a, b in zip(one.static, many.static, strict=True):
        assert np.array_equal(a, b)
    for a, b in zip((*ones.ent, ones.side, ones.labels), (*manys.ent, manys.side, manys.labels)):
        assert np.array_equal(a, b)


@FAST
@given(sams=st.lists(sam_st, max_size=6))
def test_the_counted_graph_is_the_built_one_and_is_remembered_per_sam_set(sams):
    # every replan's compile checks the budgets with the count (planner.mission): the count
    # is the graph a field builds, and the same SAMs (as any sequence) are counted once
    counted = static_nodes(sams)
    assert counted == SamField(sams).static_nodes
    with mock.patch("planner.geometry.sam_field.count_static_nodes") as count:
        assert static_nodes([list(s) for s in sams]) == counted
    count.assert_not_called()
    # so few SAMs are counted by building their field, and the compile that follows the
    # count takes that field (in any order of the SAMs) instead of building it again
    with mock.patch("planner.geometry.sam_field.build_static") as build:
        field = field_of(list(reversed(sams)))
    build.assert_not_called()
    assert field.static_nodes == counted


def test_a_field_asked_for_by_two_threads_at_once_is_built_once():
    # a pop-up's SAMs are asked for by the round's budget check and the safety layer's known
    # field at the same moment: one builds, the other waits for it; a failed build fails
    # both, and the next ask builds again
    import threading

    from planner.geometry import sam_field

    started, release = threading.Event(), threading.Event()
    built = []
    real = sam_field.SamField

    def slow(sams, workers=1):
        built.append(workers)
        started.set()
        release.wait(10)
        return real(sams, workers)

    sams = [(11.0, 12.0, 3.5), (40.0, 40.0, 6.25)]
    got: list[SamField] = []
    with mock.patch.object(sam_field, "SamField", slow):
        first = threading.Thread(target=lambda: got.append(field_of(sams, 2)))
        first.start()
        assert started.wait(10)
        second = threading.Thread(target=lambda: got.append(field_of(list(reversed(sams)))))
        second.start()
        second.join(0.2)  # it asks while the first builds: it waits, it does not build
        assert second.is_alive() and built == [2]
        release.set()
        first.join(10)
        second.join(10)
    assert built == [2] and len(got) == 2 and got[0] is got[1]

    boom = [(70.0, 12.0, 2.5)]
    with (
        mock.patch.object(sam_field, "SamField", side_effect=MemoryError("no room")),
        pytest.raises(MemoryError),
    ):
        field_of(boom)
    assert field_of(boom).static_nodes == SamField(boom).static_nodes


def test_a_graph_that_could_be_large_is_counted_without_being_built():
    # beyond STORED_COUNT_NODES at worst (four bitangents per pair of SAMs) the count keeps
    # O(1) memory: nothing is built, and it is the graph a field would build
    from planner.geometry import sam_field

    rng = np.random.default_rng(5)
    sams = [(*rng.uniform(0, 100, 2), rng.uniform(1, 4)) for _ in range(30)]
    with mock.patch.object(sam_field, "STORED_COUNT_NODES", 4 * 30 * 29 - 1):
        with mock.patch.object(sam_field, "build_static") as build:
            counted = static_nodes(sams)
        build.assert_not_called()
    assert counted == SamField(sams).static_nodes
