"""Edits checked when they are posted, against a real mission behind a real dashboard: an edit
whose ids do not resolve against the known world is refused at once (422 unknown, 409
taken) naming the field, and never reaches the run; the accepted ones take effect at the next
tick, including one that names what an edit posted just before creates."""

from __future__ import annotations

import asyncio
import functools

import httpx

from dashboard.edit_door import world_of_scene
from planner.edits import parse_edit
from sim.edit_check import edit_problem
from tests.dashboard.harness import AUTH, TIMEOUT, TOKEN, Frames, event, live_mission, scene


def run_async(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return asyncio.run(asyncio.wait_for(fn(*args, **kwargs), 4 * TIMEOUT))

    return wrapper


def _client(mission) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=mission.url, timeout=TIMEOUT)


async def _post(http: httpx.AsyncClient, edit: dict) -> httpx.Response:
    return await http.post("/api/edits", json=edit, headers=AUTH)


def _refused(r: httpx.Response, status: int, path: str, words: str) -> None:
    assert r.status_code == status, r.text
    body = r.json()
    assert body["error"].startswith("edit refused:") and words in body["error"], body
    assert body["problems"] == [{"path": path, "message": body["error"][len("edit refused: ") :]}]


@run_async
async def test_edits_with_ids_the_world_lacks_are_refused_at_the_door():
    async with live_mission() as mission, _client(mission) as http, Frames(mission.ws_url) as ws:
        await ws.until(scene(lambda s: s["tick"] > 0), what="a scene")
        _refused(
            await _post(http, {"op": "add_sam", "id": "SAM1", "pos": [10, 10], "range": 2}),
            409,
            "$.id",
            "SAM 'SAM1' already exists",
        )
        _refused(await _post(http, {"op": "remove_target", "id": "T404"}), 422, "$.id", "T404")
        _refused(
            await _post(http, {"op": "move_target", "id": "T404", "x": 1, "y": 1}),
            422,
            "$.id",
            "no target 'T404'",
        )
        _refused(await _post(http, {"op": "remove_sam", "id": "S404"}), 422, "$.id", "'S404'")
        _refused(await _post(http, {"op": "reveal_sam", "id": "SAM2"}), 409, "$.id", "known")
        _refused(
            await _post(http, {"op": "set_fuel", "drone": "D404", "fuel": 5}),
            422,
            "$.drone",
            "no drone 'D404'",
        )
        _refused(
            await _post(
                http,
                {"op": "add_target", "id": "A2", "x": 1, "y": 1, "priority": 1, "type": "A"},
            ),
            409,
            "$.id",
            "airport",
        )
        # An edit that fits is taken and applied at the next tick.
        r = await _post(http, {"op": "add_sam", "id": "S9", "pos": [5, 95], "range": 2})
        assert r.status_code == 202, r.text
        applied = await ws.until(
            event(lambda e: e["kind"] == "edit_applied" and e["edit"].get("id") == "S9"),
            what="edit_applied S9",
        )
        assert applied["data"]["edit"]["tick"] == applied["data"]["tick"]
        # ...and once the scene shows it, a second add of the same id is refused.
        await ws.until(scene(lambda s: any(x["id"] == "S9" for x in s["sams"])), what="S9")
        _refused(
            await _post(http, {"op": "add_sam", "id": "S9", "pos": [5, 95], "range": 2}),
            409,
            "$.id",
            "'S9' already exists",
        )
        # Nothing refused at the door reached the run: no rejection comes later.
        await ws.until(scene(lambda s: s["tick"] > applied["data"]["tick"] + 40), what="ticks")
        events = (await http.get("/api/events")).json()["events"]
        assert [e for e in events if e["kind"] in ("edit_rejected", "CMD_REJECTED")] == []


@run_async
async def test_an_edit_may_name_what_the_edit_before_it_creates_or_removes():
    async with live_mission() as mission, _client(mission) as http, Frames(mission.ws_url) as ws:
        await ws.until(scene(lambda s: s["tick"] > 0), what="a scene")
        # Back to back: the scene cannot show T77 yet, the door remembers it let it through.
        added = {"op": "add_target", "id": "T77", "x": 20, "y": 80, "priority": 4, "type": "A"}
        assert (await _post(http, added)).status_code == 202
        moved = await _post(http, {"op": "move_target", "id": "T77", "x": 21, "y": 81})
        assert moved.status_code == 202, moved.text
        _refused(await _post(http, added), 409, "$.id", "target 'T77' already exists")
        assert (await _post(http, {"op": "remove_target", "id": "T12"})).status_code == 202
        _refused(await _post(http, {"op": "remove_target", "id": "T12"}), 422, "$.id", "T12")
        await ws.until(
            event(lambda e: e["kind"] == "edit_applied" and e["edit"]["op"] == "move_target"),
            what="the move of T77 applied",
        )
        removed = await ws.until(
            event(lambda e: e["kind"] == "edit_applied" and e["edit"]["op"] == "remove_target"),
            what="the removal of T12 applied",
        )
        # a scene is the picture at its own tick: one drawn between the move and the removal
        # (already read, or still being drawn) shows T77 moved and T12 still there
        after = removed["data"]["tick"]
        final = await ws.until(
            scene(
                lambda s: (
                    s["tick"] > after
                    and any(t["id"] == "T77" and t["x"] == 21 for t in s["targets"])
                )
            ),
            what="T77 moved in a scene after the removal",
        )
        assert "T12" not in {t["id"] for t in final["data"]["targets"]}
        events = (await http.get("/api/events")).json()["events"]
        assert [e for e in events if e["kind"] == "edit_rejected"] == []


@run_async
async def test_the_door_knows_only_the_known_world_a_hidden_sam_is_no_sam_to_it():
    """Issue 25: the door's answers never tell what is hidden. popup_sam.json adds SAM3
    hidden at t=0: moving it is refused exactly as moving a SAM that does not exist, and
    adding its id passes the door (the simulation, which holds the truth, decides)."""
    async with (
        live_mission("popup_sam.json", speed=5) as mission,
        _client(mission) as http,
        Frames(mission.ws_url, token=TOKEN) as ws,  # the truth: for the token only
    ):
        shown = await ws.until(
            scene(lambda s: any(x["id"] == "SAM3" for x in s["sams"])), what="SAM3 in a scene"
        )
        assert world_of_scene(shown["data"]).sam_state("SAM3") == "hidden"
        hidden = await _post(http, {"op": "move_sam", "id": "SAM3", "pos": [1, 1]})
        unknown = await _post(http, {"op": "move_sam", "id": "S404", "pos": [1, 1]})
        assert (hidden.status_code, unknown.status_code) == (422, 422)
        assert hidden.json()["error"].replace("SAM3", "X") == unknown.json()["error"].replace(
            "S404", "X"
        )
        r = await _post(http, {"op": "add_sam", "id": "SAM3", "pos": [1, 1], "range": 1})
        assert r.status_code == 202, r.text


@run_async
async def test_a_target_may_be_placed_with_pos_as_the_timeline_takes_it():
    async with live_mission() as mission, _client(mission) as http, Frames(mission.ws_url) as ws:
        await ws.until(scene(lambda s: s["tick"] > 0), what="a scene")
        add = {"op": "add_target", "id": "T88", "pos": [40, 40], "priority": 5, "type": "A"}
        r = await _post(http, add)
        assert r.status_code == 202, r.text
        await ws.until(
            scene(lambda s: any(t["id"] == "T88" and t["x"] == 40 for t in s["targets"])),
            what="T88 in a scene",
        )
        r = await _post(http, {"op": "move_target", "id": "T88", "pos": [41, 42]})
        assert r.status_code == 202, r.text
        bad = await _post(http, {"op": "move_target", "id": "T88", "pos": [1, 2], "x": 5, "y": 2})
        assert bad.status_code == 422 and bad.json()["problems"][0]["path"] == "$", bad.text


def test_the_door_and_the_sim_share_one_rule():
    """The door's world of a scene answers the rule as the sim's world does (the messages
    are the sim's rejection reasons)."""
    world = world_of_scene(
        {
            "targets": [{"id": "T1"}],
            "sams": [{"id": "S1", "known": True}, {"id": "S2", "known": False}],
            "airports": [{"id": "A1"}],
            "drones": {"1": {"status": "flying"}, "2": {"status": "lost"}},
        }
    )
    cases = {
        "add_target T1": (
            {"op": "add_target", "id": "T1", "x": 0, "y": 0, "priority": 1, "type": "A"},
            "target 'T1' already exists",
        ),
        "add_target A1": (
            {"op": "add_target", "id": "A1", "x": 0, "y": 0, "priority": 1, "type": "A"},
            "id 'A1' is an airport or start",
        ),
        "reveal S1": ({"op": "reveal_sam", "id": "S1"}, "SAM 'S1' is already known"),
        "add S2": (
            {"op": "add_sam", "id": "S2", "pos": [0, 0], "range": 1},
            "SAM 'S2' already exists",
        ),
        "fuel 2": ({"op": "set_fuel", "drone": "2", "fuel": 3}, "drone 2 is already lost"),
        "move T2": ({"op": "move_target", "id": "T2", "x": 0, "y": 0}, "no target 'T2'"),
    }
    for name, (raw, message) in cases.items():
        problem = edit_problem(parse_edit(raw), world)
        assert problem is not None and problem.message == message, name
    assert edit_problem(parse_edit({"op": "reveal_sam", "id": "S2"}), world) is None
    assert edit_problem(parse_edit({"op": "disable_drone", "drone": "1"}), world) is None
