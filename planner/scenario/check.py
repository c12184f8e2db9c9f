"""Every problem of a scenario at once: its form, its schema and its references together.

A schema error must not hide the other checks: a file with a negative fuel budget and an
unknown airport names both in one run. When the schema refuses the file, the broken parts
are set aside on a copy (a broken target, SAM, airport or timeline edit is left out, a
broken drone field falls back to its default, a broken fuel budget to 0) until the rest
validates, and the cross-reference checks (``references.scenario_problems``) run on that.
What they say about a part set aside is dropped (it is already named by the schema): a
problem at or under a repaired drone field, one mentioning an id that was left out, and "no
eligible target" once a target was left out. Paths keep the file's own indices.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from planner.model import Scenario
from planner.scenario.forms import normal_form
from planner.scenario.paths import json_path, schema_loc, schema_problems
from planner.scenario.references import scenario_problems

__all__ = ["check_scenario_data"]

_ROUNDS = 5  # a repair can uncover errors the first validation did not reach
_LISTS = ("airports", "targets", "sams")
_FUEL_KEYS = ("fuelBudget", "fuel_budget")


def check_scenario_data(data: dict[str, Any]) -> tuple[Scenario | None, list[str]]:
    """(the scenario, []) when ``data`` is usable, else (None or the scenario, every
    problem: form, schema and references, one line ``<JSON path>: <what>`` each)."""
    data, problems, quiet = normal_form(data)
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        named = [p for p in schema_problems(exc) if _path_of(p) not in quiet]
        return None, _unique(problems + named + _salvaged(data, exc))
    return scenario, problems + scenario_problems(scenario)


def _path_of(problem: str) -> str:
    return problem.split(": ", 1)[0]


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


@dataclass
class _Salvage:
    """A copy of the data with the broken parts set aside, and what was set aside."""

    data: dict[str, Any]
    kept: dict[str, list[int]] = field(default_factory=dict)  # list -> original indices kept
    quiet: set[str] = field(default_factory=set)  # paths (and below) already named
    quiet_exact: set[str] = field(default_factory=set)
    gone_ids: set[str] = field(default_factory=set)
    targets_gone: bool = False

    def original(self, kind: str, index: int) -> int:
        kept = self.kept.get(kind)
        return kept[index] if kept is not None and index < len(kept) else index

    def prune(self, holder: list[Any], kind: str, indices: set[int]) -> None:
        """Remove ``indices`` (current ones) from the list ``kind``, keeping the map back."""
        kept = self.kept.setdefault(kind, list(range(len(holder))))
        for i in sorted(indices, reverse=True):
            if 0 <= i < len(holder):
                item = holder.pop(i)
                del kept[i]
                if isinstance(item, dict) and isinstance(item.get("id"), str):
                    self.gone_ids.add(item["id"])
        if kind == "targets":
            self.targets_gone = True


def _salvaged(data: dict[str, Any], exc: ValidationError) -> list[str]:
    """The reference problems of what is left once the schema's errors are set aside
    (none when the file's frame, its environment or drones, is itself broken)."""
    salvage = _Salvage(copy.deepcopy(data))
    for _ in range(_ROUNDS):
        prunes: dict[str, set[int]] = {}
        for err in exc.errors(include_url=False):
            loc = schema_loc(err["loc"])
            if not _repair(salvage, loc, prunes, json_path):
                return []
        for kind, indices in prunes.items():
            holder = _list_of(salvage.data, kind)
            if holder is not None:
                salvage.prune(holder, kind, indices)
        try:
            scenario = Scenario.model_validate(salvage.data)
        except ValidationError as again:
            exc = again
            continue
        except RecursionError:
            return []
        return [p for p in map(_restated(salvage), scenario_problems(scenario)) if p is not None]
    return []


def _list_of(data: dict[str, Any], kind: str) -> list[Any] | None:
    if kind == "timeline":
        holder = data.get("timeline")
    else:
        env = data.get("environment")
        holder = env.get(kind) if isinstance(env, dict) else None
    return holder if isinstance(holder, list) else None


def _repair(
    salvage: _Salvage,
    loc: list[Any],
    prunes: dict[str, set[int]],
    json_path: Callable[[list[Any]], str],
) -> bool:
    """Set aside what the error at ``loc`` is about; False when nothing sensible remains."""
    data = salvage.data
    if not loc:
        return False
    head = loc[0]
    if head == "environment":
        env = data.get("environment")
        if len(loc) < 2 or not isinstance(env, dict):
            return False
        part = loc[1]
        if part in _LISTS and len(loc) >= 3 and isinstance(loc[2], int):
            prunes.setdefault(part, set()).add(loc[2])  # indices of the current list
            return True
        if part == "synthetic_starts" and len(loc) >= 3 and isinstance(env.get(part), dict):
            env[part].pop(loc[2], None)
            salvage.gone_ids.add(str(loc[2]))
            return True
        if part == "airports":
            return False  # no airport left: nothing can be checked against them
        if part in _LISTS:
            salvage.targets_gone |= part == "targets"
        env.pop(part, None)  # a broken list or an unknown key: its default stands
        return True
    if head == "drone_configs":
        drones = data.get("drone_configs")
        if len(loc) < 2 or not isinstance(drones, dict):
            return False
        drone_id = loc[1]
        drone = drones.get(drone_id)
        if len(loc) == 2 or not isinstance(drone, dict):
            drones.pop(drone_id, None)
            salvage.gone_ids.add(str(drone_id))
            return bool(drones)
        at = json_path(["drone_configs", drone_id])
        name = loc[2]
        if name in _FUEL_KEYS:
            for key in _FUEL_KEYS:
                drone.pop(key, None)
            drone["fuelBudget"] = 0.0  # a stand-in, so its other fields are still checked
            salvage.quiet.add(f"{at}.fuelBudget")
        else:
            drone.pop(name, None)
            salvage.quiet.add(json_path(["drone_configs", drone_id, name]))
            salvage.quiet_exact.add(at)
        return True
    if head == "timeline" and len(loc) >= 2 and isinstance(loc[1], int):
        prunes.setdefault("timeline", set()).add(loc[1])
        return True
    if head == "sim" and len(loc) >= 3 and isinstance(data.get("sim"), dict):
        section = data["sim"].get(loc[1])
        if isinstance(section, dict):
            section.pop(loc[2], None)
            return True
    data.pop(head, None)  # sim, timeline, geo or an unknown key: the default stands
    return head not in ("environment", "drone_configs")


_DRONE_PATH = re.compile(r'^\$\.drone_configs\[("(?:[^"\\]|\\.)*")\]')
_DRONE_REFS = ("home_airport", "start_airport", "end_airport")


def _drone_refs(salvage: _Salvage, path: str) -> set[str]:
    """The airport ids the drone at ``path`` names (none if the path is not a drone's)."""
    match = _DRONE_PATH.match(path)
    drones = salvage.data.get("drone_configs")
    if match is None or not isinstance(drones, dict):
        return set()
    drone = drones.get(json.loads(match.group(1)))
    if not isinstance(drone, dict):
        return set()
    ends = drone.get("allowed_ends")
    named = [drone.get(k) for k in _DRONE_REFS] + (ends if isinstance(ends, list) else [])
    return {n for n in named if isinstance(n, str)}


_ENV_PATH = re.compile(r"^\$\.environment\.(airports|targets|sams)\[(\d+)\]")
_TIMELINE_PATH = re.compile(r"^\$\.timeline\[(\d+)\]")
_ALSO_AT = re.compile(r"also at index (\d+)")


def _restated(salvage: _Salvage) -> Callable[[str], str | None]:
    """A reference problem in the file's own indices, or None when it is about a part
    set aside."""

    def restate(problem: str) -> str | None:
        kind = None
        match = _ENV_PATH.match(problem)
        if match:
            kind = match.group(1)
            index = salvage.original(kind, int(match.group(2)))
            problem = f"$.environment.{kind}[{index}]" + problem[match.end() :]
            problem = _ALSO_AT.sub(
                lambda m: f"also at index {salvage.original(str(kind), int(m.group(1)))}",
                problem,
            )
        match = _TIMELINE_PATH.match(problem)
        if match:
            index = salvage.original("timeline", int(match.group(1)))
            problem = f"$.timeline[{index}]" + problem[match.end() :]
        path = _path_of(problem)
        if path in salvage.quiet_exact or any(
            path == q or path.startswith((f"{q}.", f"{q}[")) for q in salvage.quiet
        ):
            return None
        if any(repr(gone) in problem for gone in salvage.gone_ids):
            return None
        if _drone_refs(salvage, path) & salvage.gone_ids:
            return None  # "mode 'return' needs a home_airport that is an airport", say
        if salvage.targets_gone and "has no eligible target" in problem:
            return None
        return problem

    return restate
