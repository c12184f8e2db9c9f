"""Hostile scenario files through ``isr validate``, ``isr plan`` and ``isr sim``.

Hypothesis starts from ``scenarios/demo.json`` and mutates it the way a hostile or clumsy
author would: wrong types (``"25"`` for a number, ``"yes"`` for a flag, ``true`` for a
priority), huge, tiny, negative and non-finite numbers (``1e308``, ``NaN``, ``Infinity``),
ids with rich markup and control characters, very long ids, missing and extra fields, lists
above the limits, deep nesting, a key twice in one object. Each file goes through the
commands in-process (``build_app()`` with typer's runner, fast) and a few fixed ones through
a real ``isr`` process (so no traceback reaches a real terminal).

What must hold: no traceback, the exit code 0 (accepted) or 2 (refused), never 1 (the
internal-error guard: an exception nobody expected), and every refusal line names the file
and a JSON path (``error: FILE: $.environment.targets[0].x: ...``).
"""

from __future__ import annotations

import copy
import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from cli.main import build_app
from planner.limits import (
    MAX_AIRPORTS,
    MAX_DRONES,
    MAX_ID_LENGTH,
    MAX_JSON_DEPTH,
    MAX_SAMS,
    MAX_SENSOR_TYPES,
    MAX_TARGETS,
    MAX_TIMELINE,
)
from tests.conftest import ROOT, SCENARIOS

DEMO: dict[str, Any] = json.loads((SCENARIOS / "demo.json").read_text())
APP = build_app()
# A refusal line: "error: FILE: $<path>: message" (the path may be just "$" for the file).
REFUSAL = re.compile(r"^error: (?P<file>.+?): (?P<path>\$[^:]*): .+$")
PLAN = ["--iterations", "100", "--seconds", "0.2"]

# ----- the hostile values and the places they go -------------------------------------------

HOSTILE_VALUES: list[Any] = [
    "25",
    "yes",
    "true",
    True,
    False,
    None,
    [],
    {},
    [1, 2],
    {"x": 1},
    1e308,
    -1e308,
    10**400,  # an integer beyond any float
    -(10**30),
    5e-324,
    -1,
    0,
    "NaN",
    "Infinity",
    "-Infinity",
    "1e308",
    math.nan,  # written as the bare NaN / Infinity literals Python's json accepts
    math.inf,
    -math.inf,
    "[/]",
    "[bold red]boom[/]",
    "A1\x1b[31m",
    "T\x00",
    "line\nbreak",
    "\u202e",
    "x" * (MAX_ID_LENGTH + 1),
    "y" * 100_000,
    "",
    "ALL",
    "A1",
    "T1",
    "best_end",
    # structured values for the optional parts
    [{"from": "A1", "to": "T8"}, {"from": "T8", "to": "T1"}],
    [{"from": "T1", "to": "A1"}],
    [{"from": "A1", "to": "A1"}] * 600,
    ["A1", "A2", "A9"],
    {"D1_START": {"x": 1e308, "y": 0}},
    {"1_START": {"x": 10, "y": 20}},
    [{"t": -1, "op": "add_sam", "id": "S9", "pos": [1, 1], "range": 1}],
    [{"tick": 10**12, "op": "disable_drone", "drone": "1"}],
    [{"t": 5, "op": "remove_target", "id": "T99"}, {"t": 1e308, "op": "nope"}],
    {"tick_hz": 1e308, "speed": 1e308},
    {"tick_hz": 1, "speed": 1.0},
]

# The JSON paths a value can be put at or taken from (all exist in the demo).
TARGET_FIELDS = ["id", "x", "y", "priority", "type"]
AIRPORT_FIELDS = ["id", "x", "y", "label"]
SAM_FIELDS = ["id", "pos", "range"]
DRONE_FIELDS = [
    "enabled",
    "fuelBudget",
    "home_airport",
    "start_airport",
    "end_airport",
    "accessibleTargets",
]
PLACES: list[tuple[Any, ...]] = (
    [("environment", "targets", i, f) for i in (0, 5, 11) for f in TARGET_FIELDS]
    + [("environment", "airports", i, f) for i in (0, 2) for f in AIRPORT_FIELDS]
    + [("environment", "sams", i, f) for i in (0, 1) for f in SAM_FIELDS]
    + [("environment", "sams", 0, "pos", 0), ("environment", "sams", 1, "pos", 1)]
    + [("drone_configs", d, f) for d in ("1", "3") for f in DRONE_FIELDS]
    + [("drone_configs", "2", "accessibleTargets", 0)]
    + [
        ("drone_configs", "1", f)
        for f in ("frozen_segments", "end_mode", "allowed_ends", "speed", "fuel_budget")
    ]
    + [("environment", "synthetic_starts"), ("sim",), ("timeline",)]
    + [
        ("environment",),
        ("environment", "targets"),
        ("environment", "airports"),
        ("environment", "sams"),
        ("drone_configs",),
        ("drone_configs", "2"),
    ]
)
# Optional parts a file may add, where hostile values go too.
EXTRAS: dict[str, Any] = {
    "sim": {"tick_hz": 20, "seed": 0, "speed": 0.1, "sensor_range": 10, "max_duration": 5000},
    "timeline": [
        {"t": 600, "op": "add_sam", "id": "S3", "pos": [65, 70], "range": 4, "hidden": True},
        {"t": 900, "op": "set_priority", "id": "T1", "priority": 3},
    ],
}
EXTRA_PLACES: list[tuple[Any, ...]] = [
    ("sim", f) for f in ("tick_hz", "seed", "speed", "sensor_range", "max_duration")
] + [("timeline", 0, f) for f in ("t", "op", "id", "pos", "range", "hidden")]
# Lists grown past their limits (the limit + 1, or far past it where the list is short: the
# count is refused by the same size check either way, and ten times the drones or targets is
# a 10-15 MB file, parsed by each of the three commands, that proves nothing the limit + 1
# does not).
GROWN: dict[tuple[str, ...], int] = {
    ("environment", "targets"): MAX_TARGETS,
    ("environment", "airports"): MAX_AIRPORTS,
    ("environment", "sams"): MAX_SAMS,
    ("drone_configs",): MAX_DRONES,
    ("drone_configs", "2", "accessibleTargets"): MAX_SENSOR_TYPES,
    ("timeline",): MAX_TIMELINE,
}
FAR = 5_000  # a list this long or longer is grown to the limit + 1 only


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        data = data[key]
    return data


def _put(data: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    _at(data, path[:-1])[path[-1]] = value


def _drop(data: dict[str, Any], path: tuple[Any, ...]) -> None:
    parent = _at(data, path[:-1])
    del parent[path[-1]]


def _grow(data: dict[str, Any], path: tuple[str, ...], count: int) -> None:
    items = _at(data, path)
    if isinstance(items, list):
        template = items[-1]
        _put(data, path, [_renamed(template, i) for i in range(count)])
    else:  # the drones: an object keyed by id
        template = next(iter(items.values()))
        _put(data, path, {str(i): copy.deepcopy(template) for i in range(1, count + 1)})


def _renamed(item: Any, i: int) -> Any:
    if isinstance(item, dict):
        return {**item, "id": f"{item.get('id', 'X')}_{i}"} if "id" in item else dict(item)
    return f"{item}{i}" if isinstance(item, str) else item


NEST = "@@nested@@"  # put where the nesting goes, replaced in the text (json.dumps would recurse)


def _nested(depth: int) -> str:
    """``depth`` levels of objects and lists, as JSON text."""
    opening = "".join('{"a": ' if i % 2 else "[" for i in range(depth))
    closing = "".join("}" if i % 2 else "]" for i in reversed(range(depth)))
    return opening + "1" + closing


# ----- the mutations: each one edit of the parsed file, or of its text ---------------------


@st.composite
def hostile_files(draw: st.DrawFn) -> tuple[str, str]:
    """(what was done, the file's text)."""
    data = copy.deepcopy(DEMO)
    places = list(PLACES)
    if draw(st.booleans()):
        data.update(copy.deepcopy(EXTRAS))
        places += EXTRA_PLACES
    done: list[str] = []
    duplicate = False
    nest = 0
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(
            st.sampled_from(["set", "set", "set", "drop", "extra", "grow", "nest", "duplicate"])
        )
        place = draw(st.sampled_from(places))
        try:
            parent = _at(data, place[:-1])
            if kind != "set":
                _at(data, place)
        except (KeyError, IndexError, TypeError):
            continue  # a place an earlier mutation removed or replaced, or an absent one
        if isinstance(parent, list) and not isinstance(place[-1], int):
            continue
        if kind == "set":
            value = draw(st.sampled_from(HOSTILE_VALUES))
            _put(data, place, value)
            done.append(f"{place} = {value!r:.40}")
        elif kind == "drop":
            _drop(data, place)
            done.append(f"del {place}")
        elif kind == "extra":
            if isinstance(parent, dict):
                parent[draw(st.sampled_from(["extra", "[/]", "\x07", "fuel_budget"]))] = 1
                done.append(f"extra field beside {place}")
        elif kind == "grow":
            path, limit = draw(st.sampled_from(sorted(GROWN.items())))
            count = draw(st.sampled_from([limit + 1, 10 * limit] if limit < FAR else [limit + 1]))
            try:
                _grow(data, path, count)
            except (KeyError, IndexError, TypeError, StopIteration):
                continue
            done.append(f"{path} grown to {count}")
        elif kind == "nest":
            depth = draw(st.sampled_from([MAX_JSON_DEPTH + 1, 200, 5_000]))
            _put(data, place, NEST)
            nest = depth
            done.append(f"{place} nested {depth} deep")
        else:
            duplicate = True
            done.append("a key twice")
    text = json.dumps(data, allow_nan=True)
    if nest:  # the last nesting drawn; any other marker stays a plain string
        text = text.replace(json.dumps(NEST), _nested(nest), 1)
    if duplicate:  # the same key twice in the top object (the first one must not win quietly)
        text = text[:-1] + ', "environment": {"airports": []}}'
    return "; ".join(done) or "unchanged", text


def _check(command: str, what: str, code: int, stdout: str, stderr: str, file: Path) -> None:
    said = f"isr {command} after {what}: exit {code}\n{stderr[-2000:]}"
    assert "Traceback" not in stdout + stderr, said
    assert code in (0, 2), said  # 1 is the internal-error guard: an unexpected exception
    if code == 2:
        lines = stderr.strip().splitlines()
        assert lines, said
        for line in lines:
            if line.startswith("error: ... and "):  # past the 50 problems shown
                continue
            match = REFUSAL.match(line)
            assert match, f"not 'error: FILE: $PATH: ...': {line!r}\n{said}"
            assert match["file"] == str(file), said


def _invoke(command: str, file: Path, *options: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(APP, [command, str(file), *options])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception  # the runner caught what a terminal would have shown
    return result.exit_code, result.stdout, result.stderr


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=hostile_files())
def test_hostile_files_are_refused_with_their_json_path(case, tmp_path_factory):
    what, text = case
    file = tmp_path_factory.mktemp("hostile") / "hostile.json"
    file.write_text(text, encoding="utf-8", errors="surrogatepass")
    code, out, err = _invoke("validate", file)
    _check("validate", what, code, out, err, file)
    plan = _invoke("plan", file, *PLAN)
    _check("plan", what, *plan, file)
    if code == 2:  # refused: sim refuses it the same way (cheap); an accepted one would fly
        sim = _invoke("sim", file)
        _check("sim", what, *sim, file)
        assert sim[2] == err, "isr sim and isr validate refuse a file differently"
    else:
        assert plan[0] == 0 or "$" in plan[2], what


# ----- a few through a real process: what reaches a terminal -------------------------------


def _text(data: Any) -> str:
    return json.dumps(data, allow_nan=True)


def _with(path: tuple[Any, ...], value: Any) -> str:
    data = copy.deepcopy(DEMO)
    _put(data, path, value)
    return _text(data)


SUBPROCESS_FILES: dict[str, str] = {
    "markup and control id": _with(("environment", "targets", 0, "id"), "[/]\x1b[2J"),
    "priority true": _with(("environment", "targets", 0, "priority"), True),
    "x NaN literal": _with(("environment", "targets", 0, "x"), math.nan),
    "deep nesting": "[" * 100_000 + "]" * 100_000,
    "duplicate keys": _text(DEMO)[:-1] + ', "environment": {}}',
    "targets above the limit": _text(
        {
            **DEMO,
            "environment": {
                **DEMO["environment"],
                "targets": [
                    {"id": f"T{i}", "x": 1, "y": 1, "priority": 1, "type": "A"}
                    for i in range(MAX_TARGETS + 1)
                ],
            },
        }
    ),
}


PLANNED = ("markup and control id", "deep nesting")


@pytest.mark.parametrize("name", sorted(SUBPROCESS_FILES))
def test_no_traceback_reaches_a_terminal(name, tmp_path):
    file = tmp_path / "hostile.json"
    file.write_text(SUBPROCESS_FILES[name])
    # validate for each (a process start is ~1 s); plan for two, its load is the same
    for command in ("validate", "plan") if name in PLANNED else ("validate",):
        done = subprocess.run(
            [sys.executable, "-m", "cli", command, str(file)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        _check(command, name, done.returncode, done.stdout, done.stderr, file)
        assert done.returncode == 2, f"{name}: isr {command} accepted it\n{done.stdout}"
