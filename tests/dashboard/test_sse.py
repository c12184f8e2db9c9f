"""The answer's stages as Server-Sent Events, through the real app (uvicorn on 127.0.0.1) and
a real HTTP client: ``POST /api/agent_solve/stream`` on a posted mission and
``POST /api/ask/stream`` on a live run (the question crosses the bus to the mission's host
and its stages come back on ``answers``). The events come in seed 004's order, ``done``
carries what the plain route answers, and a failure is one ``error`` event that closes the
stream."""

from __future__ import annotations

import json

import httpx

from agents.words.stages import STAGE_EVENTS
from tests.dashboard.harness import AUTH, TIMEOUT, Frames, live_mission, telemetry
from tests.dashboard.test_agent_solve import _body, dashboard, run_async


async def _events(http: httpx.AsyncClient, path: str, body: dict, **kw) -> list[tuple[str, dict]]:
    """Every (event, data) of the stream, in order, read as the frames arrive."""
    out: list[tuple[str, dict]] = []
    async with http.stream("POST", path, json=body, **kw) as r:
        assert r.status_code == 200, await r.aread()
        assert r.headers["content-type"].startswith("text/event-stream")
        event = None
        async for line in r.aiter_lines():
            if line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("data: "):
                assert event is not None
                out.append((event, json.loads(line.removeprefix("data: "))))
                event = None
    return out


def _in_flow_order(names: list[str]) -> None:
    """plan first, one done or error last, every event one of 004's, and the message deltas
    after every tool call."""
    assert names[0] == "plan", names
    assert names[-1] in ("done", "error") and names.count(names[-1]) == 1, names
    assert set(names) <= set(STAGE_EVENTS), names
    if "message" in names:
        first = names.index("message")
        assert all(n == "message" for n in names[first:-1]), names
    starts = [i for i, n in enumerate(names) if n == "tool_call_start"]
    ends = [i for i, n in enumerate(names) if n == "tool_call_end"]
    assert len(starts) == len(ends) and all(s < e for s, e in zip(starts, ends, strict=True))


@run_async
async def test_agent_solve_stream_gives_the_stages_then_the_same_answer():
    async with dashboard() as (_, http):
        for words in ("Generate optimal routes", "Which drone has the most fuel margin?"):
            body = _body(words)
            events = await _events(http, "/api/agent_solve/stream", body)
            names = [e for e, _ in events]
            _in_flow_order(names)
            assert names[-1] == "done", events[-1]
            assert "tool_call_start" in names and "thinking" in names
            done = events[-1][1]["answer"]
            plain = (await http.post("/api/agent_solve", json=body)).json()
            assert done["response"] == plain["response"] and done["response"]
            assert done["routes"] == plain["routes"]
            assert done["intent"] == plain["intent"] == events[0][1]["intent"]
            # the deltas, joined, are the whole answer
            assert "".join(d["delta"] for e, d in events if e == "message") == done["response"]


@run_async
async def test_agent_solve_stream_error_is_one_event_with_the_reason():
    async with dashboard() as (_, http):
        body = _body("Generate optimal routes")
        body["preferences"]["seconds"] = 999  # beyond the endpoint's limit
        events = await _events(http, "/api/agent_solve/stream", body)
        assert [e for e, _ in events] == ["error"], events
        assert events[0][1]["status"] == 422
        assert "search too long" in events[0][1]["reason"]
        # a bad body is refused before any event, as the plain route refuses it
        r = await http.post("/api/agent_solve/stream", json={"user_message": 3})
        assert r.status_code == 422


@run_async
async def test_ask_stream_carries_the_live_answers_stages_over_the_bus():
    question = "how much fuel does D2 have left?"
    async with live_mission() as mission, Frames(mission.ws_url) as ws:
        await ws.until(telemetry(lambda t: t["tick"] > 10), what="telemetry")
        async with httpx.AsyncClient(base_url=mission.url, timeout=TIMEOUT) as http:
            r = await http.post("/api/ask/stream", json={"question": question})
            assert r.status_code == 401  # the same token rule as /api/ask
            events = await _events(http, "/api/ask/stream", {"question": question}, headers=AUTH)
            names = [e for e, _ in events]
            _in_flow_order(names)
            assert names[-1] == "done"
            assert [n for n in names if "tool" in n] == ["tool_call_start", "tool_call_end"]
            done = events[-1][1]["answer"]
            assert done["question"] == question and done["run_id"] == mission.executive.run_id
            assert done["intent"] == events[0][1]["intent"] == "question"
            assert "".join(d["delta"] for e, d in events if e == "message") == done["answer"]
            assert "stage" not in done  # the reply, not a stage
            # the plain route answers the same question the same way (the state moved on:
            # the same kind of answer, cited numbers under the same labels)
            plain = (await http.post("/api/ask", json={"question": question}, headers=AUTH)).json()
            assert plain["intent"] == done["intent"]
            assert [n["label"] for n in plain["numbers"]] == [n["label"] for n in done["numbers"]]
