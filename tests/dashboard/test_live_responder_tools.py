"""The live question box's responder with its read-only tools (issue 25): a real ``isr run
--responder-tools`` with its dashboard answers ``POST /api/ask`` after calling the tools on
the run's world, each call an agent run under the responder's (``/api/agents``) and in the
trace store; the same run without the switch answers from the state alone."""

from __future__ import annotations

import json

import httpx

from executive.traces import TraceReader
from tests.dashboard.harness import AUTH, TIMEOUT, TOKEN, CliProcess

QUESTION = "How much fuel does D2 have left?"


def _ask(url: str) -> tuple[dict, list[dict]]:
    with httpx.Client(base_url=url, timeout=4 * TIMEOUT) as http:
        r = http.post("/api/ask", json={"question": QUESTION}, headers=AUTH)
        assert r.status_code == 200, r.text
        answer = r.json()
        runs = http.get("/api/agents").json()["runs"]
    return answer, runs


def _flat(nodes: list[dict]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for node in nodes:
        out[node["run_id"]] = node
        out.update(_flat(node["children"]))
    return out


def found_agent(runs: list[dict], run_id: str) -> str:
    return _flat(runs)[run_id]["agent"]


def _run(*extra: str, db: str = "none") -> tuple[dict, list[dict], str]:
    with CliProcess(
        "run", "scenarios/demo.json", "--port", "0", "--token", TOKEN, "--db", db,
        "--speed", "2", "--no-agents", *extra,
    ) as cli:  # fmt: skip
        url = cli.wait_for(r"dashboard: (http://\S+)").split("/?")[0]
        answer, runs = _ask(url)
    return answer, runs, url


def test_a_live_run_started_with_responder_tools_answers_after_calling_them(tmp_path):
    url = f"sqlite:///{tmp_path / 'isr.db'}"
    answer, runs, _ = _run("--responder-tools", db=url)
    assert answer["intent"] == "question" and "D2" in answer["answer"], answer
    root, responder, *tools = answer["agent_runs"]
    assert found_agent(runs, root) == "coordinator"
    assert len(tools) == 2, answer["agent_runs"]  # the rules engine's plan: overview, drone
    found = _flat(runs)
    assert found[responder]["agent"] == "responder"
    assert [found[t]["agent"] for t in tools] == ["tool:mission_overview", "tool:drone_state"]
    assert all(found[t]["parent_run_id"] == responder and found[t]["applied"] for t in tools)
    # the drone_state call read the live world: D2's fuel as the answer's state had it
    reader = TraceReader(url)
    try:
        [run] = reader.runs()
        rows = {r["run_id"]: r for r in reader.agent_runs(run["run_id"])}
        assert run["config"]["responder_tools"] is True
    finally:
        reader.close()
    assert {rows[t]["parent_run_id"] for t in tools} == {responder}
    drone = rows[tools[1]]
    assert drone["validated_output"]["arguments"] == {"drone": "D2"}
    result = json.loads(drone["raw_output"])
    assert result["ok"] is True and result["data"]["drone"] == "D2"
    assert f"{result['data']['fuel_left_km']:.1f}" in answer["answer"]


def test_without_the_switch_the_live_responder_has_no_tools():
    answer, runs, _ = _run()
    assert answer["intent"] == "question" and "D2" in answer["answer"], answer
    assert len(answer["agent_runs"]) == 2  # the coordinator and the responder only
    assert not [r for r in _flat(runs).values() if r["agent"].startswith("tool:")]
