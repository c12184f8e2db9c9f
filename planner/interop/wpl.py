"""Text missions in, for ``isr import``: the "QGC WPL 110" format Mission Planner, MAVProxy
and ArduPilot's autotest missions use (and "QGC WPL 120", QGroundControl's older one).

A file is a header line, then one item per line: 12 fields (seq, current, frame, command,
param1-4, latitude, longitude, altitude, autocontinue). In version 110 the first item is
the home position. Read as leniently as the tools that write it read it back: fields split
on any whitespace, blank lines and ``#`` comment lines skipped (pymavlink's ``mavwp``
does the same; QGroundControl refuses both, so ``isr plan --export mavlink`` writes neither),
``nan`` for an unset param. Everything else is a problem naming the line and the field,
all of them at once. The items go into the same model as a ``.plan`` file's
(``qgc_format.PlanIn``), so one importer serves both (``qgc.scenario_from_qgc``).
"""

from __future__ import annotations

import math
from typing import Any, Final

from pydantic import ValidationError

from planner.interop.qgc import PlanSource, QgcPlanError
from planner.interop.qgc_format import PlanIn

__all__ = ["FIELDS", "is_wpl", "read_wpl"]

HEADER_PREFIX: Final = "QGC WPL"
HOME_IN_FILE: Final = {"110": True, "120": False}  # version -> item 0 is the home position
FIELDS: Final = (
    "seq",
    "current",
    "frame",
    "command",
    "param1",
    "param2",
    "param3",
    "param4",
    "latitude",
    "longitude",
    "altitude",
    "autocontinue",
)
_INTS = {"seq": 2**31, "current": 2, "frame": 256, "command": 65536, "autocontinue": 2}
_BOUNDS = {"latitude": 90.0, "longitude": 180.0}


def is_wpl(text: str) -> bool:
    """Whether ``text`` starts like a text mission (its header), not like JSON."""
    return text.lstrip("\ufeff \t\r\n").startswith(HEADER_PREFIX)


def read_wpl(text: str, source: str) -> PlanSource:
    """A text mission as a ``PlanSource`` whose items say their line (``line 5``);
    QgcPlanError naming every bad line and field otherwise."""
    lines = text.lstrip("\ufeff").splitlines()
    header = lines[0].split() if lines else []
    version = header[2] if len(header) == 3 and header[:2] == ["QGC", "WPL"] else None
    if version not in HOME_IN_FILE:
        got = lines[0] if lines else ""
        raise QgcPlanError(
            source,
            [f'line 1: expected the header "QGC WPL 110" (or "QGC WPL 120"), got {got[:60]!r}'],
        )
    items: list[dict[str, Any]] = []
    line_of: list[int] = []
    problems: list[str] = []
    for n, line in enumerate(lines[1:], start=2):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if len(words) != len(FIELDS):
            problems.append(
                f"line {n}: {len(words)} fields; an item has {len(FIELDS)} ({', '.join(FIELDS)})"
            )
            continue
        item, wrong = _item(dict(zip(FIELDS, words)))
        problems.extend(f"line {n}: {w}" for w in wrong)
        if not wrong:
            items.append(item)
            line_of.append(n)
    if problems:
        raise QgcPlanError(source, problems)
    home: list[float] = [0.0, 0.0, 0.0]  # (0, 0): unset; the importer places the mission
    home_at = "line 2"
    if HOME_IN_FILE[version]:
        if not items:
            raise QgcPlanError(source, ["line 2: no items, not even the home position"])
        first = items.pop(0)
        home_at = f"line {line_of.pop(0)}"
        lat, lon, alt = first["params"][4:7]
        home = [lat or 0.0, lon or 0.0, alt or 0.0]
    data = {
        "fileType": "Plan",
        "version": 1,
        "groundStation": "text mission",
        "mission": {"plannedHomePosition": home, "items": items},
        "geoFence": {},
        "rallyPoints": {},
    }
    try:
        plan = PlanIn.model_validate(data)
    except ValidationError as exc:  # each field was checked above: a slip here is named
        loc = exc.errors(include_url=False)[0]["loc"]
        index = loc[2] if len(loc) > 2 and loc[:2] == ("mission", "items") else None
        at = f"line {line_of[index]}" if isinstance(index, int) else home_at
        raise QgcPlanError(source, [f"{at}: {exc.errors()[0]['msg']}"]) from None
    return PlanSource(source, plan, tuple(f"line {n}" for n in line_of), home_at)


def _item(words: dict[str, str]) -> tuple[dict[str, Any], list[str]]:
    """One line's fields as a ``SimpleItemIn``'s data, and what is wrong with them."""
    wrong: list[str] = []
    ints: dict[str, int] = {}
    for name, limit in _INTS.items():
        try:
            ints[name] = int(words[name], 10)
        except ValueError:
            wrong.append(f"{name} {words[name][:30]!r} is not a whole number")
            continue
        if not 0 <= ints[name] < limit:
            wrong.append(f"{name} {ints[name]} is out of range (0 to {limit - 1})")
    numbers: list[float | None] = []
    for name in FIELDS[4:11]:
        try:
            value = float(words[name])
        except ValueError:
            wrong.append(f"{name} {words[name][:30]!r} is not a number")
            continue
        if math.isnan(value):
            numbers.append(None)  # unset, as QGC writes NaN
        elif math.isinf(value):
            wrong.append(f"{name} {words[name]!r} is not a finite number")
        elif name in _BOUNDS and abs(value) > _BOUNDS[name]:
            bound = _BOUNDS[name]
            wrong.append(f"{name} {value:g} is out of range (-{bound:g} to {bound:g} degrees)")
        else:
            numbers.append(value)
    if wrong:
        return {}, wrong
    return {
        "type": "SimpleItem",
        "command": ints["command"],
        "frame": ints["frame"],
        "autoContinue": bool(ints["autocontinue"]),
        "params": numbers,
    }, []
