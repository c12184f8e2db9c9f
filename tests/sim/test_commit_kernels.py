"""The small kernels a commit's tick runs for the flights it begins
(``sim._kernels.airports_at``, ``put_columns``) answer as the numpy operations they replaced,
and hold the GIL: a swarm's commit begins ~780 flights on one tick, and each numpy call
released the GIL and waited to take it back from a planner's thread."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import sim._kernels as K
from sim._fleet import AIRPORT_TOLERANCE

_coord = st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False)


def _numpy_airport_at(airports: np.ndarray, x: float, y: float, tol: float) -> int:
    gaps = np.hypot(airports[:, 0] - x, airports[:, 1] - y)
    k = int(np.argmin(gaps))
    return k if gaps[k] <= tol else -1


@settings(max_examples=300, deadline=None)
@given(
    airports=st.lists(st.tuples(_coord, _coord), min_size=1, max_size=30),
    pick=st.integers(0, 29),
    offset=st.sampled_from([0.0, 1e-7, 5e-7, 2e-6, 1.0]),
    far=st.tuples(_coord, _coord),
    twin=st.sampled_from([None, 0.0, 3e-7, 1.5e-6, 3e-6]),
)
def test_airport_at_is_numpys_nearest_within_the_tolerance(
    airports, pick, offset, far, twin
) -> None:
    xy = np.array(airports, dtype=np.float64)
    ax, ay = xy[pick % len(xy)]
    if twin is not None:  # an airport right next to the one picked: which is nearer?
        xy = np.vstack([xy, [ax + twin, ay]])
    points = [(ax + offset, ay), (ax, ay - offset), far]
    got = K.airports_at(xy, np.array(points), AIRPORT_TOLERANCE)
    assert got.tolist() == [_numpy_airport_at(xy, x, y, AIRPORT_TOLERANCE) for x, y in points]


def test_airport_at_takes_the_first_of_equal_airports() -> None:
    xy = np.array([[5.0, 0.0], [0.0, 0.0], [0.0, 0.0]])
    got = K.airports_at(xy, np.array([[0.0, 0.0], [0.0, 1.0]]), AIRPORT_TOLERANCE)
    assert got.tolist() == [1, -1]
    assert K.airports_at(xy, np.zeros((0, 2)), AIRPORT_TOLERANCE).shape == (0,)


@settings(max_examples=100, deadline=None)
@given(
    pieces=arrays(np.float64, st.tuples(st.just(9), st.integers(1, 12)), elements=_coord),
    lo=st.integers(0, 20),
)
def test_put_columns_is_a_slice_assignment(pieces, lo) -> None:
    pieces.flags.writeable = False  # as laid-out piece tables are
    dst = np.arange(9 * 40, dtype=np.float64).reshape(9, 40)
    want = dst.copy()
    want[:, lo : lo + pieces.shape[1]] = pieces
    K.put_columns(dst, lo, pieces)
    assert np.array_equal(dst, want)


def test_the_per_flight_kernels_hold_the_gil() -> None:
    # released, each call waited to take the GIL back (bench/executive_ticks.py --airports)
    for kernel in (K.airports_at, K.put_columns, K.hold_clearances, K.any_airborne):
        assert not kernel.targetoptions.get("nogil", False), kernel
