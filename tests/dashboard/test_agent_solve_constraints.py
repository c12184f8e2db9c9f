"""The operator's constraints through ``POST /api/agent_solve`` (issue 25), each class
honoured, refused with its reason, and resolved "last order wins" when two conflict; every
plan is verified by an independent checker (``tests.operator_check``) reading only the
scenario and the answered routes, never the coordinator's decision."""

from __future__ import annotations

import pytest

from tests.dashboard.test_agent_solve import DEMO, _solve, dashboard, run_async
from tests.operator_check import Expect, check_plan

pytestmark = pytest.mark.xdist_group("agent_solve_constraints")


def _ok(answer: dict, *expects: Expect, existing: dict | None = None) -> None:
    assert answer["success"], answer["response"]
    assert any(answer["allocation"].values())  # a plan that visits nothing honours anything
    for expect in expects:
        assert check_plan(expect, DEMO, answer, existing) == [], (expect, answer["routes"])
    assert answer["constraints_refused"] == [], answer["constraints_refused"]
    assert answer["constraints_applied"]


def _refused(answer: dict, reason: str) -> dict:
    assert answer["success"] is False
    [refusal] = [r for r in answer["constraints_refused"] if r["reason"] == reason]
    assert refusal["detail"]
    return refusal


@run_async
async def test_priority_thresholds_negations_and_reserve_are_honoured():
    async with dashboard() as (_server, http):
        only7 = await _solve(
            http, "Plan the mission visiting only targets with priority 7 or higher"
        )
        _ok(only7, Expect("min_priority", value=7))
        assert only7["constraints_applied"][-1] == "only priority >= 7 for every drone"
        d1 = await _solve(http, "D1 may not visit priority 4 targets")
        _ok(d1, Expect("not_priority", drone="1", value=4))
        for sentence in ("do not visit T4", "plan the mission without T4"):
            answer = await _solve(http, sentence)
            _ok(answer, Expect("forbid", target="T4"))
        reserve = await _solve(http, "keep 40 km in reserve")
        _ok(reserve, *(Expect("reserve", drone=d, value=40) for d in ("1", "2", "3")))


@run_async
async def test_impossible_constraints_are_refused_with_their_reason():
    async with dashboard() as (_server, http):
        fuel = await _solve(http, "D2 keeps 300 km in reserve")
        assert "300 km" in _refused(fuel, "fuel")["constraint"]
        sensor = await _solve(http, "move T5 to D1")  # D1 senses A, B; T5 is type C
        _refused(sensor, "sensor")
        sam = await _solve(http, "make sure T7 is visited")  # T7 lies inside SAM1
        _refused(sam, "excluded")
        keep = await _solve(http, "do not recompute routes")  # nothing posted to keep
        assert keep["success"] is False and keep["plan_changed"] is False
        assert "no existing solution" in keep["response"]


@run_async
async def test_conflicting_orders_the_last_wins_and_it_is_said():
    async with dashboard() as (_server, http):
        a = await _solve(http, "make sure T4 is visited, then do not visit T4")
        _ok(a, Expect("forbid", target="T4"))
        assert any("replaces require T4" in w for w in a["warnings"])
        b = await _solve(http, "do not visit T4, then make sure T4 is visited")
        _ok(b, Expect("require", target="T4"))
        assert any("require T4 replaces forbid T4" in w for w in b["warnings"])
        c = await _solve(http, "move T6 to D3 then D3 may not visit priority 4 targets")
        _ok(c, Expect("not_priority", drone="3", value=4), Expect("forbid", target="T6", drone="3"))
        assert any("replaces move T6 to D3" in w for w in c["warnings"])
        d = await _solve(http, "keep 20 km in reserve then keep 40 km in reserve")
        _ok(d, *(Expect("reserve", drone=x, value=40) for x in ("1", "2", "3")))
        assert any("keep 40 km in reserve for D1 replaces" in w for w in d["warnings"])


@run_async
async def test_on_an_existing_plan_keep_means_no_new_plan_and_a_move_changes_only_its_drones():
    async with dashboard() as (_server, http):
        planned = await _solve(http, "Generate optimal routes")
        keep = await _solve(
            http,
            "Optimize the mission to maximize points, but do not recompute routes",
            planned,
        )
        assert keep["success"] and keep["plan_changed"] is False
        assert check_plan(Expect("keep_routes"), DEMO, keep, planned) == []
        assert keep["coordinator_decision"]["constraints"]["keep"] == "routes"
        assert [e["agent"] for e in keep["trace"]["agent_runs"]] == ["coordinator", "responder"]
        for sentence in ("keep the allocation", "only reorder"):
            same = await _solve(http, sentence, planned)
            assert same["success"] and check_plan(Expect("keep_routes"), DEMO, same, planned) == []
        # an order that the kept plan cannot honour is refused with that reason, not dropped
        both = await _solve(http, "do not visit T4 and do not recompute routes", planned)
        assert any(
            r["constraint"] == "forbid T4 for D1" and "kept as it is" in r["detail"]
            for r in both["constraints_refused"]
        )
        # a move: a target of D2 that D3 can sense goes to D3; D1 keeps its route
        [target, *_] = [t for t in planned["allocation"]["2"]]
        move = await _solve(http, f"Move {target} from D2 to D3", planned)
        _ok(move, Expect("move", target=target, drone="3"), existing=planned)
        assert move["coordinator_decision"]["policy"]["use_existing_allocation"] is True
        assert move["routes"]["1"] == planned["routes"]["1"]  # not named: kept exactly
        # asked for a full replan, the move re-plans every drone
        full = await _solve(http, f"Move {target} from D2 to D3 and replan everything", planned)
        assert full["success"] and target in full["routes"]["3"]["route"]
        assert full["coordinator_decision"]["policy"]["use_existing_allocation"] is False


@run_async
async def test_a_question_with_no_plan_says_so_and_plans_nothing_in_secret():
    async with dashboard() as (_server, http):
        answer = await _solve(http, "Which drone has the most fuel margin?")
        assert answer["success"] and answer["intent"] == "question"
        assert answer["response"].startswith("No plan yet — plan first?")
        assert not any(answer["allocation"].values()) and answer["plan_changed"] is False
        assert "planning_round" not in answer["trace"]["agents"]
