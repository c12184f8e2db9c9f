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


def test_a_parked_drone_starts_from_the_first_airport_it_is_at():
    """The remainder starts a parked drone from the first airport (in the mission's order)
    within the tolerance of where it is: the box and then the distance, as before the
    airports were looked up for all drones at once."""
    data = json.loads((SCENARIOS / "demo.json").read_text())
    a1 = next(a for a in data["environment"]["airports"] if a["id"] == "A1")
    near = [
        # in the 1e-6 km box around A1 but farther than 1e-6 km: not there
        {"id": "A0", "x": a1["x"] + 0.9e-6, "y": a1["y"] + 0.9e-6},
        # within 1e-6 km of A1, and before it: the drones at A1 start from here
        {"id": "A9", "x": a1["x"] + 0.5e-6, "y": a1["y"]},
    ]
    data["environment"]["airports"] = near + data["environment"]["airports"]
    sim = Sim(parse_scenario(data, "demo-near"), None)
    problem = build_replan(sim.world, sim.tick + 10)
    starts = {d: c.start_id for d, c in problem.checkpoints.items()}
    assert starts == {"1": "A9", "2": "A2", "3": "A9"}
    assert not any(c.airborne for c in problem.checkpoints.values())
