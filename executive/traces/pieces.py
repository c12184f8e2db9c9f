"""Trace rows to JSON in pieces: the text ``json.dumps`` gives, without holding the GIL long.

The C encoder behind ``json.dumps`` holds the GIL for the whole of one call. At 1,000
drones x 5,000 targets a scene snapshot (1.4 MB of JSON) took 26-35 ms and a plan version
(0.8 MB) 27-30 ms in one call on the trace writer's thread: a tick due meanwhile waited
that long. ``dumps`` encodes the outer containers itself and the parts inside them with
``json.dumps`` (one target, one drone, one route each), so the interpreter can switch to
the tick's thread between parts; the text is the same, character for character.

``row_of`` is a record's fields as a row, without ``dataclasses.asdict``'s deep copy of
every payload (124-153 ms of CPU per snapshot at that size): the store encodes the
payloads anyway, and ``dumps`` turns a dataclass met inside one into its ``asdict``, as
the deep copy did.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

__all__ = ["dumps", "row_of"]

_SPLIT = 32  # a container with more items than this is split, at any depth
_ALWAYS = 2  # the outermost levels are always split: a small dict may hold a long list
_DEEPEST = 16  # below this, one call (which finds a cycle, as json.dumps does)
# Of a split container, this many flat items in a row (scalars, or at most ``_SPLIT``
# scalars in a dict or list) go to one call: 1,000 drones' and 5,000 targets' items one
# call each took 31 ms for a scenario json.dumps writes in 13; in batches the calls stay
# well under a millisecond each
_BATCH = 32
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _as_json(value: object) -> object:
    """What ``json.dumps`` cannot encode by itself: a dataclass, as its ``asdict``."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def dumps(
    value: Any,
    *,
    sort_keys: bool = False,
    separators: tuple[str, str] = (", ", ": "),
    default: Callable[[Any], Any] | None = None,
) -> str:
    """``json.dumps(value, sort_keys=..., separators=..., default=...)`` encoded in pieces
    (dataclasses as their ``asdict`` when no ``default`` is given)."""
    parts: list[str] = []
    options = {"sort_keys": sort_keys, "separators": separators, "default": default or _as_json}
    _encode(value, 0, parts, options)
    return "".join(parts)


def _encode(value: Any, depth: int, parts: list[str], options: dict[str, Any]) -> None:
    dataclass = dataclasses.is_dataclass(value) and not isinstance(value, type)
    if dataclass and options["default"] is _as_json:
        value = dataclasses.asdict(value)
    split = isinstance(value, (dict, list, tuple)) and (
        depth < _ALWAYS or (len(value) > _SPLIT and depth < _DEEPEST)
    )
    if not split:
        parts.append(json.dumps(value, **options))
        return
    item_sep, key_sep = options["separators"]
    if isinstance(value, dict):
        parts.append("{")
        items = list(
            sorted(value.items(), key=lambda kv: kv[0]) if options["sort_keys"] else value.items()
        )
        k = 0
        while k < len(items):
            if k:
                parts.append(item_sep)
            end = _flat_run(items, k, lambda kv: kv[1])
            if end > k:  # json.dumps's text of those items, its braces left out
                parts.append(json.dumps(dict(items[k:end]), **options)[1:-1])
                k = end
                continue
            key, item = items[k]
            # json.dumps's own key text (an int, float, bool or None key becomes a string)
            if isinstance(key, str):
                parts.append(json.dumps(key))
            else:
                parts.append(json.dumps({key: 0}, **options)[1 : -len(key_sep) - 2])
            parts.append(key_sep)
            _encode(item, depth + 1, parts, options)
            k += 1
        parts.append("}")
        return
    parts.append("[")
    values = value if isinstance(value, list) else list(value)
    k = 0
    while k < len(values):
        if k:
            parts.append(item_sep)
        end = _flat_run(values, k, lambda v: v)
        if end > k:  # json.dumps's text of those items, its brackets left out
            parts.append(json.dumps(values[k:end], **options)[1:-1])
            k = end
            continue
        _encode(values[k], depth + 1, parts, options)
        k += 1
    parts.append("]")


def _flat_run(items: list[Any], k: int, of: Callable[[Any], Any]) -> int:
    """The end of the run of at most ``_BATCH`` flat items from ``k`` (``k``: none is)."""
    end = k
    while end < len(items) and end - k < _BATCH and _flat(of(items[end])):
        end += 1
    return end


def _flat(item: Any) -> bool:
    """A scalar, or a dict or list of at most ``_SPLIT`` scalars: one call encodes it
    briefly, as json.dumps would (exact types: a subclass goes the long way)."""
    kind = type(item)
    if kind in _SCALARS:
        return True
    if kind is dict:
        return len(item) <= _SPLIT and all(type(v) in _SCALARS for v in item.values())
    if kind is list or kind is tuple:
        return len(item) <= _SPLIT and all(type(v) in _SCALARS for v in item)
    return False


def row_of(record: Any) -> dict[str, Any]:
    """A dataclass record's fields by name, the values as they are (not copied)."""
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
