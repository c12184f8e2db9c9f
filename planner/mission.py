"""A scenario compiled for the solvers: one node index, SAM-aware distances, per-drone facts.

Every solver (exact orienteering, allocation, team search, post-optimisation) and the
validator work on the same ``Mission``: nodes are the airports, the synthetic starts and the
targets that can be planned (not strictly inside a SAM); ``paths`` holds the SAM-avoiding
distance of every pair and the geometry of every leg, which the simulation flies.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

import numpy as np

from planner.errors import PlannerError
from planner.geodesy import planning_disks
from planner.geometry import DistanceTable, Path, PathTable, SamField
from planner.geometry.sam_field import field_of, static_nodes
from planner.limits import MAX_NODES, compile_problem
from planner.model import DroneConfig, Environment, Scenario

__all__ = [
    "Compile",
    "DroneSpec",
    "Mission",
    "MissionCompiler",
    "compile_mission",
    "compile_workers",
    "table_world",
]


@dataclass(frozen=True)
class DroneSpec:
    """One enabled drone as the solvers see it (node indices into ``Mission.node_ids``)."""

    id: str
    config: DroneConfig
    start: int
    ends: tuple[int, ...]
    budget: float
    eligible: tuple[int, ...]  # target nodes it may visit (sensor fits, not excluded)
    prefix: tuple[int, ...]  # frozen targets its route must begin with, in order

    @cached_property
    def can_visit(self) -> frozenset[int]:
        """``eligible`` as a set: a swarm's drone may have 5,000, and a test ``in`` the
        tuple scans them all (holding the GIL a planning worker shares with the tick).
        Drones with the same sensors share one tuple (``compile_mission``), and one set."""
        return _set_of(self.eligible)


# The sets made for the last eligibility tuples, by identity: a swarm's 1,000 drones share a
# few tuples, and a set of 5,000 each was 0.1 s of a round's Python at that size.
_SETS: dict[int, tuple[tuple[int, ...], frozenset[int]]] = {}
_SETS_KEPT = 64


def _set_of(eligible: tuple[int, ...]) -> frozenset[int]:
    hit = _SETS.get(id(eligible))
    if hit is not None and hit[0] is eligible:
        return hit[1]
    made = frozenset(eligible)
    if len(_SETS) >= _SETS_KEPT:
        _SETS.clear()
    _SETS[id(eligible)] = (eligible, made)  # the tuple is kept: its id cannot be reused
    return made


@dataclass
class Mission:
    """The compiled scenario every solver and the validator share.

    Nodes are indexed ``0..n-1`` (``node_ids[i]`` is the scenario id of node ``i``,
    ``index`` the way back): airports first, then synthetic starts, then the targets that can
    be planned. ``paths`` holds every SAM-avoiding leg; ``dist`` is its distance matrix.
    """

    scenario: Scenario
    node_ids: list[str]
    positions: np.ndarray  # (n, 2)
    scores: np.ndarray  # (n,), 0 for airports and starts
    target_nodes: tuple[int, ...]
    excluded_targets: list[str]  # strictly inside a true SAM disk
    drones: list[DroneSpec]
    sams: SamField
    paths: PathTable
    index: dict[str, int] = field(init=False)
    _routes: dict[tuple[int, ...], Path] = field(
        init=False, default_factory=dict, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        self.index = {node_id: i for i, node_id in enumerate(self.node_ids)}

    @property
    def environment(self) -> Environment:
        """The scenario's environment (airports, targets, SAMs)."""
        return self.scenario.environment

    @property
    def dist(self) -> np.ndarray:
        """(n, n) SAM-avoiding distances between nodes (km, ``inf`` where no way exists)."""
        return self.paths.dist

    def drone(self, drone_id: str) -> DroneSpec:
        """The enabled drone ``drone_id`` (``KeyError`` if there is none)."""
        return self._drone_by_id[drone_id]

    @cached_property
    def _drone_by_id(self) -> dict[str, DroneSpec]:
        # a swarm's round asks for each of its 1,000 drones: a scan each was 21 ms of it
        return {spec.id: spec for spec in self.drones}

    @cached_property
    def sensed(self) -> frozenset[int]:
        """The target nodes some drone may visit (its sensors fit). Drones of one sensor fit
        share one ``eligible`` tuple: each is read once, not 1,000 drones x 5,000 targets."""
        shared = {id(spec.eligible): spec.eligible for spec in self.drones}
        return frozenset(t for eligible in shared.values() for t in eligible)

    @cached_property
    def is_target(self) -> frozenset[int]:
        """``target_nodes`` as a set, for membership tests at swarm sizes."""
        return frozenset(self.target_nodes)

    @cached_property
    def airport_nodes(self) -> tuple[int, ...]:
        """Node indices of the airports, in scenario order."""
        return tuple(self.index[a.id] for a in self.environment.airports)

    def route_length(self, route: list[int]) -> float:
        """Length (km) of a node route, summed leg by leg."""
        return float(sum(self.dist[a, b] for a, b in zip(route, route[1:])))

    def search_legs(self, routes: Iterable[Sequence[int]]) -> None:
        """Search (and keep) the legs of ``routes`` now, leaving out pairs with no way: a
        round's worker does this for the plan in force beside the team search, whose
        kernels hold no GIL, so that its solution finds them (after a SAM change every leg
        is searched anew: 4,000 at 1,000 drones, a solution's 108-127 ms of Python after the
        search, 35 ms with them searched beside it)."""
        for route in routes:
            for a, b in zip(route, route[1:]):
                with contextlib.suppress(PlannerError):
                    self.paths.path(a, b)

    def route_path(self, route: Sequence[int]) -> Path:
        """The geometry of a whole route: its legs joined in order, joined once per
        mission (a round's plan has its 1,000 routes joined for its solution's polylines
        and again for its flights' commands)."""
        key = tuple(route)
        path = self._routes.get(key)
        if path is None:
            legs = [self.paths.path(a, b) for a, b in zip(key, key[1:])]
            path = Path.concat(legs)
            # a few plans' worth: the plan in force's mission lives on while tools and
            # what-ifs build route after route on it, and only a plan's own reuse is sought
            if len(self._routes) >= 4 * len(self.drones) + 64:
                self._routes.clear()
            self._routes[key] = path
        return path

    def ids(self, route: list[int]) -> list[str]:
        """Node indices to scenario ids."""
        return [self.node_ids[i] for i in route]

    def nodes(self, ids: list[str]) -> list[int]:
        """Scenario ids to node indices (``KeyError`` for an unknown id)."""
        return [self.index[node_id] for node_id in ids]


def _refuse_oversized(
    scenario: Scenario, sam_list: list[tuple[float, float, float]], workers: int = 1
) -> None:
    """PlannerError when the mission's table would break the budgets of ``planner.limits``
    (by size alone, or by the graph counted before it is built, on ``workers`` threads)."""
    env = scenario.environment
    nodes = len(env.airports) + len(env.synthetic_starts) + len(env.targets)
    worst = 4 * len(sam_list) * max(len(sam_list) - 1, 0)  # bitangent ends, at most
    if compile_problem(nodes, len(sam_list), worst) is not None:
        problem = compile_problem(nodes, len(sam_list), 0) or compile_problem(
            nodes, len(sam_list), static_nodes(sam_list, workers)
        )
        if problem is not None:
            raise PlannerError(problem)


def table_world(
    scenario: Scenario,
) -> tuple[dict[str, tuple[float, float, float]], dict[str, tuple[float, float]]]:
    """The SAMs (as the planner treats them: ``planning_disks``) and the named points
    (airports, synthetic starts, targets) of ``scenario``, as a ``DistanceTable`` takes them."""
    env = scenario.environment
    disks = planning_disks(env.sams, scenario.geo)
    points = {a.id: (a.x, a.y) for a in env.airports}
    points |= {key: (p.x, p.y) for key, p in env.synthetic_starts.items()}
    points |= {t.id: (t.x, t.y) for t in env.targets}
    return {s.id: disk for s, disk in zip(env.sams, disks, strict=True)}, points


def compile_workers() -> int:
    """Threads a run's compiles share by default: the cores this process may use, 1-4."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(4, cores))


class Compile(Protocol):
    """What turns a scenario into its mission: ``compile_mission``, or a run's
    ``MissionCompiler``."""

    def __call__(
        self, scenario: Scenario, *, reach: Mapping[str, float] | None = None
    ) -> Mission: ...


class MissionCompiler:
    """Compiles one run's missions on one incremental ``DistanceTable``: the first compile
    builds it, each later one recomputes only what changed since the one before (the
    drones' new starts at the cut, a target added or moved, the pairs a SAM edit may
    touch), so a replan pays for the change, not for the whole table (seconds at 1,000
    drones x 5,000 targets x 500 SAMs). Thread-safe: one compile at a time (the rounds' and
    the rebases' worker threads share it). The missions it returns are snapshots (later
    compiles leave them as they are) and equal a from-scratch ``compile_mission`` up to
    floating-point rounding in the distances (``DistanceTable``'s contract)."""

    def __init__(self, *, workers: int | None = None) -> None:
        # the kernels hold no GIL: the rows of a round's new starts on every core this
        # process may use (at 200 drones 66-78 ms on 2 threads against 101-145 on one,
        # live, and the replan's p95 from 500 to 451 ms)
        self.workers = workers if workers is not None else compile_workers()
        self._table: DistanceTable | None = None
        self._lock = threading.Lock()

    @property
    def table(self) -> DistanceTable | None:
        """The run's table (None before the first compile)."""
        return self._table

    def __call__(self, scenario: Scenario, *, reach: Mapping[str, float] | None = None) -> Mission:
        """The mission of ``scenario`` (``compile_mission`` on the run's table, with
        ``reach``)."""
        with self._lock:
            if self._table is None:
                # refused by the budgets before anything is built, as compile_mission is
                disks = planning_disks(scenario.environment.sams, scenario.geo)
                _refuse_oversized(scenario, disks, self.workers)
                sams, points = table_world(scenario)
                # a replan's cut adds a start per drone (the last cut's freed first): room
                # for them now, within the table's budget, so no replan grows the table
                spare = min(len(scenario.drone_configs), max(MAX_NODES - len(points), 0))
                self._table = DistanceTable(
                    sams, points, workers=self.workers, spare=spare, reach=reach
                )
            return compile_mission(scenario, table=self._table, reach=reach)


def compile_mission(
    scenario: Scenario,
    *,
    table: DistanceTable | None = None,
    workers: int = 1,
    lazy: bool = False,
    reach: Mapping[str, float] | None = None,
) -> Mission:
    """Index the nodes, compute all SAM-aware legs, and describe each enabled drone.

    With ``table``, the distances come from it: it is first brought to the scenario's SAMs
    and nodes (``DistanceTable.sync``: only what changed since its last mission is
    recomputed), and it keeps serving later compiles. ``workers`` threads share a full
    computation. With ``lazy``, the distance table is computed when ``dist`` is first read
    (``paths.rows`` gives a few rows before that: what ``feasibility_warnings`` reads), so a
    check that needs no plan does not pay for one. PlannerError when the table would break
    the budgets of ``planner.limits`` (its bytes, or the compile's estimated time).

    ``reach`` (with ``table``) maps synthetic starts to the fuel their drones have there: a
    start's distances are exact up to that km and more than it beyond (the straight km of
    nodes farther than it in a straight line, else a longer way's km or inf:
    ``DistanceTable``'s reach), as no way longer than the fuel is flown; a replan's ~780
    airborne starts then search only as far as their fuel.
    """
    env = scenario.environment
    # a geographic mission's SAMs as their geodesic covers (planner.geodesy), else as given
    sam_list = planning_disks(env.sams, scenario.geo)
    _refuse_oversized(scenario, sam_list, workers if table is None else table.workers)
    sams = field_of(sam_list, workers) if table is None else None
    node_ids = [a.id for a in env.airports] + list(env.synthetic_starts)
    positions = [(a.x, a.y) for a in env.airports]
    positions += [(p.x, p.y) for p in env.synthetic_starts.values()]
    first_target = len(node_ids)
    candidates = np.asarray([(t.x, t.y) for t in env.targets], dtype=np.float64).reshape(-1, 2)
    if table is not None:
        table.sync(*table_world(scenario), reach)
        sams = table.field
    assert sams is not None
    inside = sams.inside_true_many(candidates)
    excluded = [t.id for t, out in zip(env.targets, inside) if out]
    planned_targets = [t for t, out in zip(env.targets, inside) if not out]
    scores = [0.0] * len(node_ids)
    node_ids += [t.id for t in planned_targets]
    positions += [(t.x, t.y) for t in planned_targets]
    scores += [float(t.priority) for t in planned_targets]
    points = np.asarray(positions, dtype=np.float64).reshape(-1, 2)
    if table is None:
        paths = sams.all_pairs(points, workers, lazy=lazy)
    else:
        paths = table.path_table(node_ids)
    index = {node_id: i for i, node_id in enumerate(node_ids)}
    airport_ids = [a.id for a in env.airports]
    target_type = {t.id: t.type for t in planned_targets}
    # Eligibility by sensor type, with arrays: a swarm's drones x targets in Python would
    # make millions of objects (and garbage collections that stop every thread).
    type_names = sorted({t.type for t in planned_targets})
    type_code = {name: k for k, name in enumerate(type_names)}
    codes = np.array([type_code[t.type] for t in planned_targets], dtype=np.int64)
    target_index = np.arange(first_target, first_target + len(planned_targets))

    drones = []
    # one tuple per sensor fit, shared by the drones that have it: a swarm's 1,000 drones
    # x 5,000 targets would be 5 million ints made in a worker thread holding the GIL
    by_fit: dict[bytes, tuple[int, ...]] = {}
    for drone_id, config in scenario.enabled_drones().items():
        if config.start not in index:
            raise PlannerError(f"drone {drone_id}: unknown start {config.start!r}")
        senses = np.array([config.can_sense(name) for name in type_names], dtype=bool)
        fit = senses.tobytes()
        if fit not in by_fit:
            by_fit[fit] = tuple(target_index[senses[codes]].tolist()) if codes.size else ()
        eligible = by_fit[fit]
        frozen = config.frozen_route()[1:]
        prefix = tuple(index[node_id] for node_id in frozen if node_id in target_type)
        drones.append(
            DroneSpec(
                id=drone_id,
                config=config,
                start=index[config.start],
                ends=tuple(index[e] for e in config.end_options(airport_ids)),
                budget=float(config.fuel_budget),
                eligible=eligible,
                prefix=prefix,
            )
        )
    return Mission(
        scenario=scenario,
        node_ids=node_ids,
        positions=points,
        scores=np.asarray(scores, dtype=np.float64),
        target_nodes=tuple(range(first_target, len(node_ids))),
        excluded_targets=excluded,
        drones=drones,
        sams=sams,
        paths=paths,
    )
