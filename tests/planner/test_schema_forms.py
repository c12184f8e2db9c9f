"""The published JSON Schema (``scenarios/scenario.schema.json``, read with jsonschema) and
the loader ``isr validate`` runs (``parse_scenario``) give the same verdict on every
position form, on every kind of positioned object, with and without a geo origin: the
documented forms (``x, y``; ``pos: [x, y]``; ``lat, lon``; ``pos: {lat, lon}``; ``x, y``
with an agreeing ``pos``) and the ways to get them wrong (half a pair, km next to lat/lon,
lat/lon without an origin, a latitude of 100, a malformed ``pos``)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from planner.scenario_io import ScenarioError, parse_scenario
from tests.conftest import SCENARIOS

SCHEMA = Draft202012Validator(json.loads((SCENARIOS / "scenario.schema.json").read_text()))

BASE: dict[str, Any] = {
    "geo": {"lat0": 47.4, "lon0": 8.5},
    "environment": {
        "airports": [{"id": "A1", "x": 0, "y": 0}, {"id": "A2", "x": 20, "y": 5}],
        "targets": [{"id": "T1", "x": 10, "y": 10, "priority": 5, "type": "A"}],
        "sams": [{"id": "S1", "pos": [30, 30], "range": 2}],
        "synthetic_starts": {"D1_START": {"x": 5, "y": 0}},
    },
    "drone_configs": {
        "1": {"fuelBudget": 200, "home_airport": "A1"},
        "2": {"fuelBudget": 200, "home_airport": "A2", "start_airport": "D1_START"},
    },
    "timeline": [
        {"t": 10, "op": "add_target", "id": "T9", "x": 12, "y": 14, "priority": 3, "type": "A"},
        {"t": 20, "op": "move_target", "id": "T1", "x": 11, "y": 11},
        {"t": 30, "op": "add_sam", "id": "S9", "pos": [40, 40], "range": 2},
        {"t": 40, "op": "move_sam", "id": "S1", "pos": [31, 31]},
    ],
}
PLACES = {
    "airport": ("environment", "airports", 1),
    "target": ("environment", "targets", 0),
    "sam": ("environment", "sams", 0),
    "synthetic start": ("environment", "synthetic_starts", "D1_START"),
    "add_target": ("timeline", 0),
    "move_target": ("timeline", 1),
    "add_sam": ("timeline", 2),
    "move_sam": ("timeline", 3),
}
X, Y, LAT, LON = 15.0, 16.0, 47.5, 8.6
DOCUMENTED = {
    "x, y": {"x": X, "y": Y},
    "pos [x, y]": {"pos": [X, Y]},
    "lat, lon": {"lat": LAT, "lon": LON},
    "pos {lat, lon}": {"pos": {"lat": LAT, "lon": LON}},
    "x, y and the same pos": {"x": X, "y": Y, "pos": [X, Y]},
}
WRONG = {
    "lat alone": {"lat": LAT},
    "x alone": {"x": X},
    "x, y and lat, lon": {"x": X, "y": Y, "lat": LAT, "lon": LON},
    "pos {lat, lon} and x": {"pos": {"lat": LAT, "lon": LON}, "x": X},
    "pos {lat, lon, alt}": {"pos": {"lat": LAT, "lon": LON, "alt": 3}},
    "latitude 100": {"lat": 100, "lon": LON},
    "pos of one number": {"pos": [X]},
    "pos of three numbers": {"pos": [X, Y, 1]},
    "pos a string": {"pos": "a"},
    "lat a string": {"lat": "47", "lon": LON},
    "no position": {},
}


def _scenario(place: str, form: dict[str, Any], geo: bool) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    if not geo:
        del data["geo"]
    obj: Any = data
    for key in PLACES[place]:
        obj = obj[key]
    for key in ("x", "y", "pos", "lat", "lon"):
        obj.pop(key, None)
    obj.update(copy.deepcopy(form))
    return data


def _loads(data: dict[str, Any]) -> bool:
    try:
        parse_scenario(json.dumps(data))
    except ScenarioError:
        return False
    return True


@pytest.mark.parametrize("geo", [True, False], ids=["geo", "km"])
@pytest.mark.parametrize("form", [*DOCUMENTED, *WRONG])
@pytest.mark.parametrize("place", list(PLACES))
def test_schema_and_validator_agree(place, form, geo):
    data = _scenario(place, {**DOCUMENTED, **WRONG}[form], geo)
    assert SCHEMA.is_valid(data) == _loads(data)


@pytest.mark.parametrize("place", list(PLACES))
def test_every_documented_form_loads_with_an_origin_and_lat_lon_needs_one(place):
    for name, form in DOCUMENTED.items():
        assert _loads(_scenario(place, form, geo=True)), name
    for name in ("x, y", "pos [x, y]", "x, y and the same pos"):
        assert _loads(_scenario(place, DOCUMENTED[name], geo=False)), name
    for name in ("lat, lon", "pos {lat, lon}"):
        assert not _loads(_scenario(place, DOCUMENTED[name], geo=False)), name
    for name, form in WRONG.items():
        assert not _loads(_scenario(place, form, geo=True)), name
