"""Telemetry frames packed for the store: whole columns of float64 and a status code per
drone, compressed, instead of a JSON object per drone; and the large JSON payloads (scene
snapshots, plan versions' solutions) as compressed JSON text.

A frame of 1,000 drones is about 140 kB of JSON; packed, the same frame, exactly (float64
keeps every bit a JSON float keeps), is a few times smaller and is written without
walking a dict per drone. ``pack_frame`` packs only frames of the shape the sim sends
(``sim.DroneTelemetry``: these keys, in this order, floats and a status name); any other
frame stays JSON, so nothing a store is given is changed by packing it.
"""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

import numpy as np

from executive.traces.pieces import dumps

__all__ = ["pack_frame", "pack_json", "unpack_frame", "unpack_json"]

_MAGIC = b"TLM1"
_JSON = b"JSZ1"
_FLOATS = ("x", "y", "heading", "fuel", "s")
_KEYS = (*_FLOATS, "status", "points")  # a frame's keys, in the sim's order


def pack_frame(drones: dict[str, dict[str, Any]]) -> bytes | None:
    """``drones`` (id -> telemetry) packed, or None when it is not a frame of the sim's
    shape (then it is stored as JSON)."""
    ids = list(drones)
    columns: list[list[float]] = [[] for _ in range(len(_FLOATS) + 1)]
    statuses: list[str] = []
    for t in drones.values():
        if tuple(t) != _KEYS or type(t["status"]) is not str:
            return None
        values = (*(t[k] for k in _FLOATS), t["points"])
        if any(type(v) is not float for v in values):
            return None  # an int or a numpy float would not come back the same
        for column, v in zip(columns, values, strict=True):
            column.append(v)
        statuses.append(t["status"])
    names = sorted(set(statuses))
    code = {name: k for k, name in enumerate(names)}
    header = json.dumps({"ids": ids, "names": names}).encode()
    body = b"".join(
        (
            struct.pack("<I", len(header)),
            header,
            np.asarray(columns, dtype="<f8").tobytes(),
            np.asarray([code[s] for s in statuses], dtype=np.uint8).tobytes(),
        )
    )
    return _MAGIC + zlib.compress(body, 1)


def unpack_frame(blob: bytes) -> dict[str, dict[str, Any]]:
    """The frame ``pack_frame`` packed, exactly as it was given."""
    if bytes(blob[:4]) != _MAGIC:
        raise ValueError("not a packed telemetry frame")
    body = zlib.decompress(blob[4:])
    (size,) = struct.unpack_from("<I", body)
    header = json.loads(body[4 : 4 + size])
    ids, names = header["ids"], header["names"]
    n = len(ids)
    at = 4 + size
    rows = np.frombuffer(body, dtype="<f8", count=(len(_FLOATS) + 1) * n, offset=at)
    x, y, heading, fuel, s, points = rows.reshape(len(_FLOATS) + 1, n).tolist() if n else [[]] * 6
    codes = np.frombuffer(body, dtype=np.uint8, count=n, offset=at + rows.nbytes).tolist()
    return {
        d: {
            "x": x[i],
            "y": y[i],
            "heading": heading[i],
            "fuel": fuel[i],
            "s": s[i],
            "status": names[codes[i]],
            "points": points[i],
        }
        for i, d in enumerate(ids)
    }


def pack_json(value: Any) -> bytes:
    """``value``'s JSON text (``pieces.dumps``: the GIL is let go between parts), compressed
    (zlib lets the GIL go while it works). At 1,000 drones x 5,000 targets a scene snapshot
    is 1.4 MB of JSON and a plan's solution 0.8 MB: 75 % of the store per mission hour."""
    return _JSON + zlib.compress(dumps(value).encode(), 1)


def unpack_json(blob: bytes) -> Any:
    """The value ``pack_json`` packed, as ``json.loads`` of its JSON text gives it."""
    if bytes(blob[:4]) != _JSON:
        raise ValueError("not packed JSON")
    return json.loads(zlib.decompress(blob[4:]))
