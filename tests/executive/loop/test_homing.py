"""The fuel check's ways home: one search, bounds for holding drones, a budget when paced."""

from __future__ import annotations

import asyncio
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.engines import make_engine
from agents.planning.round import AgentPlanner
from executive.contracts import EventRecord, HumanCommand
from executive.loop import Executive, Policy
from executive.loop import safety as safety_module
from executive.loop.homing import (
    AT_KM,
    AirportIndex,
    HomeBounds,
    StraightWays,
    choose,
    search,
    straight_ways,
)
from executive.loop.options import LoopOptions
from executive.traces.sinks import ListSink
from planner.geometry import SamField
from planner.model import Airport
from planner.scenario import parse_scenario


def _reference(field, at, fuel, airports, allowed, reserve_for):
    """The fuel check's way home as it was: one shortest path per airport."""
    x, y = at
    found = []
    for airport in airports:
        straight = math.hypot(airport.x - x, airport.y - y)
        if straight <= 1e-6 or straight > fuel + 1e-6:
            continue
        if field.inside_true((airport.x, airport.y)):
            continue
        path = field.shortest_path((x, y), (airport.x, airport.y))
        if path is None or path.length <= 0.0 or path.length > fuel:
            continue
        short = path.length + reserve_for(path.length) > fuel
        found.append((short, airport.id not in allowed, path.length, airport.id))
    return min(found) if found else None


_coord = st.floats(-40.0, 40.0, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(
    sams=st.lists(st.tuples(_coord, _coord, st.floats(1.0, 8.0)), max_size=6),
    airports=st.lists(st.tuples(_coord, _coord), min_size=1, max_size=8),
    at=st.tuples(_coord, _coord),
    fuel=st.floats(5.0, 150.0),
    allowed_mask=st.integers(0, 255),
)
def test_one_search_finds_the_way_home_the_paths_to_each_airport_find(
    sams, airports, at, fuel, allowed_mask
):
    field = SamField(sams)
    if field.inside_true(at):
        return
    ports = [Airport(id=f"A{k}", x=x, y=y) for k, (x, y) in enumerate(airports)]
    allowed = {a.id for k, a in enumerate(ports) if allowed_mask >> k & 1}

    def reserve_for(km: float) -> float:
        return 2.0 + 0.1 * km

    want = _reference(field, at, fuel, ports, allowed, reserve_for)
    got = choose(field, search(field, at, fuel, ports), fuel, ports, allowed, reserve_for)
    if want is None:
        assert got is None
        return
    assert got is not None
    airport, path = got
    assert airport.id == want[3]
    assert path.length == pytest.approx(want[2], rel=1e-9, abs=1e-9)
    assert path.start == pytest.approx(at) and path.end == pytest.approx((airport.x, airport.y))


@settings(max_examples=80, deadline=None)
@given(
    sams=st.lists(st.tuples(_coord, _coord, st.floats(1.0, 8.0)), max_size=6),
    airports=st.lists(st.tuples(_coord, _coord), min_size=1, max_size=10),
    points=st.lists(st.tuples(_coord, _coord), min_size=1, max_size=5),
    fuel=st.floats(5.0, 150.0),
    period=st.floats(0.0, 10.0),
    allowed_mask=st.integers(0, 1023),
    on_airport=st.booleans(),
)
def test_a_clear_straight_way_is_the_searchs_and_passes_only_checks_the_search_passes(
    sams, airports, points, fuel, period, allowed_mask, on_airport
):
    # Where the fuel check trusts a straight way home without a search, the search would
    # have found that very length, and the way it chooses fits with the reserve and period.
    field = SamField(sams)
    ports = [Airport(id=f"A{k}", x=x, y=y) for k, (x, y) in enumerate(airports)]
    if on_airport:
        points = [*points, airports[0]]  # a drone at an airport: the search leaves it out
    allowed = {a.id for k, a in enumerate(ports) if allowed_mask >> k & 1}

    def reserve_for(km: float) -> float:
        return 2.0 + 0.1 * km

    index = AirportIndex()
    near = index.nearest(ports, np.array(points, dtype=np.float64), k=4)
    ways = straight_ways(field, ports, index, near)
    for row, at in enumerate(points):
        every = search(field, at, fuel, ports, within_fuel=False)
        for j in np.flatnonzero(ways.clear[row]):
            key, km = ways.names[ways.idx[row, j]], ways.km[row, j]
            if km > AT_KM:
                assert every.km[key] == pytest.approx(km, rel=1e-12, abs=1e-12)
        if ways.fits(row, fuel, allowed, reserve_for, period):
            got = choose(field, search(field, at, fuel, ports), fuel, ports, allowed, reserve_for)
            assert got is not None
            length = got[1].length
            assert length + reserve_for(length) + period <= fuel


def test_the_straight_way_decides_only_when_the_way_chosen_is_surely_no_longer():
    # A1 at 10 km behind a SAM, A2 at 12 km in the open: with A2 allowed its 12 km bound the
    # way chosen (A1 round the SAM, or A2); with only A1 allowed, nothing clear bounds it.
    field = SamField([(5.0, 0.0, 2.0)])
    ports = [Airport(id="A1", x=10.0, y=0.0), Airport(id="A2", x=0.0, y=12.0)]
    index = AirportIndex()
    ways = straight_ways(field, ports, index, index.nearest(ports, np.array([[0.0, 0.0]])))
    assert ways.clear[0].tolist() == [False, True]  # nearest first: A1, then A2

    def reserve_for(km: float) -> float:
        return 1.0

    assert ways.fits(0, 20.0, {"A1", "A2"}, reserve_for, 5.0)  # 12 + 1 + 5 <= 20
    assert not ways.fits(0, 17.0, {"A1", "A2"}, reserve_for, 5.0)  # 18 > 17: search
    assert not ways.fits(0, 50.0, {"A1"}, reserve_for, 5.0)  # A1's way is round the SAM
    assert not ways.fits(0, 10.5, {"A1", "A2"}, reserve_for, 0.0)  # even A1 is not reached


# A drone paused for good, holding next to a SAM, its fuel running down: its way home
# (round the SAM) is looked for again and again until it must turn home.
HELD = {
    "environment": {
        "airports": [{"id": "A1", "x": 0, "y": 0}, {"id": "A2", "x": 60, "y": 0}],
        "targets": [
            {"id": "T1", "x": 20, "y": 10, "priority": 5, "type": "A"},
            {"id": "T2", "x": 45, "y": -10, "priority": 5, "type": "A"},
        ],
        "sams": [{"id": "S1", "pos": [10.0, 3.0], "range": 2.5}],
    },
    "drone_configs": {
        k: {
            "fuelBudget": fuel,
            "home_airport": "A1",
            "end_airport": "A2",
            "accessibleTargets": "ALL",
        }
        for k, fuel in (("1", 90), ("2", 110), ("3", 130))
    },
    "sim": {"speed": 0.2},
}


def _held(policy: Policy, also=None, speed: float = 0.2) -> tuple[Executive, ListSink]:
    sink = ListSink()
    planner = AgentPlanner(make_engine("rules"), sink, iterations=300, use_agents=False)
    scenario = parse_scenario(HELD | {"sim": {"speed": speed}})
    executive = Executive(scenario, planner=planner, sink=sink, options=LoopOptions(policy=policy))

    def on_tick(result) -> None:
        if result.tick + 1 == 200:
            executive.command(HumanCommand("PAUSE"))
        if also is not None:
            also(executive, result)

    executive.watch(on_tick=on_tick)
    return executive, sink


def _safety_events(sink: ListSink) -> list[tuple[int, str, str]]:
    kinds = {"RETURN_TO_BASE", "NO_SAFE_OPTION", "PLAN_INFEASIBLE", "SAFETY_RETURN"}
    return [
        (r.tick, r.kind, repr(sorted(r.payload.items())))
        for r in sink.of(EventRecord)
        if r.kind in kinds
    ]


@pytest.mark.parametrize("straight", [False, True], ids=["bounds", "bounds-and-straight-ways"])
def test_a_holding_drones_bound_stands_for_the_exact_way_home_and_decides_the_same(
    monkeypatch, straight
):
    """Paused for good: with the bounds, the fuel check sends every drone home on the same
    tick, to the same airport, as the check that searches every time; it searches a few
    times instead of at every check, and every bound it trusted is at least the exact way.
    With the straight ways too (the drones hold near A1, in the open), those answer most."""
    exact, exact_sink = _held(Policy(batch_iterations=300))
    with monkeypatch.context() as m:
        m.setattr(HomeBounds, "fits", lambda *args: False)
        m.setattr(StraightWays, "fits", lambda *args: False)
        report_exact = asyncio.run(exact.run(None))
    if not straight:
        monkeypatch.setattr(StraightWays, "fits", lambda *args: False)

    # every check the bounds answered, with what the exact check would have found then
    checked: list[tuple[float, float]] = []  # (fuel, the exact way home + reserve + period)
    bounded, sink = _held(Policy(batch_iterations=300))
    surely = safety_module.Safety._surely_home  # noqa: SLF001

    def surely_home(self, drone_id, flight, fuel, period, **kwargs):
        sure = surely(self, drone_id, flight, fuel, period, **kwargs)
        if sure:
            way = self._way_home(drone_id)
            km = math.inf if way is None else way[1].length
            checked.append((fuel, km + self.host.reserve_for(drone_id, km) + period))
        return sure

    monkeypatch.setattr(safety_module.Safety, "_surely_home", surely_home)
    report = asyncio.run(bounded.run(None))

    assert _safety_events(sink) == _safety_events(exact_sink)
    assert [e for e in _safety_events(sink) if e[1] == "RETURN_TO_BASE"], "none turned home"
    for drone_id in ("1", "2", "3"):
        drone = report.outcome.drones[drone_id]
        assert drone.status == "landed" and drone.fuel_left >= 0
        assert drone == report_exact.outcome.drones[drone_id]
    homes, searched_every_time = bounded.safety.homes, exact.safety.homes
    # the same checks, each answered by a straight way, the bounds, or searched
    assert homes.bounded + homes.straight + homes.searched == searched_every_time.searched
    assert 5 * homes.searched < searched_every_time.searched, (homes.searched, homes.bounded)
    assert (homes.straight > 5 * homes.bounded) == straight, (homes.straight, homes.bounded)
    assert len(checked) == homes.bounded
    assert all(fuel >= needed for fuel, needed in checked)


def test_ways_home_past_the_budget_wait_at_most_a_period_and_no_drone_runs_dry(monkeypatch):
    """Paced with no budget at all, every way home a check must search waits for the ticks
    after it, never past the next check's tick; every drone still turns home in time."""
    monkeypatch.setattr(safety_module, "_FUEL_BUDGET_S", 0.0)
    pending: dict[str, int] = {}  # drone -> the tick its way home was first left for later
    waits: list[int] = []  # ticks from that to its search

    def watch(executive, result) -> None:
        for drone_id, first in executive.safety._fuel_due.items():  # noqa: SLF001
            pending.setdefault(drone_id, first)

    executive, sink = _held(Policy(batch_iterations=300), watch, speed=1.0)  # fewer ticks
    every = executive.policy.safety_every
    inner = safety_module.Safety._search_home  # noqa: SLF001

    def way(self, drone_id, **kwargs):
        if drone_id in pending:
            waits.append(self.host.sim.tick - pending.pop(drone_id))
        return inner(self, drone_id, **kwargs)

    monkeypatch.setattr(safety_module.Safety, "_search_home", way)
    report = asyncio.run(executive.run(400.0))  # paced, as fast as it goes

    assert executive.safety.homes.waited > 0
    assert waits and max(waits) <= every
    assert [e for e in _safety_events(sink) if e[1] == "RETURN_TO_BASE"]
    for drone in report.outcome.drones.values():
        assert drone.status == "landed" and drone.fuel_left >= 0


_COORD = st.floats(-50.0, 50.0, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(
    sites=st.lists(st.tuples(_COORD, _COORD), min_size=0, max_size=30),
    probes=st.lists(st.tuples(_COORD, _COORD), min_size=1, max_size=10),
    on_site=st.integers(0, 29),
)
def test_the_airports_index_answers_as_the_loops_over_every_airport(sites, probes, on_site):
    # The fuel check of a 1,000-airport swarm asks these for every holding drone: the
    # index must answer as the loops it replaces (the nearest straight km; the first airport
    # in the list within AT_KM of a point, co-located airports included).
    airports = [Airport(id=f"A{k}", x=x, y=y) for k, (x, y) in enumerate(sites)]
    if airports:
        sx, sy = sites[on_site % len(sites)]
        # a probe exactly at an airport, and either side of AT_KM from it
        probes = [*probes, (sx, sy), (sx + 0.9 * AT_KM, sy), (sx, sy - 1.5 * AT_KM)]
    index = AirportIndex()
    near = index.nearest(airports, np.array(probes, dtype=np.float64).reshape(-1, 2))
    for row, (x, y) in enumerate(probes):
        every = sorted(math.hypot(a.x - x, a.y - y) for a in airports)
        want = every[0] if every else math.inf
        assert near.km_to_nearest(row) == pytest.approx(want, rel=1e-12, abs=1e-12)
        # the k nearest, nearest first, and which airports they are
        assert near.km[row].tolist() == pytest.approx(every[: near.km.shape[1]], abs=1e-12)
        for j, km in zip(near.idx[row].tolist(), near.km[row].tolist(), strict=True):
            assert math.hypot(sites[j][0] - x, sites[j][1] - y) == pytest.approx(km, abs=1e-12)
        first = next((a.id for a in airports if math.hypot(a.x - x, a.y - y) <= AT_KM), None)
        assert index.at(airports, (x, y)) == first
    assert dict(index.by_id(airports)) == {a.id: a for a in airports}
