"""A run's replans compile their missions on one incremental distance table
(``planner.mission.MissionCompiler``): each equals a from-scratch compile of the same
remainder, and a mission compiled earlier is left as it was."""

from __future__ import annotations

import numpy as np
import pytest

from executive.loop.cut import build_replan
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
