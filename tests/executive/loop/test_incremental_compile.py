"""A run's replans compile their missions on one incremental distance table
(``planner.mission.MissionCompiler``): each equals a from-scratch compile of the same
remainder, and a mission compiled earlier is left as it was."""

from __future__ import annotations

import numpy as np
import pytest

from executive.loop.cut import build_replan, start_reach
from planner.geometry._incremental import matrix_flags
from planner.mission import MissionCompiler, compile_mission
from planner.planning import plan_mission
from planner.scenario import load_scenario
from sim import Sim
from tests.conftest import SCENARIOS


def _same(a, b) -> None:
    assert a.node_ids == b.node_ids
    assert a.excluded_targets == b.excluded_targets
    assert [s.eligible for s in a.drones] == [s.eligible for s in b.drones]
    assert [s.budget for s in a.drones] == [s.budget for s in b.drones]
    assert np.array_equal(np.isinf(a.dist), np.isinf(b.dist))
    finite = np.isfinite(a.dist)
    assert np.allclose(a.dist[finite], b.dist[finite], rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("workers", [1, 3])  # the run's default: the cores it may use, 1-4
@pytest.mark.parametrize("name", ["demo", "new_target", "popup_sam", "lost_drone"])
def test_each_replans_mission_equals_a_compile_from_scratch(name, workers, monkeypatch):
    from planner.geometry import sam_field

    monkeypatch.setattr(sam_field, "THREADED_PAIRS", 0)  # threads even for these small ones
    scenario = load_scenario(SCENARIOS / f"{name}.json")
    mission = compile_mission(scenario)
    sim = Sim(scenario, plan_mission(mission, "efficient").solution, mission=mission)
    compile = MissionCompiler(workers=workers)
    kept = []
    capacities = set()
    for tick in (0, 60, 400, 1200, 2400, 4000):
        sim.run(until=tick)
        if sim.done:
            break
        remainder = build_replan(sim.world, tick, reserve=1.0).scenario
        got = compile(remainder)
        _same(got, compile_mission(remainder))
        # the search's checks of the matrix, made as it was copied: as the search's own
        assert got.paths.flags == matrix_flags(got.dist)
        kept.append((got, got.dist.copy()))
        assert compile.table is not None
        # room for a start per drone from the first compile: no replan grows (copies) it
        assert compile.table.capacity >= len(compile.table) + len(scenario.drone_configs) - len(
            remainder.environment.synthetic_starts
        )
        capacities.add(compile.table.capacity)
    assert len(kept) >= 3
    assert len(capacities) == 1
    for got, dist in kept:  # snapshots: later compiles did not touch them
        assert np.array_equal(got.dist, dist, equal_nan=True)


def test_a_mission_too_large_is_refused_before_the_table_is_built(monkeypatch):
    from planner import mission as module

    scenario = load_scenario(SCENARIOS / "demo.json")
    built = []
    monkeypatch.setattr(module, "compile_problem", lambda *args: "too large: budget x")
    monkeypatch.setattr(module, "DistanceTable", lambda *a, **k: built.append(1))
    with pytest.raises(module.PlannerError, match="too large"):
        MissionCompiler()(scenario)
    assert built == []


def test_a_replans_starts_are_exact_within_the_fuel_and_bounded_beyond_it():
    # ``start_reach``: each airborne drone's start and the fuel it has there (its budget is
    # less; the way-home check counts down from that fuel). A third of it here, so that
    # some nodes lie beyond.
    scenario = load_scenario(SCENARIOS / "demo.json")
    mission = compile_mission(scenario)
    sim = Sim(scenario, plan_mission(mission, "efficient").solution, mission=mission)
    sim.run(until=1200)
    problem = build_replan(sim.world, 1200, reserve=1.0)
    reach = start_reach(problem)
    airborne = {c.start_id: c.fuel for c in problem.checkpoints.values() if c.airborne}
    assert reach == airborne and set(reach) == set(problem.scenario.environment.synthetic_starts)
    short = {key: fuel / 3 for key, fuel in reach.items()}
    got = MissionCompiler()(problem.scenario, reach=short)
    exact = compile_mission(problem.scenario)
    beyond = 0
    for key, km in short.items():
        s = got.index[key]
        gap = got.positions - got.positions[s]
        out = gap[:, 0] ** 2 + gap[:, 1] ** 2 > km * km
        beyond += int(out.sum())
        inside = ~out & np.isfinite(exact.dist[s])
        assert np.allclose(got.dist[s, inside], exact.dist[s, inside], rtol=1e-12, atol=1e-9)
        straight = np.hypot(gap[out, 0], gap[out, 1])
        assert np.allclose(got.dist[s, out], straight, rtol=1e-12)
        assert (got.dist[s, out] <= exact.dist[s, out] + 1e-9).all()
        assert np.array_equal(got.dist[s], got.dist[:, s])
    assert beyond > 0
