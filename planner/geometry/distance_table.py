"""``DistanceTable``: the SAM-aware distance table of named points, kept up to date as the
world changes, so that a replan pays for what changed and not for a recompile.

Contract
--------
* Points and SAMs are named (``str`` keys). ``apply(edit)`` takes one of ``AddPoint``,
  ``MovePoint``, ``RemovePoint``, ``AddSam``, ``MoveSam``, ``RemoveSam`` and returns an
  ``EditReport`` (what it recomputed, how long it took); ``sync(sams, points)`` applies the
  edits that turn the table's world into the one given.
* After any sequence of edits the table equals the one built from scratch on the same world
  (``DistanceTable(sams, points)``): distances to floating-point rounding (a pair kept from
  before was summed in another order), legs (``path``) exactly, since they are searched on
  the same graph (tests/planner/test_distance_table.py checks it over random edit sequences).
* What an edit recomputes: a new point its own row (one Dijkstra); a removed one nothing; a
  SAM added, moved or removed rebuilds the SAMs' tangent graph (bitangents: cheap), updates
  the points' entries where the disk meets them, redoes the points whose escape changed, and
  recomputes only the pairs whose path may meet the disk or could now pass where it was
  (``_affected``: straight-line bounds, and for a disk added a bound in the
  table's own distances through a point beside it), one Dijkstra per source of such pairs,
  each pair searched from whichever of its points has more.
* A point may have a ``reach`` (km; inf by default): a drone's start with that much fuel.
  A pair whose way is no longer than the smaller reach of its two points is exact. Beyond
  it, the pair holds more than that reach: the straight km when even that is farther (a
  lower bound of the way; inf when either point is unreachable; never searched), else the
  km of some way no shorter than the shortest, or inf (the point's entries and its
  searches stop at its reach). A way longer than the fuel is never flown, so nothing needs
  more. The table equals the one built from scratch with the same reaches on every pair
  but those last ones (tests/planner/test_distance_table.py).
* ``matrix(keys)`` and ``path_table(keys)`` are snapshots: later edits do not change them.
* Every kernel is numba ``nogil``; an edit holds the GIL only for its Python bookkeeping.
"""

from __future__ import annotations

import dataclasses
import heapq
import logging
import math
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from planner.errors import PlannerError
from planner.geometry._incremental import (
    affected_rows,
    bound_pairs,
    centre_distances,
    fewer_sources,
    gather,
    gather_rows,
    new_rows,
    splice_index,
    touch,
    way_bounds,
    write_pairs,
)
from planner.geometry._search import finish
from planner.geometry.margins import planning_radius
from planner.geometry.path import Path
from planner.geometry.sam_field import NO_DISK, EntryDelta, Queries, SamField, field_of
from planner.geometry.shares import even_cuts, in_shares, triangle_cuts
from planner.geometry.table import DistFlags, PathTable
from planner.scratch import is_free

log = logging.getLogger(__name__)

THREADED_ROWS = 256  # the fewest points a thread's share of the affected pairs is worth

__all__ = [
    "AddPoint",
    "AddSam",
    "DistanceTable",
    "EditReport",
    "MovePoint",
    "MoveSam",
    "PointEdit",
    "RemovePoint",
    "RemoveSam",
    "TableEdit",
    "warmup",
]

Sam = tuple[float, float, float]  # x, y, true range (km)


@dataclass(frozen=True)
class AddPoint:
    """A new point ``key`` at ``(x, y)`` (a target, an airport, a drone's start), its pairs
    exact within ``reach`` km (see the module's docstring)."""

    key: str
    x: float
    y: float
    reach: float = math.inf


@dataclass(frozen=True)
class MovePoint:
    """Point ``key`` is now at ``(x, y)``, its pairs exact within ``reach`` km."""

    key: str
    x: float
    y: float
    reach: float = math.inf


@dataclass(frozen=True)
class RemovePoint:
    """Point ``key`` is gone."""

    key: str


@dataclass(frozen=True)
class AddSam:
    """A new SAM ``key`` at ``(x, y)`` with true range ``range`` km."""

    key: str
    x: float
    y: float
    range: float


@dataclass(frozen=True)
class MoveSam:
    """SAM ``key`` is now at ``(x, y)`` with true range ``range`` km."""

    key: str
    x: float
    y: float
    range: float


@dataclass(frozen=True)
class RemoveSam:
    """SAM ``key`` is gone."""

    key: str


TableEdit = AddPoint | MovePoint | RemovePoint | AddSam | MoveSam | RemoveSam


PointEdit = AddPoint | MovePoint | RemovePoint


@dataclass(frozen=True)
class EditReport:
    """What an edit (or a batch of point or SAM edits) cost: the pairs it recomputed, from
    how many sources (one Dijkstra each), the points whose escape or reachability it redid,
    and the wall time."""

    edit: TableEdit | tuple[TableEdit, ...]  # a batch: of point edits, or of SAM edits
    pairs: int
    sources: int
    points_redone: int
    seconds: float


class DistanceTable:
    """SAM-aware shortest distances and legs between named points, updated edit by edit.

    ``sams`` maps SAM keys to ``(x, y, true range)``, ``points`` point keys to ``(x, y)``;
    ``workers`` threads share a full build (the kernels release the GIL); ``spare`` free
    slots are kept from the start for points added later (a run's replans add one start per
    drone: growing the table then copies all of it, 0.4 s at 5,000 targets).
    """

    def __init__(
        self,
        sams: Mapping[str, Sam] | None = None,
        points: Mapping[str, tuple[float, float]] | None = None,
        *,
        workers: int = 1,
        spare: int = 0,
        reach: Mapping[str, float] | None = None,
    ) -> None:
        self.workers = workers
        self._sams: dict[str, Sam] = {}
        for key, sam in (sams or {}).items():
            self._sams[key] = _checked_sam(key, sam)
        self.field = field_of(list(self._sams.values()), workers)
        pts = dict(points or {})
        cap = max(len(pts) + max(spare, 0), 8)
        self._pts = np.zeros((cap, 2))
        self._used = np.zeros(cap, dtype=bool)
        self._keys: list[str | None] = [None] * cap
        self._slot: dict[str, int] = {}
        self._reach = np.full(cap, math.inf)
        for slot, (key, xy) in enumerate(pts.items()):
            self._pts[slot] = _checked_point(key, xy)
            self._used[slot] = True
            self._keys[slot] = key
            self._slot[key] = slot
            self._reach[slot] = _checked_reach(key, (reach or {}).get(key, math.inf))
        self._free = list(range(len(pts), cap))
        self._paths: dict[tuple[str, str], Path | None] = {}
        self._matrices = _Matrices()  # the snapshots' matrices (path_table)
        self._q = self._queries(self._pts, self._used)
        self._dist = np.empty((cap, cap))
        used = np.flatnonzero(self._used).astype(np.int64)
        self.field.fill_upper(self._q, self._dist, used, workers, self._reach)
        finish(self._dist, self._q.pts, self._q.esc_len, self._q.reachable)
        self._bound(used)

    # ----- reading ------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, key: object) -> bool:
        return key in self._slot

    @property
    def capacity(self) -> int:
        """Points the table holds before it must grow (and copy itself)."""
        return int(self._pts.shape[0])

    @property
    def keys(self) -> list[str]:
        """The points' keys, in slot order."""
        return [k for k in self._keys if k is not None]

    @property
    def sams(self) -> dict[str, Sam]:
        """The SAMs: key to ``(x, y, true range)``."""
        return dict(self._sams)

    def position(self, key: str) -> tuple[float, float]:
        """Where point ``key`` is."""
        p = self._pts[self._index(key)]
        return float(p[0]), float(p[1])

    def reach(self, key: str) -> float:
        """The km within which point ``key``'s pairs are exact (inf: all of them)."""
        return float(self._reach[self._index(key)])

    def reachable(self, key: str) -> bool:
        """False when point ``key`` is inside a SAM (or cannot escape its buffer)."""
        return bool(self._q.reachable[self._index(key)])

    def dist(self, a: str, b: str) -> float:
        """Shortest SAM-avoiding distance between points ``a`` and ``b`` (km; inf if none)."""
        return float(self._dist[self._index(a), self._index(b)])

    def matrix(self, keys: Sequence[str]) -> np.ndarray:
        """The distances between ``keys`` (in that order), a new array."""
        slots = np.array([self._index(k) for k in keys], dtype=np.int64)
        return np.asarray(gather(self._dist, slots))

    def path(self, a: str, b: str) -> Path:
        """The shortest path from ``a`` to ``b`` (PlannerError if there is none); for a
        pair whose way is beyond a point's reach, a way, or none.

        The leg is searched from the key that sorts first and reversed for the other
        direction, so a table and its rebuild from scratch choose the same one."""
        if a == b:
            return Path.point(self.position(a))
        first, second = (a, b) if a < b else (b, a)
        if (first, second) not in self._paths:
            self._paths[(first, second)] = self.field.leg(
                self._q, self._index(first), self._index(second)
            )
        leg = self._paths[(first, second)]
        if leg is None:
            raise PlannerError(f"point {b!r} is unreachable from point {a!r}")
        return leg if a == first else leg.reversed()

    def path_table(self, keys: Sequence[str]) -> PathTable:
        """A ``PathTable`` over ``keys`` (distances and lazy legs) that later edits leave
        as it is."""
        slots = np.array([self._index(k) for k in keys], dtype=np.int64)
        out = self._matrices.take(slots.size, most=self.capacity)
        dist, flags = _gather(self._dist, slots, self.workers, out)
        legs = _SnapshotLegs(self.field, self._q, slots, tuple(keys), self._paths)
        return PathTable(self._pts[slots].copy(), dist, legs, flags=flags)

    # ----- editing ------------------------------------------------------------------

    def apply(self, edit: TableEdit) -> EditReport:
        """Apply one edit (see the module's docstring); PlannerError if it names a key that
        does not exist (or one that does, for an addition), with the table unchanged."""
        started = time.perf_counter()
        match edit:
            case AddPoint() | MovePoint() | RemovePoint():
                return dataclasses.replace(self.apply_points([edit]), edit=edit)
            case AddSam(key, x, y, radius):
                if key in self._sams:
                    raise PlannerError(f"SAM {key!r} already exists")
                sams = {**self._sams, key: _checked_sam(key, (x, y, radius))}
                pairs, sources, redone = self._set_sams(sams)
            case MoveSam(key, x, y, radius):
                if key not in self._sams:
                    raise PlannerError(f"no SAM {key!r}")
                sams = {**self._sams, key: _checked_sam(key, (x, y, radius))}
                pairs, sources, redone = self._set_sams(sams)
            case RemoveSam(key):
                if key not in self._sams:
                    raise PlannerError(f"no SAM {key!r}")
                sams = {k: v for k, v in self._sams.items() if k != key}
                pairs, sources, redone = self._set_sams(sams)
        return EditReport(edit, pairs, sources, redone, time.perf_counter() - started)

    def apply_points(self, edits: Sequence[PointEdit]) -> EditReport:
        """Apply point edits together (the same table as one by one, for less): one pass
        over the points' entries and one row each for the points added or moved, their
        searches shared among the workers. What a replan needs when every flying drone's
        start has moved. PlannerError, with the table unchanged, if an edit names a key that
        does not exist (or one that does, for an addition) or a coordinate is not finite."""
        started = time.perf_counter()
        live = set(self._slot)
        gone: list[str] = []
        added: list[tuple[str, tuple[float, float], float]] = []
        for edit in edits:
            match edit:
                case AddPoint(key, x, y, reach):
                    if key in live:
                        raise PlannerError(f"point {key!r} already exists")
                    added.append((key, _checked_point(key, (x, y)), _checked_reach(key, reach)))
                    live.add(key)
                case MovePoint(key, x, y, reach):
                    if key not in live:
                        raise PlannerError(f"no point {key!r}")
                    gone.append(key)
                    added = [a for a in added if a[0] != key]
                    added.append((key, _checked_point(key, (x, y)), _checked_reach(key, reach)))
                case RemovePoint(key):
                    if key not in live:
                        raise PlannerError(f"no point {key!r}")
                    gone.append(key)
                    added = [a for a in added if a[0] != key]
                    live.discard(key)
        pairs, sources = self._set_points(
            [k for k in dict.fromkeys(gone) if k in self._slot], added
        )
        return EditReport(tuple(edits), pairs, sources, len(added), time.perf_counter() - started)

    def sync(
        self,
        sams: Mapping[str, Sam],
        points: Mapping[str, tuple[float, float]],
        reach: Mapping[str, float] | None = None,
    ) -> list[EditReport]:
        """Apply the edits that make the table's world ``sams`` and ``points`` (with
        ``reach``: points to the km their pairs are exact within, inf for those not named):
        the SAM edits as one batch (one field, one pass over the pairs any of them may
        touch: ten SAMs popping up at 1,000 drones were ten passes of 0.8 s), then the point
        edits as one batch (``apply_points``)."""
        edits = self.edits_to(sams, points, reach)
        reports = []
        changed = [e for e in edits if isinstance(e, AddSam | MoveSam | RemoveSam)]
        if len(changed) == 1:
            reports.append(self.apply(changed[0]))
        elif changed:
            started = time.perf_counter()
            after = dict(self._sams)
            for edit in changed:
                match edit:
                    case AddSam(key, x, y, radius) | MoveSam(key, x, y, radius):
                        after[key] = _checked_sam(key, (x, y, radius))
                    case RemoveSam(key):
                        after.pop(key, None)
            pairs, sources, redone = self._set_sams(after)
            took = time.perf_counter() - started
            reports.append(EditReport(tuple(changed), pairs, sources, redone, took))
        moved = [e for e in edits if isinstance(e, AddPoint | MovePoint | RemovePoint)]
        if moved:
            reports.append(self.apply_points(moved))
        return reports

    def edits_to(
        self,
        sams: Mapping[str, Sam],
        points: Mapping[str, tuple[float, float]],
        reach: Mapping[str, float] | None = None,
    ) -> list[TableEdit]:
        """The edits from the table's world to ``sams`` and ``points`` (``reach`` as in
        ``sync``): SAMs first (removed, moved, added), then points (removed, moved, added;
        a point whose reach changed is moved where it is)."""
        edits: list[TableEdit] = []
        edits += [RemoveSam(k) for k in self._sams if k not in sams]
        for key, (x, y, r) in sams.items():
            if key not in self._sams:
                edits.append(AddSam(key, float(x), float(y), float(r)))
            elif self._sams[key] != (float(x), float(y), float(r)):
                edits.append(MoveSam(key, float(x), float(y), float(r)))
        slot = self._slot
        edits += [RemovePoint(k) for k in slot if k not in points]
        # compared as arrays: a loop over 6,000 points was 24 ms of a 1,000-drone round's
        # compile (the same exact float comparisons; a NaN differs, and is refused later)
        keys = list(points)
        if not keys:
            return edits
        reach = reach or {}
        at = np.array([slot.get(key, -1) for key in keys], dtype=np.int64)
        xy = np.array([points[key] for key in keys], dtype=np.float64).reshape(-1, 2)
        reaches = np.array([reach.get(key, math.inf) for key in keys], dtype=np.float64)
        known = at >= 0
        was = at[known]
        same = np.zeros(len(keys), dtype=np.bool_)
        same[known] = (
            (self._pts[was, 0] == xy[known, 0])
            & (self._pts[was, 1] == xy[known, 1])
            & (self._reach[was] == reaches[known])
        )
        for n in np.flatnonzero(~same).tolist():
            x, y = xy[n].tolist()
            edit = MovePoint if known[n] else AddPoint
            edits.append(edit(keys[n], x, y, float(reaches[n])))
        return edits

    # ----- the work -----------------------------------------------------------------

    def _index(self, key: str) -> int:
        try:
            return self._slot[key]
        except KeyError:
            raise PlannerError(f"no point {key!r}") from None

    def _queries(self, pts: np.ndarray, used: np.ndarray) -> Queries:
        """Escapes, entries and labels of every slot (free slots are unreachable)."""
        eff, esc, reachable = self.field.escape_points(pts)
        reachable &= used
        esc_len = _escape_lengths(pts, esc)
        ent, side = self.field.entries(eff, reachable, limits=self._reach, workers=self.workers)
        return Queries(pts, eff, esc, esc_len, reachable, ent, side, self.field.labels(ent))

    def _grow(self) -> None:
        cap = self._pts.shape[0]
        new = max(8, cap + cap // 2)
        pts = np.zeros((new, 2))
        pts[:cap] = self._pts
        used = np.zeros(new, dtype=bool)
        used[:cap] = self._used
        self._reach = np.concatenate((self._reach, np.full(new - cap, math.inf)))
        dist = np.empty((new, new))
        dist[:cap, :cap] = self._dist
        self._pts, self._used, self._dist = pts, used, dist
        self._keys += [None] * (new - cap)
        for slot in range(cap, new):
            heapq.heappush(self._free, slot)
        q = self._q
        extra = new - cap
        ptr = np.concatenate((q.ent[0], np.full(extra, q.ent[0][-1], dtype=np.int64)))
        self._q = Queries(
            pts.copy(),
            np.concatenate((q.eff, np.zeros((extra, 2)))),
            np.concatenate((q.esc, np.full((extra, 2), np.nan))),
            np.concatenate((q.esc_len, np.zeros(extra))),
            np.concatenate((q.reachable, np.zeros(extra, dtype=bool))),
            (ptr, *q.ent[1:]),
            q.side,
            np.concatenate((q.labels, -1 - np.arange(extra))),
        )

    def _set_points(
        self, gone: list[str], added: list[tuple[str, tuple[float, float], float]]
    ) -> tuple[int, int]:
        """Free the slots of ``gone``, then put ``added`` in the lowest free slots, with
        their geometry and their rows. Returns (pairs, sources) recomputed."""
        freed = []
        for key in gone:
            slot = self._slot.pop(key)
            freed.append(slot)
            self._keys[slot] = None
            self._used[slot] = False
            self._pts[slot] = (0.0, 0.0)
            self._reach[slot] = math.inf
            heapq.heappush(self._free, slot)
        dropped = set(gone) | {key for key, _, _ in added}
        # a copy first (one C call, so atomic): missions compiled before share this dict
        # and may add legs to it from other threads while it is read
        kept = list(self._paths.items())
        self._paths = {k: v for k, v in kept if not dropped & set(k)}
        while len(self._free) < len(added):
            self._grow()
        new = []
        for key, xy, reach in added:
            slot = heapq.heappop(self._free)
            self._pts[slot] = xy
            self._reach[slot] = reach
            self._used[slot] = True
            self._keys[slot] = key
            self._slot[key] = slot
            new.append(slot)
        self._q = self._with_slots(np.unique(np.array(freed + new, dtype=np.int64)))
        slots = np.array(sorted(new), dtype=np.int64)
        if not slots.size:
            return 0, 0
        is_new = np.zeros(self._used.size, dtype=bool)
        is_new[slots] = True
        old = np.flatnonzero(self._used & ~is_new).astype(np.int64)
        # Each new point's row: every old point, and the new points after it, within reach
        # (a swarm's ~780 airborne starts x 5,000 targets: 0.9 s of rows on two threads,
        # most of it for targets farther than the drones' fuel)
        ptr, dests = new_rows(slots, old, self._pts, self._reach)
        graph = self.field.pairs(self._q, slots, ptr, dests, self.workers, self._reach)
        self._write_pairs(slots, ptr, dests, graph)
        self._bound(slots)
        self._dist[slots, slots] = 0.0
        return int(dests.size), int(slots.size)

    def _bound(self, slots: np.ndarray) -> None:
        """The pairs of ``slots`` beyond a reach: their straight km (``bound_pairs``). Every
        such pair has an end with a reach: those of ``slots``, or, when one of ``slots`` has
        none, every point that has one."""
        reach = self._reach
        finite = np.isfinite(reach[slots])
        todo = slots[finite]
        if not finite.all():
            todo = np.flatnonzero(self._used & np.isfinite(reach)).astype(np.int64)
        if todo.size:
            bound_pairs(self._dist, todo, self._used, self._pts, reach, self._q.reachable)

    def _with_slots(self, slots: np.ndarray) -> Queries:
        """The queries with the geometry of ``slots`` computed again (free slots: none), in
        new arrays: snapshots keep the old ones."""
        q = self._q
        slots = np.asarray(slots, dtype=np.int64)
        pts = self._pts[slots].copy()
        eff, esc, reachable = self.field.escape_points(pts)
        reachable &= self._used[slots]
        ent, side = self.field.entries(
            eff, reachable, limits=self._reach[slots], workers=self.workers
        )
        # Splice: each slot's entries from the old arrays, or from the new ones if redone.
        old_ptr, new_ptr = q.ent[0], ent[0]
        counts = np.diff(old_ptr).copy()
        counts[slots] = np.diff(new_ptr)
        start = old_ptr[:-1].copy()
        start[slots] = new_ptr[:-1] + old_ptr[-1]  # the new entries follow the old in the pool
        ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        take = splice_index(start, ptr)  # np.repeat held the GIL: ~10 ms a 7 M pool
        arrays = [
            np.concatenate((old, new))[take]
            for old, new in zip((*q.ent[1:], q.side), (*ent[1:], side))
        ]
        all_pts, effs, escs = q.pts.copy(), q.eff.copy(), q.esc.copy()
        all_pts[slots], effs[slots], escs[slots] = pts, eff, esc
        all_reachable = q.reachable.copy()
        all_reachable[slots] = reachable
        esc_len = q.esc_len.copy()
        esc_len[slots] = _escape_lengths(pts, esc)
        new_ent = (ptr, *arrays[:-1])
        return Queries(
            all_pts,
            effs,
            escs,
            esc_len,
            all_reachable,
            new_ent,
            arrays[-1],
            self.field.labels(new_ent),
        )

    def _affected(
        self,
        slots: np.ndarray,
        redo: np.ndarray,
        added: np.ndarray,
        removed: np.ndarray,
        anchors: np.ndarray,
        widths: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The pairs of ``slots`` a SAM edit may change (``affected_rows``, each pair once,
        the earlier slot the source), then each searched from whichever of its points has
        more (``fewer_sources``). The table's ``workers`` threads take equal shares of the
        pairs (row a has ``n - a - 1``) and their rows are joined in order: the same pairs
        as one thread's pass. Ten SAMs removed at 5,000 targets passed 12 million pairs by
        10 disks each (2.5 s)."""
        dist, pts, q, reach = self._dist, self._pts, self._q, self._reach
        n = slots.shape[0]
        to_added = centre_distances(slots, pts, added)
        low = way_bounds(slots, dist, pts, reach, added, to_added, anchors, widths)
        to_removed = centre_distances(slots, pts, removed)
        # a point's numbers side by side: the pair loop reads them for every other point
        low, to_added, to_removed = (np.ascontiguousarray(a.T) for a in (low, to_added, to_removed))

        def rows(lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            return affected_rows(
                lo, hi, slots, dist, pts, q.eff, q.reachable, redo, q.labels, added, removed,
                reach, q.esc_len, low, to_added, to_removed,
            )  # fmt: skip

        parts = max(1, min(self.workers, n // THREADED_ROWS))  # a small table: no thread
        pieces = in_shares(rows, triangle_cuts(n, parts))
        sources = np.concatenate([p[0] for p in pieces])
        shift = np.cumsum([0] + [p[2].size for p in pieces[:-1]])  # the dests before a share
        dests_ptr = np.concatenate(
            [np.zeros(1, np.int64), *(p[1][1:] + k for p, k in zip(pieces, shift))]
        )
        dests = np.concatenate([p[2] for p in pieces])
        return fewer_sources(sources, dests_ptr, dests, pts.shape[0])

    def _write_pairs(
        self, sources: np.ndarray, dests_ptr: np.ndarray, dests: np.ndarray, graph: np.ndarray
    ) -> None:
        """Store graph distances (CSR by source, like ``SamField.pairs``) as the table's."""
        q = self._q
        write_pairs(self._dist, sources, dests_ptr, dests, graph, self._pts, q.esc_len, q.reachable)

    def _set_sams(self, sams: dict[str, Sam]) -> tuple[int, int, int]:
        """Move to the SAMs ``sams`` (one or several changed): rebuild the tangent graph,
        update the entries, recompute the pairs any change may touch, in one pass. Returns
        (pairs, sources, points redone)."""
        old_field, old_q = self.field, self._q
        field = field_of(list(sams.values()), self.workers)
        self._sams = sams
        same_disks = np.array_equal(field.centers, old_field.centers) and np.array_equal(
            field.true_radii, old_field.true_radii
        )
        if same_disks:  # a duplicate came or went: the obstacles are the same
            return 0, 0, 0
        self.field = field
        self._paths = {}
        old_index = {
            (float(c[0]), float(c[1]), float(r)): k
            for k, (c, r) in enumerate(zip(old_field.centers, old_field.true_radii))
        }
        keys = [
            (float(c[0]), float(c[1]), float(r)) for c, r in zip(field.centers, field.true_radii)
        ]
        new_to_old = np.array([old_index.get(k, -1) for k in keys], dtype=np.int64)
        new_keys = set(keys)
        added = _buffered([k for k in keys if k not in old_index])
        removed = _buffered([k for k in old_index if k not in new_keys])
        was_full = np.array(
            [ko < 0 or bool(old_field.static.full[ko]) for ko in new_to_old], dtype=bool
        )
        eff, esc, reachable = field.escape_points(self._pts)
        reachable &= self._used
        redo = self._used & (
            (reachable != old_q.reachable)
            | np.any(eff != old_q.eff, axis=1)
            | (np.isnan(esc[:, 0]) != np.isnan(old_q.esc[:, 0]))
        )
        ptr, circ, ang, length = old_q.ent[:4]
        delta = EntryDelta(
            redo, ptr, circ, ang, length, old_q.side, new_to_old, was_full, added, removed
        )
        ent, side = field.entries(eff, reachable, delta, self._reach, self.workers)
        self._q = Queries(
            self._pts.copy(),
            eff,
            esc,
            _escape_lengths(self._pts, esc),
            reachable,
            ent,
            side,
            field.labels(ent),
        )
        slots = np.flatnonzero(self._used).astype(np.int64)
        anchors, widths = _anchors(added, self._pts, slots[old_q.reachable[slots]], old_field)
        sources, dests_ptr, dests = self._affected(slots, redo, added, removed, anchors, widths)
        graph = field.pairs(self._q, sources, dests_ptr, dests, self.workers, self._reach)
        self._write_pairs(sources, dests_ptr, dests, graph)
        self._bound(slots)  # reachability may have changed
        return int(dests.size), int(sources.size), int(redo.sum())


@dataclass(frozen=True)
class _SnapshotLegs:
    """Legs between the points ``slots`` (named ``keys``) of a table as it was (a
    ``LegSource``), kept in ``shared``: the table's own cache of legs by key pair when the
    snapshot was taken. The table replaces that dict, never edits it, when a change could
    alter a leg in it, so the legs a snapshot finds there are of its own geometry, and the
    next round's mission finds the legs of the plan in force made already (a swarm's round
    built 4,000 legs in Python, most of them the same as the round before)."""

    field: SamField
    queries: Queries
    slots: np.ndarray
    keys: tuple[str, ...]
    shared: dict[tuple[str, str], Path | None]

    def leg(self, i: int, j: int) -> Path | None:
        """The shortest path from the table's ``i``-th point to its ``j``-th: searched from
        the key that sorts first and reversed for the other direction, as
        ``DistanceTable.path`` does (the same leg whichever mission asks first)."""
        a, b = self.keys[i], self.keys[j]
        pair = (a, b) if a < b else (b, a)
        try:
            leg = self.shared[pair]
        except KeyError:
            first, second = (i, j) if a < b else (j, i)
            leg = self.shared[pair] = self.field.leg(
                self.queries, int(self.slots[first]), int(self.slots[second])
            )
        return leg if leg is None or a < b else leg.reversed()


class _Matrices:
    """Memory for the missions' matrices, used again once nothing holds it any more, with a
    spare one faulted in ahead, in the background: a swarm's matrix is 200-290 MB, and
    fresh memory cost its page faults on the round's critical path (a 1,000-drone round's
    copy took 190 ms of CPU into new memory, 50 ms into memory used before).

    A buffer is free when the pool's own reference is the only one left: every array made
    from it (the mission's matrix, any view of that) holds a reference to it, so while one
    lives the buffer is not handed out again. The pool follows the buffers in use (their
    missions hold them anyway: the plan in force's, the round's, the agents' and the
    rebases') and keeps at most ``spare`` free ones besides. After each ``take`` with no
    free buffer left of that size, a thread makes one (``prefault``: off for tests)."""

    def __init__(self, spare: int = 1, *, prefault: bool = True) -> None:
        self.spare = spare
        self.prefault = prefault
        self._pool: list[np.ndarray] = []
        self._lock = threading.Lock()
        self._making: threading.Thread | None = None

    def take(self, n: int, most: int = 0) -> np.ndarray:
        """An (n, n) float64 array nothing else holds (its contents are left over); a spare
        made after it fits ``most`` points (the table's capacity: a replan's mission adds
        a start per drone, and one made for the first mission's size would not fit it)."""
        need = n * n
        with self._lock:
            pool = self._pool
            free = [i for i in range(len(pool)) if is_free(pool, i)]
            fits = [i for i in free if pool[i].size >= need]
            if fits:  # the most recently used: its pages are the likeliest still in memory
                buf = pool.pop(fits[-1])
                free = [i if i < fits[-1] else i - 1 for i in free if i != fits[-1]]
            else:
                buf = np.empty(need)
            # the oldest free buffers beyond the spare ones go (their memory back to the OS)
            drop = set(free[: max(0, len(free) - self.spare)])
            self._pool = [b for i, b in enumerate(pool) if i not in drop]
            self._pool.append(buf)
            ready = any(
                self._pool[i].size >= need
                for i in range(len(self._pool) - 1)
                if is_free(self._pool, i)
            )
            making = None
            if self.prefault and not ready and self._making is None:
                # the next round's is about this size, a few targets more, or as large as
                # the table's room: a replan adds each drone's start (one made for the
                # first mission's size was too small: the first replan faulted in a new
                # matrix on its critical path, 0.14 s at 200 drones, 290 MB at 1,000)
                size = max(need + 64 * n, most * most)
                making = self._making = threading.Thread(
                    target=self._make, args=(size,), name="matrix-prefault", daemon=True
                )
        if making is not None:
            making.start()
        return buf[:need].reshape(n, n)

    def _make(self, size: int) -> None:
        buf = None
        try:
            buf = np.empty(size)
            touch(buf)
        except MemoryError:  # the next take allocates (and faults) its own, as before
            log.warning("no memory for a spare %d-entry matrix: the next round makes its own", size)
            buf = None
        finally:
            with self._lock:
                if buf is not None:
                    self._pool.append(buf)  # free, and the first a take will use
                self._making = None


def _gather(
    dist: np.ndarray, slots: np.ndarray, workers: int, out: np.ndarray
) -> tuple[np.ndarray, DistFlags]:
    """``dist[slots][:, slots]`` into ``out``, and the team search's checks of it made in
    the same pass (``DistFlags``, as ``matrix_flags``); ``workers`` threads share the rows."""
    n = slots.shape[0]
    row_sums = np.zeros(n)
    parts = max(1, min(workers, n // 256))  # a small table is not worth a thread
    cuts = even_cuts(n, parts)
    flags = np.zeros((parts, 3), dtype=np.bool_)
    flags[:, 2] = True  # all finite, until an infinity says otherwise

    def share(lo: int, hi: int) -> int:
        return int(gather_rows(dist, slots, out, lo, hi, row_sums, flags[cuts.index(lo)]))

    counts = in_shares(share, cuts)
    count = sum(int(c) for c in counts)
    has_nan = bool(flags[:, 0].any())
    total = 0.0
    for value in row_sums.tolist():  # the rows' sums in order, as matrix_flags adds them
        total += value
    mean = total / count if count else 1.0
    return out, (has_nan, bool(flags[:, 1].any()), bool(flags[:, 2].all()) and not has_nan, mean)


def _buffered(keys: list[tuple[float, float, float]]) -> np.ndarray:
    """The disks ``(x, y, true radius)`` as the graph buffers them, (k, 3)."""
    if not keys:
        return NO_DISK
    return np.array([(x, y, planning_radius(r)) for x, y, r in keys], dtype=np.float64)


def _anchors(
    disks: np.ndarray, pts: np.ndarray, candidates: np.ndarray, field: SamField
) -> tuple[np.ndarray, np.ndarray]:
    """Per disk ``(x, y, R)`` added, its anchor for ``way_bounds``: the nearest of the
    ``candidates`` (slots reachable in ``field``, the SAMs before the edit), with ``w`` its
    km to the disk's far side, when the disk of radius ``w`` round the centre is clear of
    ``field``'s disks (so is every segment from the anchor to a point of the disk); else -1.
    A pop-up next to a target has it as its anchor."""
    anchors = np.full(disks.shape[0], -1, dtype=np.int64)
    widths = np.zeros(disks.shape[0])
    if not candidates.size:
        return anchors, widths
    for k, (x, y, r) in enumerate(disks.tolist()):
        d = np.hypot(pts[candidates, 0] - x, pts[candidates, 1] - y)
        m = int(np.argmin(d))
        w = float(d[m]) + r
        gaps = np.hypot(field.centers[:, 0] - x, field.centers[:, 1] - y) - field.radii
        if not gaps.size or float(gaps.min()) > w + _CLEAR:
            anchors[k], widths[k] = candidates[m], w
    return anchors, widths


# How far beyond ``w`` the SAMs before an edit must be for an anchor: many times the graph's
# tolerance (a way may touch a disk within TOL), far below any margin.
_CLEAR = 1e-6


def _escape_lengths(pts: np.ndarray, esc: np.ndarray) -> np.ndarray:
    return np.where(
        np.isnan(esc[:, 0]), 0.0, np.hypot(esc[:, 0] - pts[:, 0], esc[:, 1] - pts[:, 1])
    )


def _checked_point(key: str, xy: Iterable[float]) -> tuple[float, float]:
    x, y = (float(v) for v in xy)
    if not (math.isfinite(x) and math.isfinite(y)):
        raise PlannerError(f"point {key!r}: coordinates must be finite")
    return x, y


def _checked_reach(key: str, reach: float) -> float:
    r = float(reach)
    if math.isnan(r) or r < 0.0:
        raise PlannerError(f"point {key!r}: reach must be a non-negative number of km")
    return r


def _checked_sam(key: str, sam: Iterable[float]) -> Sam:
    x, y, r = (float(v) for v in sam)
    if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(r)) or r < 0.0:
        raise PlannerError(f"SAM {key!r}: needs finite coordinates and a non-negative range")
    return x, y, r


def warmup() -> None:
    """Load (or compile) every kernel an edit uses, on a tiny world: the first load in a
    worker thread mid-run holds the GIL (seconds on a fresh cache), long enough to make a
    real-time tick late."""
    table = DistanceTable({"s": (5.0, 0.0, 1.0)}, {"a": (0.0, 0.0), "b": (10.0, 0.0)})
    table.apply(AddPoint("c", 5.0, 5.0))
    table.apply(MovePoint("c", 5.0, 6.0))
    table.apply(AddSam("t", 5.0, 8.0, 1.0))
    table.apply(MoveSam("t", 5.0, 9.0, 1.0))
    table.apply(RemoveSam("t"))
    table.apply(RemovePoint("c"))
    table.matrix(["a", "b"])
    table.path_table(["a", "b"])  # the copy, and the background page-faulting
    touch(np.empty(8))
    table.path("a", "b")
