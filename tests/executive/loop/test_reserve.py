"""The fuel reserve is one policy, kept by every plan from the first on and by the safety
layer: robust to one more SAM of the largest known size closing the way home; a drone whose
flight meets a known SAM turns home while a safe way still fits its fuel."""

from __future__ import annotations

import numpy as np
import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from executive.contracts import PlanVersionRecord
from executive.loop import Policy
from executive.loop.cut import build_replan, with_reserve
from executive.loop.policy import leak_plan_extra, leak_turn_extra
from sim import Sim
from tests.executive.loop.test_safety import _events, _fly, line_mission


def test_the_robust_reserve_covers_the_way_round_the_largest_known_sam():
    assert Policy(reserve="fixed").reserve_km([3.0, 7.0]) == 1.0
    assert Policy().reserve_km([]) == 1.0  # no SAM known: the base only
    assert Policy().reserve_km([3.0, 7.0]) == pytest.approx(1.0 + 0.6 * 7.0)
    assert Policy(fuel_reserve=2.0, detour_factor=0.5).reserve_km([4.0]) == 4.0


def test_with_reserve_takes_the_reserve_off_every_budget_and_nothing_else():
    scenario = line_mission()
    kept = with_reserve(scenario, 5.0)
    assert kept.drone_configs["1"].fuel_budget == scenario.drone_configs["1"].fuel_budget - 5.0
    assert kept.environment == scenario.environment
    assert with_reserve(scenario, 0.0) is scenario


def test_the_first_plan_keeps_the_reserve_the_replans_keep():
    # A1 -> T1 -> T2 -> A2 is 60.48 km: it fits the 61 km budget but not 61 - 1 km. Planned
    # on the full budget, the first replan would lose T2 and flying on would beat it.
    drones = {"1": {"fuelBudget": 61, "home_airport": "A1", "end_airport": "A2"}}
    targets = [
        {"id": "T1", "x": 20, "y": 0, "priority": 5, "type": "A"},
        {"id": "T2", "x": 45, "y": 3, "priority": 5, "type": "A"},
    ]
    _, sink, report = _fly(line_mission(drones=drones, targets=targets))
    first = next(r for r in sink.of(PlanVersionRecord) if r.trigger == "initial")
    route = first.solution["routes"]["1"]
    assert route["route"] == ["A1", "T1", "A2"]
    assert route["distance"] <= 61 - Policy().reserve_km([]) + 1e-9
    assert report.outcome.lost == []


def test_a_drone_whose_flight_meets_a_known_sam_turns_home_while_a_safe_way_fits():
    # No replans: the plan in force flies on towards S1, which closes the way to A2 for the
    # fuel left. Trusting its flight, the drone used to fly on, hold at S1 and run dry there;
    # it must turn back to A1 while that way still fits its fuel and the reserve.
    drones = {"1": {"fuelBudget": 64, "home_airport": "A1", "end_airport": "A2"}}
    sam = {"t": 30, "op": "add_sam", "id": "S1", "pos": [52.0, 0.0], "range": 6.0}
    _, sink, report = _fly(
        line_mission(drones=drones, timeline=[sam]),
        policy=Policy(batch_iterations=300, replan=False),
    )
    assert report.outcome.lost == []
    back = _events(sink, "RETURN_TO_BASE")
    assert back and back[0].payload["airport"] == "A1"
    assert back[0].payload["reserve"] == pytest.approx(Policy().reserve_km([6.0]))
    assert not _events(sink, "NO_SAFE_OPTION")
    assert report.outcome.drones["1"].status == "landed"


def test_the_cut_takes_what_a_further_leak_would_take_off_a_leaked_drones_budget_only():
    scenario = line_mission(
        drones={
            "1": {"fuelBudget": 100, "home_airport": "A1", "end_airport": "A2"},
            "2": {"fuelBudget": 100, "home_airport": "A2", "end_airport": "A2"},
        }
    )
    world = Sim(scenario, None).world
    problem = build_replan(world, 0, reserve=2.0, leaked={"1"}, leak_share=0.25)
    budgets = {d: c.fuel_budget for d, c in problem.scenario.drone_configs.items()}
    # parked at A1: no way home to fly, a quarter of its 100 km and the reserve (/ 1.75)
    extra = leak_plan_extra(0.25, 100.0, 0.0, 2.0)
    assert extra == pytest.approx(0.25 * 102 / 1.75)
    # far from home the flat quarter of its fuel is the smaller
    assert leak_plan_extra(0.25, 100.0, 90.0, 2.0) == pytest.approx(25.0)
    assert budgets == pytest.approx({"1": 100 - 2.0 - extra, "2": 100 - 2.0})
    assert problem.leak_extra == pytest.approx({"1": extra})
    assert build_replan(world, 0, reserve=2.0, leaked={"1"}).leak_extra == {}  # share 0


@settings(max_examples=300, deadline=None)
@given(
    share=st.floats(0.05, 0.5),
    reserve=st.floats(0.0, 10.0),
    airports=st.lists(st.tuples(st.floats(-50, 50), st.floats(-50, 50)), min_size=1, max_size=3),
    start=st.tuples(st.floats(-60, 60), st.floats(-60, 60)),
    stops=st.lists(st.tuples(st.floats(-80, 80), st.floats(-80, 80)), max_size=6),
    end=st.integers(0, 2),
)
def test_a_route_within_a_leaked_drones_budget_survives_a_further_leak_anywhere_on_it(
    share, reserve, airports, start, stops, end
):
    # The bound behind Policy.leak_share, in the open (the way home a straight line): a
    # route from ``start`` through ``stops`` to an airport, on the least fuel whose budget
    # (fuel - reserve - leak_plan_extra) it fits, keeps (1 - s) F(p) >= h(p) + r at every
    # point p: a further leak of that share of the fuel left there still leaves the way home.
    homes = np.array(airports, dtype=float)
    points = np.array([start, *stops, airports[end % len(airports)]], dtype=float)
    legs = np.hypot(*np.diff(points, axis=0).T)
    length = float(legs.sum())

    def home(p: np.ndarray) -> float:
        return float(np.hypot(*(homes - p).T).min())

    h0 = home(points[0])
    # the least fuel F with F - reserve - leak_plan_extra(F) = length: the extra is the
    # smaller of two linear bounds, so the least of the fuels each asks for
    a = share / (2.0 - share)
    fuel = min(
        (length + reserve) / (1.0 - share), (length + reserve + a * (reserve + h0)) / (1.0 - a)
    )
    assert fuel - reserve - leak_plan_extra(share, fuel, h0, reserve) == pytest.approx(length)
    flown = 0.0
    for i, leg in enumerate(legs):
        for t in np.linspace(0.0, 1.0, 21):
            p = points[i] + t * (points[i + 1] - points[i])
            left = fuel - flown - t * leg
            assert (1.0 - share) * left >= home(p) + reserve - 1e-6
        flown += leg


def test_a_leaked_drone_turns_home_while_a_further_leak_still_leaves_its_way_home():
    # With h km home and (1 - s) F = h + r exactly, the turn extra is all it keeps.
    extra = leak_turn_extra(0.25, 30.0, 2.0)
    fuel = 30.0 + 2.0 + extra
    assert 0.75 * fuel == pytest.approx(30.0 + 2.0)


def test_after_a_leak_the_drone_turns_home_keeping_what_a_further_leak_would_take():
    # No replans: the leak leaves 40 km, the plan needs more; the fuel check turns it home
    # while a quarter of its fuel could still leak without leaving it short of its way home.
    drones = {"1": {"fuelBudget": 70, "home_airport": "A1", "end_airport": "A2"}}
    leak = {"t": 40, "op": "set_fuel", "drone": "1", "fuel": 40.0}
    _, sink, report = _fly(
        line_mission(drones=drones, timeline=[leak]),
        policy=Policy(batch_iterations=300, replan=False),
    )
    back = _events(sink, "RETURN_TO_BASE")
    assert back
    turn = back[0].payload
    reserve = Policy().reserve_km([])
    assert turn["reserve"] >= reserve + leak_turn_extra(0.25, turn["needed"], reserve) - 1e-9
    assert 0.75 * turn["fuel"] >= turn["needed"] + reserve
    assert report.outcome.lost == []
    assert report.outcome.drones["1"].status == "landed"


def test_a_leaked_drone_flies_the_replan_made_under_the_rule_without_being_turned_home():
    # The leak leaves 40 km near A1; the replan keeps what the rule asks from its cut (less
    # than a quarter of 40 km near home) and plans T1 on the way back to A1 down to that.
    # The safety layer must hold the drone to what that plan keeps, not to the interim
    # quarter set at the leak: else it turns it home before T1.
    drones = {"1": {"fuelBudget": 70, "home_airport": "A1", "end_airport": "A2"}}
    leak = {"t": 40, "op": "set_fuel", "drone": "1", "fuel": 40.0}
    executive, sink, report = _fly(line_mission(drones=drones, timeline=[leak]))
    commit = [r for r in report.replans if r.status == "committed"]
    assert commit, report.replans
    assert 0.0 < executive.leak_reserve["1"] < 0.25 * 40.0  # the plan's, near home
    assert not _events(sink, "RETURN_TO_BASE")
    assert "T1" in report.outcome.drones["1"].collected
    assert report.outcome.drones["1"].status == "landed"


def test_a_fuel_safety_return_counts_as_a_safety_action():
    drones = {"1": {"fuelBudget": 70, "home_airport": "A1", "end_airport": "A2"}}
    leak = {"t": 40, "op": "set_fuel", "drone": "1", "fuel": 40.0}
    executive, sink, _ = _fly(
        line_mission(drones=drones, timeline=[leak]),
        policy=Policy(batch_iterations=300, replan=False),
    )
    assert _events(sink, "RETURN_TO_BASE")
    assert executive.safety.actions == len(_events(sink, "RETURN_TO_BASE")) >= 1


def test_a_drone_on_its_way_home_that_meets_a_new_sam_goes_round_it_not_holding_till_dry():
    # The leak sends D1 home to A1 (no replans); on its way a SAM is announced across it.
    # It used to hold at the SAM (it was "returning", so the fuel check skipped it) until
    # dry; it must take a new way home round the SAM.
    drones = {"1": {"fuelBudget": 70, "home_airport": "A1", "end_airport": "A2"}}
    leak = {"t": 40, "op": "set_fuel", "drone": "1", "fuel": 40.0}
    sam = {"t": 100, "op": "add_sam", "id": "S1", "pos": [3.0, 0.0], "range": 1.0}
    _, sink, report = _fly(
        line_mission(drones=drones, timeline=[leak, sam]),
        policy=Policy(batch_iterations=300, replan=False),
    )
    assert _events(sink, "RETURN_TO_BASE")
    assert report.outcome.lost == [], report.outcome.lost
    assert report.outcome.drones["1"].status == "landed"
    assert len(_events(sink, "SAFETY_RETURN")) >= 2  # home, then home again round S1


def test_a_drone_with_no_safe_option_runs_dry_clear_of_the_sams_not_inside_one():
    # Two overlapping SAMs announced ahead of D1 make a notch it is in, 0.5 km from its tip,
    # and neither airport is within its fuel round them. Every holding circle there meets one
    # of the two: it used to hold anyway and fly into it (a loss to a known SAM; harder-0026
    # with a smaller reserve). It must fly the way round them towards an airport instead,
    # and if it runs dry, run dry outside every known SAM.
    drones = {"1": {"fuelBudget": 62, "home_airport": "A1", "end_airport": "A2"}}
    notch = [
        {"t": 238, "op": "add_sam", "id": "S1", "pos": [52.0, 7.0], "range": 8.0},
        {"t": 238, "op": "add_sam", "id": "S2", "pos": [52.0, -7.0], "range": 8.0},
    ]
    _, sink, report = _fly(
        line_mission(drones=drones, timeline=notch),
        policy=Policy(batch_iterations=300, replan=False),
    )
    told = _events(sink, "NO_SAFE_OPTION")
    assert told and told[0].payload["action"].startswith("short of fuel, home to")
    assert report.outcome.drones["1"].lost_reason in (None, "fuel")  # never "sam"
    assert not [r for r in _events(sink, "drone_lost") if r.payload["reason"] == "sam"]


def test_the_way_home_check_with_the_fixed_reserve_is_refused_not_silently_off():
    with pytest.raises(pydantic.ValidationError, match="home_check='full' needs reserve='robust'"):
        Policy(reserve="fixed", home_check="full")
    assert Policy(home_check="corridors").home_rule is not None
    assert Policy(reserve="fixed").home_rule is None
