"""The replay API on a stored run: a real mission (popup_sam: a hidden SAM detected, a
replan committed) flown headless into a SQLite file, served by a real dashboard with no
live run. Every answer is checked against what the store holds."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from dashboard.server import start_dashboard
from executive.bus import InProcessBus
from executive.traces import TraceReader
from tests.conftest import copy_of
from tests.dashboard.harness import AUTH, SCENARIOS, TIMEOUT, TOKEN

HIDDEN = "SAM3"  # popup_sam's hidden SAM


@pytest.fixture(scope="module")
def stored(popup_sam_run, tmp_path_factory):
    """(url, run_id) of one finished popup_sam run (this module's copy of the session's)."""
    return copy_of(popup_sam_run, tmp_path_factory.mktemp("replay"))


def served(fn):
    """Run the test against a dashboard serving the store only (an idle bus)."""

    def wrapper(stored):
        url, run_id = stored

        async def main():
            server = await start_dashboard(InProcessBus(), port=0, token=TOKEN, trace_url=url)
            try:
                async with httpx.AsyncClient(base_url=server.url, timeout=TIMEOUT) as http:
                    await fn(http, TraceReader(url), run_id)
            finally:
                await server.stop()

        asyncio.run(asyncio.wait_for(main(), 4 * TIMEOUT))

    wrapper.__name__, wrapper.__doc__ = fn.__name__, fn.__doc__  # not wraps: pytest would
    return wrapper  # read the inner signature and look for fixtures named http, reader


def _problem_paths(response) -> list[str]:
    return [p["path"] for p in response.json()["problems"]]


@served
async def test_runs_are_listed_paged_and_filtered(http, reader, run_id):
    body = (await http.get("/api/runs", params={"limit": 1})).json()
    assert [r["run_id"] for r in body["runs"]] == [run_id]
    row = body["runs"][0]
    assert row["status"] == "ended" and row["scenario"] is None  # parsed, not from a file
    assert row["points"] == reader.run(run_id)["outcome"]["total_points"] and row["replans"] == 1
    assert (await http.get("/api/runs", params={"offset": 1})).json()["runs"] == []
    assert (await http.get("/api/runs", params={"status": "crashed"})).json()["runs"] == []
    bad = await http.get("/api/runs", params={"status": "dead"})
    assert bad.status_code == 422 and _problem_paths(bad) == ["query.status"]


@served
async def test_telemetry_in_a_range_is_what_the_store_holds(http, reader, run_id):
    r = await http.get(
        f"/api/runs/{run_id}/telemetry", params={"from": 100, "to": 400, "every": 50}
    )
    assert r.status_code == 200
    rows = r.json()["rows"]
    assert [row["tick"] for row in rows] == [100, 150, 200, 250, 300, 350, 400]
    assert rows == [
        {"tick": t["tick"], "drones": t["drones"]}
        for t in reader.telemetry_range(run_id, 100, 400, every=50)
    ]


@served
async def test_bad_ranges_are_422_naming_the_field(http, reader, run_id):
    last = (await http.get(f"/api/runs/{run_id}")).json()["last_tick"]
    cases = {
        ("from", last + 1, None): "query.from",
        ("from", 500, 100): "query.to",
        ("from", -1, None): "query.from",
    }
    for (name, first, to), path in cases.items():
        params = {name: first} if to is None else {name: first, "to": to}
        r = await http.get(f"/api/runs/{run_id}/telemetry", params=params)
        assert r.status_code == 422 and _problem_paths(r) == [path], (params, r.text)
    everything = await http.get(f"/api/runs/{run_id}/telemetry")  # every tick of 30 000+
    assert everything.status_code == 422 and _problem_paths(everything) == ["query.every"]
    assert "every >=" in everything.json()["error"]
    past = await http.get(f"/api/runs/{run_id}/state", params={"tick": last + 1})
    assert past.status_code == 422 and "last stored tick" in past.json()["error"]


@served
async def test_bad_and_unknown_ids_are_404_or_422_never_500(http, reader, run_id):
    assert (await http.get(f"/api/runs/{run_id[:6]}")).status_code == 404  # exact ids only
    assert (await http.get("/api/runs/____")).status_code == 404
    for path in ("telemetry", "events", "state?tick=0", "plans", "series"):
        r = await http.get(f"/api/runs/{'f' * 16}/{path}")
        assert r.status_code == 404, path
        assert (await http.get(f"/api/runs/{'x' * 60_000}/{path}")).status_code in (404, 414)


@served
async def test_state_at_a_tick_matches_the_stored_telemetry_and_events(http, reader, run_id):
    detected = next(e for e in reader.events(run_id) if e["kind"] == "sam_detected")["tick"]
    for tick in (0, detected - 1, detected, detected + 1234):
        scene = (
            await http.get(f"/api/runs/{run_id}/state", params={"tick": tick}, headers=AUTH)
        ).json()
        assert scene["tick"] == tick
        t = reader.telemetry_at(run_id, tick)
        for drone_id, d in t["drones"].items():
            assert (scene["drones"][drone_id]["x"], scene["drones"][drone_id]["y"]) == (
                d["x"],
                d["y"],
            )
        hidden = next(s for s in scene["sams"] if s["id"] == HIDDEN)
        assert hidden["known"] is (tick >= detected)
        collected = {
            e["payload"]["target"]
            for e in reader.events(run_id)
            if e["kind"] == "target_collected" and e["tick"] <= tick
        }
        assert {x["id"] for x in scene["targets"] if x["status"] == "collected"} == collected


@served
async def test_the_public_never_sees_a_hidden_sam_before_it_is_known(http, reader, run_id):
    detected = next(e for e in reader.events(run_id) if e["kind"] == "sam_detected")["tick"]
    before = (await http.get(f"/api/runs/{run_id}/state", params={"tick": detected - 1})).json()
    assert HIDDEN not in [s["id"] for s in before["sams"]]
    after = (await http.get(f"/api/runs/{run_id}/state", params={"tick": detected})).json()
    assert HIDDEN in [s["id"] for s in after["sams"]]
    events = (await http.get(f"/api/runs/{run_id}/events")).json()["events"]
    assert not [e for e in events if e["kind"].startswith("truth:")]
    with_token = (await http.get(f"/api/runs/{run_id}/events", headers=AUTH)).json()["events"]
    assert [e for e in with_token if e["kind"].startswith("truth:")]


@served
async def test_events_come_with_their_markers(http, reader, run_id):
    body = (await http.get(f"/api/runs/{run_id}/events", params={"from": 1})).json()
    assert body["events"] and all(e["tick"] >= 1 for e in body["events"])
    kinds = {m["category"] for m in body["markers"]}
    assert {"detection", "replan", "commit"} <= kinds
    assert all(m["tick"] >= 1 for m in body["markers"])


@served
async def test_plan_history_says_what_each_replan_changed(http, reader, run_id):
    plans = (await http.get(f"/api/runs/{run_id}/plans")).json()["plans"]
    stored = reader.plan_versions(run_id)
    assert [p["plan_id"] for p in plans] == [p["plan_id"] for p in stored]
    first, second = plans
    assert first["trigger"] == "initial" and first["status"] == "superseded"
    assert second["trigger"].startswith("sam_detected") and second["status"] == "committed"
    assert second["points_delta"] == second["points"] - first["points"]
    assert second["changed"] and set(second["changed"]) <= set(second["paths"])
    assert second["latency_ms"] > 0


@served
async def test_series_follow_the_run(http, reader, run_id):
    s = (await http.get(f"/api/runs/{run_id}/series", params={"points": 50})).json()
    assert 40 <= len(s["ticks"]) <= 60 and s["ticks"] == sorted(s["ticks"])
    final = reader.run(run_id)["outcome"]["total_points"]
    assert s["collected"][-1] == final and s["collected"] == sorted(s["collected"])
    initial = reader.plan_versions(run_id)[0]["solution"]["total_points"]
    assert s["planned"][0] == initial  # at tick 0: all of the first plan still to collect
    assert all(p >= c for p, c in zip(s["planned"], s["collected"]))
    for fuel in s["fuel"].values():
        assert len(fuel) == len(s["ticks"])
        assert all(a >= b for a, b in zip(fuel, fuel[1:]))  # fuel only goes down
    assert s["rounds"][0]["trigger"] == "initial"


@served
async def test_compare_puts_two_runs_side_by_side_with_their_tracks(http, reader, run_id):
    same = (await http.get("/api/compare", params={"a": run_id, "b": run_id})).json()
    assert same["first_divergence"] is None
    assert (
        same["a"]["points"] == same["b"]["points"] == reader.run(run_id)["outcome"]["total_points"]
    )
    tracks = same["a"]["tracks"]
    assert tracks and all(len(t) > 10 for t in tracks.values())
    last = reader.telemetry_at(run_id, 10**9)
    for drone_id, t in tracks.items():  # a track ends near where the drone was last seen
        x, y = t[-1]
        d = last["drones"][drone_id]
        assert abs(x - d["x"]) < 5 and abs(y - d["y"]) < 5
    assert HIDDEN in [s["id"] for s in same["a"]["scene"]["sams"]]  # detected by the end
    missing = await http.get("/api/compare", params={"a": run_id, "b": "f" * 16})
    assert missing.status_code == 404


def test_a_run_still_running_answers_up_to_its_last_stored_tick(tmp_path):
    """A run with no end record yet (its writer still beating): listed as running, and
    every range answers up to the last tick it has stored, no further."""
    from executive.contracts import EventRecord, RunRecord, TelemetryRecord
    from executive.traces import TraceWriter

    url = f"sqlite:///{tmp_path / 'live.db'}"
    scenario = json.loads((SCENARIOS / "popup_sam.json").read_text())
    run_id = "0123456789abcdef"
    writer = TraceWriter(url)
    writer.start()
    writer.emit(RunRecord(run_id, scenario, 0, {"policy": {"telemetry_every": 5}}))
    for tick in range(0, 505, 5):
        drones = {"2": {"x": 80.0 - tick / 100, "y": 15.0, "fuel": 180.0, "status": "flying"}}
        writer.emit(TelemetryRecord(run_id, tick, drones))
    writer.emit(EventRecord(run_id, 250, "PAUSE", {"holding": ["2"]}))
    assert writer.flush(TIMEOUT)

    async def main():
        server = await start_dashboard(InProcessBus(), port=0, token=TOKEN, trace_url=url)
        try:
            async with httpx.AsyncClient(base_url=server.url, timeout=TIMEOUT) as http:
                listed = (await http.get("/api/runs", params={"status": "running"})).json()
                assert [r["run_id"] for r in listed["runs"]] == [run_id]
                one = (await http.get(f"/api/runs/{run_id}")).json()
                assert one["last_tick"] == 500 and one["run"]["status"] == "running"
                scene = (await http.get(f"/api/runs/{run_id}/state", params={"tick": 500})).json()
                assert scene["drones"]["2"]["x"] == 75.0 and scene["mode"] == "PAUSED"
                past = await http.get(f"/api/runs/{run_id}/state", params={"tick": 501})
                assert past.status_code == 422
                rows = (
                    await http.get(f"/api/runs/{run_id}/telemetry", params={"from": 490})
                ).json()
                assert [r["tick"] for r in rows["rows"]] == [490, 495, 500]
                events = (await http.get(f"/api/runs/{run_id}/events")).json()
                assert [m["category"] for m in events["markers"]] == ["operator"]
        finally:
            await server.stop()

    try:
        asyncio.run(asyncio.wait_for(main(), 4 * TIMEOUT))
    finally:
        writer.close()


@served
async def test_a_run_says_whether_its_trace_is_whole(http, reader, run_id):
    """``/api/runs/{id}`` answers the completeness check ``isr replay`` makes: whole here."""
    body = (await http.get(f"/api/runs/{run_id}")).json()
    assert body["trace"] == {"complete": True, "gaps": "", "missing": {}}
