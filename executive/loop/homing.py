"""A drone's way home for the fuel check: worked out in one search, and bounded without one.

``search`` finds the SAM-avoiding distances from a drone to every airport its fuel might
reach with one search (``SamField.rows``), and ``choose`` picks the way home the fuel check
takes: the nearest airport reached with the reserve on top, its allowed ends first, then
the nearest (ties by id), building the one leg chosen. Before, the check built a shortest
path per airport (50 airports at 500 SAMs: 13-35 ms on the tick).

``HomeBounds`` answers the fuel check of a holding drone without a search when it can be
sure of the answer. A holding drone flies a circle; when the circle's disk meets none of
the field's disks (grown as the searches grow them), the chord from where it is (Q) to
where the last search was made (P) is a way the search allows, so for every airport a, by
the triangle inequality, ``d(P, a) - |QP| <= d(Q, a) <= d(P, a) + |QP|``. Those intervals
decide the check whenever they are narrow enough:

* the check passes if the way home it would choose fits with the reserve and a period; the
  way chosen is the nearest airport the fuel reaches with the reserve among the allowed
  ends (if any does), else among the others;
* an allowed end whose upper bound the fuel covers with the reserve is surely reached, so
  the way chosen is no longer than the least such upper bound: if that fits, the check
  passes;
* if every allowed end's lower bound is beyond the fuel with its reserve, none is reached,
  and the same holds for the other airports.

Whenever the bounds cannot tell, the check searches, as it always did: the decisions are
the exact check's, only fewer searches are made. The rest of the plan the hold left (to
an airport, on a way the field allows) is one more upper bound, known from the moment a
swarm is paused, from where the hold began. Paused at 1,000 drones x 500 SAMs, the checks
of 154 near-critical drones took 144-174 ms on their ticks (bench/paused_fuel.py).

``StraightWays`` answers any drone's check (holding or flying) from the straight ways to
its nearest airports, for every drone of a check at once: a straight way that meets none
of the field's disks is the search's way, so its length is exact, and the check passes when
the nearest such way to an allowed end is reached with the reserve and fits with a period
(the way chosen is an allowed end no longer than it). Before, a swarm's first checks after
its fuel fell all searched (~780 drones at 1,000 airports x 500 SAMs: ~78 searches of 4-5 ms
a tick for a safety period).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit
from scipy.spatial import cKDTree

from planner.geometry import Path, SamField
from planner.geometry._disks import inside_any, segments_clear
from planner.geometry.contact import Disk, first_contact
from planner.geometry.margins import TOL
from planner.geometry.pieces import Line
from planner.geometry.sam_field import Queries
from planner.model import Airport
from sim import Flight

__all__ = [
    "AT_KM",
    "AirportIndex",
    "Found",
    "HomeBounds",
    "Nearest",
    "StraightWays",
    "choose",
    "search",
    "straight_ways",
    "warmup",
]

AT_KM = 1e-6  # km: a point this close to an airport is at it
_EDGE = 1e-6  # km: for rounding (a plan's legs run along the disks' edges; chords, sums)
# The nearest airports whose straight ways a check looks at: one allowed, reached and clear
# among them is enough; past them the check searches
STRAIGHT_K = 8


@dataclass(frozen=True)
class Nearest:
    """Points and their nearest airports (``AirportIndex.nearest``): the straight ``km``,
    nearest first, and which airports (``idx``, in the index's order), both (n, k)."""

    points: np.ndarray  # (n, 2)
    km: np.ndarray
    idx: np.ndarray

    def km_to_nearest(self, row: int) -> float:
        """The straight km from point ``row`` to its nearest airport (inf: none)."""
        return float(self.km[row, 0]) if self.km.shape[1] else math.inf


# Not nogil: asked on the tick once per drone whose path changed (~780 after a swarm's
# commit). The k-d tree's ball query released the GIL and waited to take it back from a
# planner's thread running Python, each time: the fuel check of a commit's tick took 90 ms
# (``bench/executive_ticks.py --airports 1000``).
@njit(cache=True)
def _first_within(pts: np.ndarray, x: float, y: float, tol: float) -> int:
    """The lowest index of ``pts`` (n, 2) within ``tol`` km of (x, y), or -1. Only points
    within twice ``tol`` by squared distance are measured with ``math.hypot`` (the answer's
    test, as before): ``hypot`` over 1,000 airports was ~12 us a drone, 9-15 ms of the first
    fuel check after a swarm's flights changed."""
    near = 4.0 * tol * tol
    for k in range(pts.shape[0]):
        dx, dy = pts[k, 0] - x, pts[k, 1] - y
        if dx * dx + dy * dy <= near and math.hypot(dx, dy) <= tol:
            return k
    return -1


class AirportIndex:
    """The known airports in a k-d tree, kept while the airports' list is the same object:
    the straight way to the nearest airport for many points at once, and the airport at a
    point. As Python loops over 1,000 airports for 784 holding drones these took 365-380 ms of
    every fuel check's tick (``bench/paused_fuel.py --airports 1000``)."""

    def __init__(self) -> None:
        self._of: Sequence[Airport] | None = None  # held: its id is not reused meanwhile
        self._tree: cKDTree | None = None
        self._ids: tuple[str, ...] = ()
        self._by_id: dict[str, Airport] = {}
        self._pts = np.zeros((0, 2))
        self._held: tuple[SamField, Sequence[Airport], np.ndarray] | None = None

    def _tree_of(self, airports: Sequence[Airport]) -> cKDTree | None:
        if self._of is not airports:
            pts = np.array([(a.x, a.y) for a in airports], dtype=np.float64).reshape(-1, 2)
            self._pts = pts
            self._tree = cKDTree(pts) if len(airports) else None
            self._ids = tuple(a.id for a in airports)
            self._by_id = {a.id: a for a in airports}
            self._of = airports
        return self._tree

    def by_id(self, airports: Sequence[Airport]) -> Mapping[str, Airport]:
        """``airports`` by id."""
        self._tree_of(airports)
        return self._by_id

    def at(self, airports: Sequence[Airport], point: tuple[float, float]) -> str | None:
        """The first of ``airports`` within ``AT_KM`` of ``point``, if one is."""
        if self._tree_of(airports) is None:
            return None
        k = _first_within(self._pts, float(point[0]), float(point[1]), AT_KM)
        return self._ids[k] if k >= 0 else None

    def nearest(
        self, airports: Sequence[Airport], points: np.ndarray, k: int = STRAIGHT_K
    ) -> Nearest:
        """Each of ``points``' (n, 2) ``k`` nearest airports (one tree query for them all)."""
        tree = self._tree_of(airports)
        n = points.shape[0]
        if tree is None:
            return Nearest(points, np.zeros((n, 0)), np.zeros((n, 0), dtype=np.int64))
        k = min(k, len(airports))
        km, idx = tree.query(points, k=k)
        return Nearest(
            points,
            np.asarray(km, dtype=np.float64).reshape(n, k),
            np.asarray(idx, dtype=np.int64).reshape(n, k),
        )

    def ids(self, airports: Sequence[Airport]) -> tuple[str, ...]:
        """``airports``' ids, in their order."""
        self._tree_of(airports)
        return self._ids

    def points(self, airports: Sequence[Airport]) -> np.ndarray:
        """``airports``' (x, y), in their order (n, 2)."""
        self._tree_of(airports)
        return self._pts

    def held(self, airports: Sequence[Airport], field: SamField) -> np.ndarray:
        """Bool per airport: within ``TOL`` of a disk of ``field`` (or inside one), where a
        search moves it onto the disk's edge (an escape); kept for the last field."""
        self._tree_of(airports)
        if self._held is None or self._held[0] is not field or self._held[1] is not airports:
            self._held = (field, airports, _near_disks(field, self._pts))
        return self._held[2]


@dataclass(frozen=True)
class Found:
    """The SAM-avoiding km from ``at`` to each airport a search considered (those not at
    ``at``, within the straight-line fuel when asked, outside every SAM, reachable)."""

    at: tuple[float, float]
    km: dict[str, float]
    queries: Queries | None  # the search's points: ``at`` first, then the airports in ``order``
    order: tuple[str, ...]
    inside: frozenset[str] = frozenset()  # airports left out for being inside a SAM


def search(
    field: SamField,
    at: tuple[float, float],
    fuel: float,
    airports: Sequence[Airport],
    *,
    within_fuel: bool = True,
) -> Found:
    """One search from ``at`` to the airports the fuel might reach (``within_fuel`` False:
    to every airport)."""
    x, y = at
    candidates = []
    for airport in airports:
        straight = math.hypot(airport.x - x, airport.y - y)
        if straight <= AT_KM:
            continue  # already there
        if within_fuel and straight > fuel + AT_KM:
            continue  # no way round is shorter than the straight line
        candidates.append(airport)
    if not candidates:
        return Found(at, {}, None, ())
    points = np.array([(a.x, a.y) for a in candidates], dtype=np.float64).reshape(-1, 2)
    inside = field.inside_true_many(points)
    held = frozenset(a.id for a, no in zip(candidates, inside, strict=True) if no)
    candidates = [a for a, no in zip(candidates, inside, strict=True) if not no]
    if not candidates:
        return Found(at, {}, None, (), held)
    queries = None
    if field.centers.shape[0] == 0:
        km = [math.hypot(a.x - x, a.y - y) for a in candidates]
    else:
        pts = np.array([(x, y), *((a.x, a.y) for a in candidates)], dtype=np.float64)
        queries = field.queries(pts)
        km = field.rows(queries, np.zeros(1, dtype=np.int64))[0, 1:].tolist()
    reached = {a.id: d for a, d in zip(candidates, km, strict=True) if math.isfinite(d) and d > 0}
    return Found(at, reached, queries, tuple(a.id for a in candidates), held)


def choose(
    field: SamField,
    found: Found,
    fuel: float,
    airports: Sequence[Airport],
    allowed: set[str],
    reserve_for: Callable[[float], float],
    *,
    within_fuel: bool = True,
) -> tuple[Airport, Path] | None:
    """The way home of ``found``: among the airports within ``fuel`` (any, ``within_fuel``
    False), those ``fuel`` reaches with ``reserve_for(km)`` on top first, then the
    ``allowed`` ends, then the nearest (ties by id); None when there is none."""
    by_id = {a.id: a for a in airports}
    ranked = sorted(
        (d + reserve_for(d) > fuel, key not in allowed, d, key)
        for key, d in found.km.items()
        if not (within_fuel and d > fuel)
    )
    for *_, key in ranked:
        airport = by_id[key]
        if found.queries is None:
            path: Path | None = Path((Line(found.at, (airport.x, airport.y)),), found.km[key])
        else:
            path = field.leg(found.queries, 0, found.order.index(key) + 1)
        if path is not None and path.length > 0.0:
            return airport, path
    return None


def _near_disks(field: SamField, points: np.ndarray) -> np.ndarray:
    """Bool per point: within ``TOL`` of a disk of ``field`` or inside one, where a search
    moves the point onto the disk's edge (``SamField.escape_points``)."""
    return inside_any(points, field.centers, field.radii, -TOL, field.grid)


@dataclass(frozen=True)
class StraightWays:
    """The straight ways from many points to each one's nearest airports (``straight_ways``):
    per point, the ``km`` to its nearest airports (nearest first), which they are, and whether
    each way is ``clear``: it meets none of the field's disks and neither end is on one, so
    the search's way there is this straight line, as long."""

    km: np.ndarray  # (n, k)
    idx: np.ndarray  # (n, k): indices into ``names``
    names: tuple[str, ...]  # the airports' ids
    clear: np.ndarray  # (n, k) bool

    def fits(
        self,
        row: int,
        fuel: float,
        allowed: set[str],
        reserve_for: Callable[[float], float],
        period: float,
    ) -> bool:
        """True only if the exact check from point ``row`` would find the way home it
        chooses within ``fuel`` with its reserve and ``period`` on top (False: search to
        know). The nearest clear way to an allowed end that the fuel reaches with the
        reserve bounds the way chosen (an allowed end, as near or nearer); when the straight
        ways (lower bounds) show no allowed end is reached, the nearest clear way to another
        airport bounds it."""
        km = self.km[row]
        if km.shape[0] == 0 or km[0] <= AT_KM:
            return False  # the search would leave that airport out: too near to tell

        def reached(d: float) -> bool:
            return d + reserve_for(d) <= fuel

        names = self.names
        other = math.inf  # the nearest clear way to another airport the fuel reaches
        maybe = False  # an allowed end the fuel may reach, round the SAMs
        for d, j, clear in zip(
            km.tolist(), self.idx[row].tolist(), self.clear[row].tolist(), strict=True
        ):
            if not reached(d - _EDGE):  # the kd-tree's and the search's roundings may differ
                # neither this one nor any farther one is reached (the reserve grows with the
                # way): if no allowed end is, the way chosen is another airport's, no longer
                # than ``other``
                return (
                    not maybe and other < math.inf and other + reserve_for(other) + period <= fuel
                )
            hi = d + _EDGE
            if names[j] in allowed:
                if clear and reached(hi):
                    return bool(hi + reserve_for(hi) + period <= fuel)
                maybe = True
            elif clear and reached(hi):
                other = min(other, hi)
        return False


def straight_ways(
    field: SamField, airports: Sequence[Airport], index: AirportIndex, near: Nearest
) -> StraightWays:
    """The straight ways from ``near``'s points to their nearest ``airports``: one segment
    test against the field's disks for them all (at 780 drones x 8 airports x 500 SAMs: a
    few ms)."""
    km, idx, points = near.km, near.idx, near.points
    names = index.ids(airports)
    n, k = km.shape
    if field.centers.shape[0] == 0:
        return StraightWays(km, idx, names, np.ones((n, k), dtype=bool))
    ends = index.points(airports)[idx].reshape(-1, 2)
    starts = np.repeat(points, k, axis=0)
    clear = segments_clear(starts, ends, field.centers, field.radii, TOL, field.grid)
    clear = clear.reshape(n, k) & ~_near_disks(field, points)[:, None]
    clear &= ~index.held(airports, field)[idx]
    return StraightWays(km, idx, names, clear)


@dataclass(frozen=True)
class _Known:
    """What a holding drone's check knows without a search: the ``km`` to airports from
    ``at``, a point of the circle of ``flight``, on ways ``field`` allows."""

    flight: Flight
    field: SamField
    at: tuple[float, float]
    km: Mapping[str, float]
    order: tuple[str, ...] = ()  # the airports the search considered (see ``Found``)
    inside: frozenset[str] = frozenset()


class HomeBounds:
    """Per holding drone, what its last search (and the plan its hold left) tells the fuel
    check without another; see the module's docstring. Counts the checks it answered."""

    def __init__(self) -> None:
        self._searched: dict[str, _Known] = {}
        self._kept: dict[str, _Known] = {}  # the rest of the plan left: one airport's km
        # (field, its disks a hair smaller): a plan's legs run along the disks' edges
        self._disks: tuple[SamField, tuple[Disk, ...]] | None = None
        self.bounded = 0  # checks the bounds answered
        self.straight = 0  # checks a clear straight way home answered (``StraightWays``)
        self.searched = 0  # ways home searched by the fuel check
        self.waited = 0  # paced: ways home left to a later tick (the check's budget spent)

    def keep_search(self, drone_id: str, flight: Flight, field: SamField, found: Found) -> None:
        """Remember a search on ``field`` from a point of the circle ``flight`` holds."""
        if clear_disk(flight, field):
            self._searched[drone_id] = _Known(
                flight, field, found.at, found.km, found.order, found.inside
            )

    def keep_plan(
        self, drone_id: str, flight: Flight, field: SamField, left: Path, airport_id: str | None
    ) -> None:
        """Remember the rest of the plan the hold on ``flight`` left (``left``, from where
        the circle begins), if it ends at ``airport_id`` and ``field`` allows it; once per
        hold, whatever it finds (``has_plan``)."""
        km: dict[str, float] = {}
        if airport_id is not None and clear_disk(flight, field):
            if self._disks is None or self._disks[0] is not field:
                shrunk = [
                    (float(x), float(y), float(r) - _EDGE)
                    for (x, y), r in zip(field.centers, field.radii, strict=True)
                ]
                self._disks = (field, tuple(shrunk))
            if first_contact(left, self._disks[1]) is None:
                km[airport_id] = left.length + _EDGE  # and the rounding of where it begins
        self._kept[drone_id] = _Known(flight, field, left.start, km)

    def has_plan(self, drone_id: str, flight: Flight, field: SamField) -> bool:
        """Whether the plan this hold left was looked at for ``field``."""
        known = self._kept.get(drone_id)
        return known is not None and known.flight is flight and known.field is field

    def fits(
        self,
        drone_id: str,
        flight: Flight,
        field: SamField,
        at: tuple[float, float],
        fuel: float,
        airports: Sequence[Airport],
        allowed: set[str],
        reserve_for: Callable[[float], float],
        period: float,
        index: AirportIndex,
    ) -> bool:
        """True only if the exact check would find the way home it chooses from ``at``
        within ``fuel`` with its reserve and ``period`` on top (False: search to know).
        ``index``: ``airports``' index (kept by the caller between checks)."""
        found = [
            k
            for k in (self._searched.get(drone_id), self._kept.get(drone_id))
            if k is not None and k.flight is flight and k.field is field
        ]
        if not found:
            return False
        x, y = at
        if index.at(airports, at) is not None:
            return False  # the search would leave that airport out: too near to tell
        lo: dict[str, float] = {}
        hi: dict[str, float] = {}
        for known in found:
            chord = math.hypot(x - known.at[0], y - known.at[1]) + _EDGE
            for key, d in known.km.items():
                hi[key] = min(hi.get(key, math.inf), d + chord)
        searched = self._searched.get(drone_id)
        if not any(k is searched for k in found):
            searched = None  # of another hold, or other SAMs
        if searched is not None:
            chord = math.hypot(x - searched.at[0], y - searched.at[1]) + _EDGE
            lo = {key: d - chord for key, d in searched.km.items()}

        def reached(km: float) -> bool:
            return km + reserve_for(km) <= fuel

        def nearest(group: list[str]) -> float:
            return min((hi[k] for k in group if k in hi and reached(hi[k])), default=math.inf)

        def fits(km: float) -> bool:
            return km + reserve_for(km) + period <= fuel

        best = nearest([k for k in hi if k in allowed])
        if best < math.inf:
            return fits(best)  # the way chosen is an allowed end no longer than ``best``
        # no allowed end surely reached: the others count only if none is reached at all
        if searched is None:
            return False
        by_id = index.by_id(airports)
        for key in allowed:  # any one that may be reached means a search: order is moot
            airport = by_id.get(key)
            if airport is None or airport.id in searched.inside:
                continue  # inside a SAM: left out for as long as the SAMs are these
            if airport.id in lo:
                if reached(max(lo[airport.id], 0.0)):
                    return False  # it may be reached: search to know
            elif airport.id not in searched.order and (
                math.hypot(airport.x - x, airport.y - y) <= fuel + AT_KM
            ):
                return False  # left out of that search, but maybe not of one from here
            # else: unreachable round the SAMs, or beyond the straight-line fuel
        best = nearest([k for k in hi if k not in allowed])
        return best < math.inf and fits(best)


def clear_disk(flight: Flight, field: SamField) -> bool:
    """Whether ``flight`` is a hold (one full circle) whose whole disk meets none of
    ``field``'s disks (as the field grows them: its ways round keep that far): a chord
    between two of its points is then a way the field allows."""
    if not flight.holding or len(flight.path.pieces) != 1:
        return False
    circle = flight.path.pieces[0]
    center, radius = getattr(circle, "center", None), getattr(circle, "radius", None)
    if center is None or radius is None:
        return False
    if field.centers.shape[0] == 0:
        return True
    c = field.centers
    gap = np.hypot(c[:, 0] - center[0], c[:, 1] - center[1]) - field.radii - radius
    return bool(gap.min() > 0.0)


def warmup() -> None:
    """Load (or compile) the kernels of ``straight_ways`` on a tiny world: loaded by the
    first fuel check that needs them, they took 14 ms of that check's tick."""
    airports = [Airport(id="a", x=0.0, y=0.0), Airport(id="b", x=10.0, y=0.0)]
    index = AirportIndex()
    near = index.nearest(airports, np.array([[0.0, 5.0]]))
    index.at(airports, (0.0, 0.0))
    straight_ways(SamField([(5.0, 0.0, 1.0)]), airports, index, near)
