"""Cut and freeze: the remainder a replan plans keeps what the first plan was planned with."""

from __future__ import annotations

import json

from executive.loop.cut import build_replan
from planner.geodesy import planning_disks
from planner.mission import compile_mission
from planner.scenario import parse_scenario
from sim import Sim
from tests.conftest import SCENARIOS


def test_a_geographic_missions_remainder_stays_geographic():
    """A replan of a geographic mission plans around the SAMs' geodesic covers, as its first
    plan did: the remainder keeps the mission's ``geo`` origin (it used to drop it, so live
    replans planned around the flat disks only)."""
    data = json.loads((SCENARIOS / "demo.json").read_text())
    data["geo"] = {"lat0": 60.0, "lon0": 10.0}
    scenario = parse_scenario(data, "demo-geo")
    sim = Sim(scenario, None)
    for _ in range(3):
        sim.step()
    problem = build_replan(sim.world, sim.tick + 10)
    assert problem.scenario.geo == scenario.geo
    known = sim.world.known_environment.sams
    mission = compile_mission(problem.scenario)
    expected = sorted(r for _, _, r in planning_disks(known, scenario.geo))
    flat = sorted(s.range for s in known)
    assert sorted(mission.sams.true_radii.tolist()) == expected
    assert expected != flat  # the covers are wider than the flat disks: the check can fail
