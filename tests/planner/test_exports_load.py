"""Every export opens in the real tools' loaders: QGroundControl's .plan and text-mission
loaders (transcribed from its sources, ``tests/planner/qgc_loaders.py``) and pymavlink's
``mavwp`` (MAVProxy's and ArduPilot's autotest reader, the real library). Each loaded
mission is compared item by item with what was written."""

from __future__ import annotations

import json
import math

import pytest
from pymavlink import mavwp

from planner.interop.mavlink import mavlink_missions
from planner.interop.qgc import MAV_CMD_NAV_TAKEOFF, qgc_plans
from planner.interop.qgc_format import PlanFile
from tests.planner.export_cases import export_cases
from tests.planner.qgc_loaders import QgcLoadError, qgc_load_plan, qgc_load_text_mission

CASES = {case.name: case for case in export_cases()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_plan_export_opens_in_qgc(name):
    case = CASES[name]
    plans = qgc_plans(case.scenario, case.solution, case.frame)
    assert plans, "every case routes at least one drone"
    env = case.scenario.environment
    for plan in plans.values():
        text = json.dumps(plan, indent=4)  # as isr plan --export writes it
        PlanFile.model_validate_json(text)  # and the published format, strictly
        loaded = qgc_load_plan(text)
        written = plan["mission"]["items"]
        assert [i.command for i in loaded.items] == [w["command"] for w in written]
        for got, item in zip(loaded.items, written):
            want = [math.nan if p is None else p for p in item["params"]]
            assert got.params == pytest.approx(want, nan_ok=True, abs=0, rel=0)
            assert got.frame == 3 and got.auto_continue
        assert loaded.home == pytest.approx(tuple(plan["mission"]["plannedHomePosition"]))
        assert len(loaded.circles) == len(env.sams)
        assert all(not c["inclusion"] for c in loaded.circles)
        assert len(loaded.rally) == len(env.airports)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_waypoints_export_opens_in_qgc_and_pymavlink(name, tmp_path):
    case = CASES[name]
    missions = mavlink_missions(case.scenario, case.solution, case.frame)
    assert missions
    for label, mission in missions.items():
        text = mission.text()
        loaded = qgc_load_text_mission(text)  # QgcLoadError if QGC calls it corrupted
        assert loaded.text_fields_ok  # no field QGC would silently read as 0
        home, takeoff, *rest = mission.items
        assert takeoff.command == MAV_CMD_NAV_TAKEOFF
        assert loaded.home == pytest.approx((home.x, home.y, home.z), abs=1e-8)
        # QGC reads the line after a take-off into the take-off item (issue #13167): it
        # keeps every item after the take-off, in order, and loses the take-off command.
        assert len(loaded.items) == len(rest)
        for got, want in zip(loaded.items, rest):
            assert got.command == want.command
            assert got.params[4:7] == pytest.approx([want.x, want.y, want.z], abs=1e-8)
            assert got.params[1] == pytest.approx(want.param2)  # acceptance radius
        path = tmp_path / f"{name}-{label}.waypoints"
        path.write_text(text)
        back = mavwp.MAVWPLoader()
        assert back.load(str(path)) == len(mission.items)
        for seq, want in enumerate(mission.items):
            got = back.wp(seq)
            assert (got.command, got.frame) == (want.command, want.frame)
            assert (got.x, got.y, got.z) == pytest.approx((want.x, want.y, want.z), abs=1e-8)
        labels = mission.labels_csv().splitlines()
        assert len(labels) == len(mission.items) + 1  # the header and a row per item


def test_the_old_commented_export_is_what_qgc_refuses():
    """The yardstick is sharp: a '# comment' line, as pymavlink's own writer puts before a
    commented item, is exactly what QGC's text loader rejects; a trailing blank line too."""
    case = CASES["zurich"]
    text = next(iter(mavlink_missions(case.scenario, case.solution, case.frame).values())).text()
    header, first, *rest = text.splitlines(keepends=True)
    with pytest.raises(QgcLoadError, match="The mission file is corrupted"):
        qgc_load_text_mission(header + first + "# takeoff A1\n" + "".join(rest))
    with pytest.raises(QgcLoadError, match="The mission file is corrupted"):
        qgc_load_text_mission(text + "\n")
    with pytest.raises(QgcLoadError, match="not compatible"):
        qgc_load_text_mission("QGC WPL  110\n" + first)


def test_the_plan_loader_transcription_refuses_what_qgc_refuses():
    case = CASES["zurich"]
    plan = next(iter(qgc_plans(case.scenario, case.solution, case.frame).values()))

    def refused(change) -> str:
        data = json.loads(json.dumps(plan))
        change(data)
        with pytest.raises(QgcLoadError) as info:
            qgc_load_plan(json.dumps(data))
        return str(info.value)

    assert "groundStation" in refused(lambda d: d.pop("groundStation"))
    assert "newer" in refused(lambda d: d.update(version=2))
    assert "7 values" in refused(lambda d: d["mission"]["items"][0]["params"].pop())
    assert "firmwareType" in refused(lambda d: d["mission"].pop("firmwareType"))
    assert "Polygon only supports version 1" in refused(
        lambda d: d["geoFence"]["polygons"].append({"version": 2, "inclusion": False})
    )
    assert "Rally Points supports version 2" in refused(
        lambda d: d["rallyPoints"].update(version=3)
    )
    assert "AMSLAltAboveTerrain" in refused(
        lambda d: d["mission"]["items"][0].update(AMSLAltAboveTerrain="x")
    )
