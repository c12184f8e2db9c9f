"""JSON made off the tick: a plan's dump and its commands' input rows, prepared in the
worker thread that made the plan, so the commit tick only looks them up.

At 1,000 drones the plan's ``model_dump`` and its 1,000 ``fly_path`` rows cost over 100 ms:
on the tick, that is two periods late. ``prepare_json`` writes them in small pieces (one route,
one command at a time), so the worker hands the GIL back to the tick between pieces; the
tick's ``solution_json`` / ``input_json`` return what was prepared, or make it there and
then (a plan nobody prepared: the first plan, a safety divert), the same JSON either way.

The JSON is shared by every record made from the same object (a draft's version, its
commit, the bus): readers must not change it, as they must not change any record.
Entries hold their object, so an id is never reused while its entry lives.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from executive.traces.codec import input_to_json
from planner.edits import Edit
from planner.model import Solution
from sim import Command

__all__ = ["input_json", "prepare_json", "solution_json"]

# Plans kept (a draft's dump is read again at its commit); command rows are dropped when
# read. Few: every list kept is one more for the cyclic collector's full passes (a plan's
# dump at 1,000 drones is tens of thousands of lists).
_SOLUTIONS = 4
_INPUTS = 8_192

_lock = threading.Lock()
_solutions: OrderedDict[int, tuple[Solution, dict[str, Any]]] = OrderedDict()
_inputs: OrderedDict[int, tuple[Edit | Command, tuple[str, dict[str, Any]]]] = OrderedDict()


def _dump(solution: Solution) -> dict[str, Any]:
    """``solution.model_dump(mode="json")``, one route at a time (same keys, same order)."""
    out: dict[str, Any] = {}
    for name in type(solution).model_fields:
        if name == "routes":
            out[name] = {d: r.model_dump(mode="json") for d, r in solution.routes.items()}
        else:
            out.update(solution.model_dump(mode="json", include={name}))
    return out


def _keep(cache: OrderedDict[int, Any], key: int, entry: Any, limit: int) -> None:
    with _lock:
        cache[key] = entry
        cache.move_to_end(key)
        while len(cache) > limit:
            cache.popitem(last=False)


def prepare_json(solution: Solution | None, commands: Iterable[Edit | Command] = ()) -> None:
    """Make ``solution``'s dump and each command's input row now (a worker thread)."""
    if solution is not None and solution_json(solution, make=False) is None:
        _keep(_solutions, id(solution), (solution, _dump(solution)), _SOLUTIONS)
    for command in commands:
        if _lookup(_inputs, command) is None:
            _keep(_inputs, id(command), (command, input_to_json(command)), _INPUTS)


def _lookup(cache: OrderedDict[int, Any], item: object, *, drop: bool = False) -> Any:
    with _lock:
        entry = cache.pop(id(item), None) if drop else cache.get(id(item))
    return entry[1] if entry is not None and entry[0] is item else None


def solution_json(solution: Solution, *, make: bool = True) -> Any:
    """``solution.model_dump(mode="json")``: prepared, else made now (None if not ``make``)."""
    found = _lookup(_solutions, solution)
    if found is None and make:
        found = solution.model_dump(mode="json")
    return found


def input_json(item: Edit | Command, stamped: Edit | Command) -> tuple[str, dict[str, Any]]:
    """The input row of ``stamped``, the copy of ``item`` the sim queued: ``item``'s prepared
    row when stamping changed nothing (the tick it already had), else made now."""
    if getattr(item, "tick", None) == getattr(stamped, "tick", None):
        found = _lookup(_inputs, item, drop=True)  # each command is submitted once
        if found is not None:
            return found  # type: ignore[no-any-return]
    return input_to_json(stamped)
