"""Trace rows to JSON in pieces (``executive.traces.pieces``): the very text ``json.dumps``
gives, and a record's row without a deep copy."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from executive.contracts import EventRecord, SnapshotRecord
from executive.traces.pieces import dumps, row_of


@dataclasses.dataclass(frozen=True)
class _Point:
    x: float
    y: float
    tags: tuple[str, ...] = ()


def _scene(n: int) -> dict:
    """A scene-like payload: long lists of small dicts, a map of long lists, odd values."""
    return {
        "tick": 7,
        "targets": [{"id": f"T{i}", "x": i / 3, "type": "ABC"[i % 3]} for i in range(n)],
        "routes": {str(d): {"path": [[d + 0.1 * k, -k] for k in range(50)]} for d in range(40)},
        "keys": {1: "int", 2.5: "float", False: "bool", None: "none"},
        "odd": [math.inf, -math.inf, 1e-300, 'é ☃ "quoted" \n', (1, 2), [], {}],
        "nested": {"a": {"b": {"c": [[list(range(40))] * 3]}}},
    }


@pytest.mark.parametrize("n", [0, 1, 33, 500])
def test_the_text_is_json_dumps_text(n):
    scene = _scene(n)
    assert dumps(scene) == json.dumps(scene)
    assert dumps(list(scene.values())) == json.dumps(list(scene.values()))
    for value in (None, 3, "x", 2.5, [], {}, [1] * 100):
        assert dumps(value) == json.dumps(value)


def test_a_dataclass_inside_a_payload_is_its_asdict():
    payload = {"at": _Point(1.0, 2.0, ("a",)), "many": [_Point(k, k) for k in range(40)]}
    # what the writer stored before: the record's asdict (a deep copy), then json.dumps
    before = json.dumps(dataclasses.asdict(EventRecord("r", 1, "K", payload))["payload"])
    assert dumps(payload) == before


def test_what_json_dumps_refuses_is_refused():
    with pytest.raises(TypeError):
        dumps({"x": object()})
    with pytest.raises(TypeError):
        dumps({(1, 2): "tuple key"})
    loop: list = []
    loop.append(loop)
    with pytest.raises((ValueError, RecursionError)):
        dumps({"loop": loop})


def test_a_records_row_holds_its_values_not_copies():
    scene = _scene(3)
    record = SnapshotRecord("run", 5, scene)
    row = row_of(record)
    assert row == dataclasses.asdict(record)
    assert row["scene"] is scene  # encoded by the store; no deep copy on the way


@pytest.mark.parametrize("n", [0, 33, 500])
def test_sorted_compact_text_with_a_default_is_json_dumps_text(n):
    scene = {**_scene(n), "points": [_Point(1.0, 2.0)] * 40, "z": {"b": 1, "a": [3] * 40}}
    del scene["keys"]  # json.dumps cannot sort keys of mixed types either
    options = {"sort_keys": True, "separators": (",", ":"), "default": str}
    assert dumps(scene, **options) == json.dumps(scene, **options)
    mixed_ok = {1: "a", 2: "b", **{str(k): k for k in range(40)}}
    with pytest.raises(TypeError):
        json.dumps(mixed_ok, sort_keys=True)
    with pytest.raises(TypeError):
        dumps(mixed_ok, sort_keys=True)
    numbers = {3: "c", 1: "a", 2.5: "b", **{k: k for k in range(10, 50)}}
    assert dumps(numbers, **options) == json.dumps(numbers, **options)


_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
)
_KEY = st.one_of(st.text(max_size=6), st.integers(-50, 50))
# long runs of flat items (batched into one call) between containers that are split
_TREE = st.recursive(
    _SCALAR,
    lambda inner: st.one_of(
        st.lists(inner, max_size=80),
        st.lists(inner, max_size=5).map(tuple),
        st.dictionaries(_KEY, inner, max_size=70),
    ),
    max_leaves=400,
)


@settings(max_examples=150, deadline=None)
@given(value=_TREE, compact=st.booleans())
def test_any_tree_of_json_values_is_json_dumps_text(value, compact):
    # flat items go to json.dumps in runs, the others one by one: the text is the same
    options = {"separators": (",", ":")} if compact else {}
    assert dumps(value, **options) == json.dumps(value, **options)
    str_keys = json.loads(json.dumps(value))  # sortable: every key a string
    sorted_options = {"sort_keys": True, "separators": (",", ":"), "default": str}
    assert dumps(str_keys, **sorted_options) == json.dumps(str_keys, **sorted_options)
