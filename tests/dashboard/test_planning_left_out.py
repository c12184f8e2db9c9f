"""The planning endpoints on a posted mission with a drone that cannot fly (its frozen legs
need more fuel than it has), through the real app (uvicorn on 127.0.0.1): the plan is made
for the rest of the fleet, status 200, and the answer names the drone left out and why."""

from __future__ import annotations

import copy
import json

import pytest

from tests.dashboard.harness import SCENARIOS
from tests.dashboard.test_agent_solve import dashboard, run_async

DEMO = json.loads((SCENARIOS / "demo.json").read_text())
WHY = "D1: its frozen legs alone need 30.4 km of fuel"


def _stuck() -> dict:
    configs = copy.deepcopy(DEMO["drone_configs"])
    configs["1"] |= {"fuelBudget": 5, "frozen_segments": [{"from": "A1", "to": "T8"}]}
    return configs


def _said(body: dict) -> None:
    """The drone left out is in ``left_out`` and a warning, never a solver's words."""
    assert list(body["left_out"]) == ["1"] and body["left_out"]["1"].startswith(WHY)
    assert any(w.startswith(f"left out of the plan: {WHY}") for w in body["warnings"])
    assert "enabled drone has no route" not in json.dumps(body)


@pytest.mark.parametrize(
    "message", ["Generate optimal routes", "why is T3 not visited?", "debug the plan"]
)
@run_async
async def test_agent_solve_plans_the_rest_of_the_fleet_and_names_the_drone(message):
    async with dashboard() as (_, http):
        r = await http.post(
            "/api/agent_solve",
            json={
                "user_message": message,
                "environment": DEMO["environment"],
                "drone_configs": _stuck(),
                "preferences": {"iterations": 300},
            },
        )
        assert r.status_code == 200, r.text
        body = r.json()
        _said(body)
        assert body["success"] is True
        if message.startswith("why"):  # a question about no plan is not answered by planning
            assert "No plan yet" in body["response"] and not body["routes"]
            return
        assert set(body["routes"]) == {"2", "3"} and body["total_points"] > 0
        if message.startswith("Generate"):
            assert f"Not planned: {WHY}" in body["response"]
        if message.startswith("debug"):
            assert "passes the validator" in body["response"]


@run_async
async def test_an_existing_solution_with_a_route_for_the_drone_is_answered_without_it():
    async with dashboard() as (_, http):
        first = await http.post(
            "/api/agent_solve",
            json={
                "user_message": "Generate optimal routes",
                "environment": DEMO["environment"],
                "drone_configs": _stuck(),
                "preferences": {"iterations": 300},
            },
        )
        routes = {d: {"route": r["route"]} for d, r in first.json()["routes"].items()}
        routes["1"] = {"route": ["A1", "T8", "A1"]}  # what it cannot fly
        r = await http.post(
            "/api/agent_solve",
            json={
                "user_message": "why is T3 not visited?",
                "environment": DEMO["environment"],
                "drone_configs": _stuck(),
                "existing_solution": {"routes": routes},
            },
        )
        assert r.status_code == 200, r.text
        body = r.json()
        _said(body)
        assert f'$.existing_solution.routes["1"] ignored: {WHY}' in " ".join(body["warnings"])
        assert set(body["routes"]) == {"2", "3"}


@run_async
async def test_an_optimiser_improves_the_rest_of_the_fleet():
    async with dashboard() as (_, http):
        r = await http.post(
            "/api/insert_missed_optimize",
            json={
                "environment": DEMO["environment"],
                "drone_configs": _stuck(),
                "solution": {"routes": {"2": {"route": ["A2", "A2"]}}},
            },
        )
        assert r.status_code == 200, r.text
        body = r.json()
        _said(body)
        assert "1" not in body["routes"] and body["points_delta"] > 0
        assert f"Not planned: {WHY}" in body["response"]
