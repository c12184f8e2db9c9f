"""The tick's hot loop: every drone moved along its path and checked, in one numba call.

Phases, each a pass over the drones in index order (so events come out ordered by phase,
then by drone): move and burn fuel; collect (planned waypoints, then targets passed within
the capture radius); detect hidden SAMs; lose drones inside a true SAM; land drones at the
end of their path; lose drones with no fuel. Targets and SAMs near a drone's swept segment
come from uniform grids built each tick (``_grid``, ``_near``), in ascending index: a swarm
of 10,000 drones does not test every drone against every target and SAM. The kernel writes events as int rows
``(code, drone, object, aux)``; ``sim._fleet`` turns them into typed events.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numba import njit
from numpy.typing import NDArray

# The arrays the kernel reads and writes (numba ignores these annotations; mypy reads them).
FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]
StatusArray = NDArray[np.int8]

# Drone status codes and their names.
PARKED, FLYING, HOLDING, LANDED, LOST = 0, 1, 2, 3, 4
DroneStatus = Literal["parked", "flying", "holding", "landed", "lost"]
STATUS_NAMES: tuple[DroneStatus, ...] = ("parked", "flying", "holding", "landed", "lost")

# Rows of the fleet's float array.
X, Y, HDG, SPEED, FUEL, S, LEN, ODO, OX, OY = range(10)
N_FLEET_ROWS = 10

# Event codes written by the kernel.
EV_COLLECTED, EV_MISSED, EV_DETECTED, EV_LOST_SAM, EV_LANDED, EV_ARRIVED, EV_LOST_FUEL = range(1, 8)
# TargetMissed reasons (aux of EV_MISSED).
MISS_REMOVED, MISS_MOVED, MISS_TAKEN, MISS_SENSOR = range(4)

# A drone whose fuel runs out this close (km) to the end of its path still arrives: plans
# are feasible to rounding (1e-9), and rounding must not shoot a drone down on the runway.
FUEL_TOLERANCE = 1e-9
# A point on a true SAM circle is not inside it (same hair as the planner's).
SAM_TOLERANCE = 1e-9
_WAYPOINT_SLACK = 1e-9


@njit(cache=True, nogil=True, inline="always")
def _wrap(a: float) -> float:
    return math.atan2(math.sin(a), math.cos(a))


@njit(cache=True, nogil=True)
def _locate(P: FloatArray, k: int, u: float) -> tuple[float, float, float]:
    """(x, y, heading) at arc length u into piece k (the formulas of planner.geometry)."""
    if P[0, k] == 0.0:  # line
        length = P[6, k]
        t = 0.0
        if length > 0.0:
            t = min(max(u / length, 0.0), 1.0)
        return P[1, k] + t * P[3, k], P[2, k] + t * P[4, k], P[8, k]
    r = P[3, k]
    sign = P[5, k]
    span = min(max(u, 0.0), P[6, k])
    a = P[4, k]
    if r > 0.0:
        a = a + sign * (span / r)
    return P[1, k] + r * math.cos(a), P[2, k] + r * math.sin(a), _wrap(a + sign * 0.5 * math.pi)


@njit(cache=True, nogil=True, inline="always")
def _seg_dist2(x0: float, y0: float, x1: float, y1: float, px: float, py: float) -> float:
    """Squared distance from point p to the segment (x0, y0)-(x1, y1)."""
    dx = x1 - x0
    dy = y1 - y0
    dd = dx * dx + dy * dy
    t = 0.0
    if dd > 0.0:
        t = ((px - x0) * dx + (py - y0) * dy) / dd
        t = min(max(t, 0.0), 1.0)
    ex = x0 + t * dx - px
    ey = y0 + t * dy - py
    return ex * ex + ey * ey


@njit(cache=True, nogil=True)
def _grid(
    xs: FloatArray, ys: FloatArray, reach: FloatArray, keep: BoolArray, cell_min: float
) -> tuple[float, float, float, int, int, IntArray, IntArray]:
    """A uniform grid of items ``i`` with ``keep[i]``, each registered in every cell its box
    ``(xs[i] +- reach[i], ys[i] +- reach[i])`` overlaps: ``(x0, y0, cell, nx, ny, ptr,
    items)``, cell ``c`` holding ``items[ptr[c]:ptr[c + 1]]`` in ascending order."""
    n = xs.shape[0]
    x0 = np.inf
    y0 = np.inf
    x1 = -np.inf
    y1 = -np.inf
    count = 0
    for i in range(n):
        if keep[i]:
            x0 = min(x0, xs[i] - reach[i])
            y0 = min(y0, ys[i] - reach[i])
            x1 = max(x1, xs[i] + reach[i])
            y1 = max(y1, ys[i] + reach[i])
            count += 1
    if count == 0:
        return 0.0, 0.0, 1.0, 1, 1, np.zeros(2, np.int64), np.zeros(0, np.int64)
    span = max(x1 - x0, y1 - y0, 1e-9)
    cell = max(cell_min, span / math.sqrt(count), 1e-9)
    nx = int(min((x1 - x0) / cell, 4096.0)) + 1
    ny = int(min((y1 - y0) / cell, 4096.0)) + 1
    cell = max(cell, (x1 - x0) / nx, (y1 - y0) / ny) * (1.0 + 1e-12)
    counts = np.zeros(nx * ny + 1, np.int64)
    for i in range(n):
        if keep[i]:
            ia, ib = _cells(xs[i] - reach[i], xs[i] + reach[i], x0, cell, nx)
            ja, jb = _cells(ys[i] - reach[i], ys[i] + reach[i], y0, cell, ny)
            for a in range(ia, ib + 1):
                for b in range(ja, jb + 1):
                    counts[b * nx + a + 1] += 1
    ptr = np.cumsum(counts)
    fill = ptr[:-1].copy()
    items = np.empty(ptr[-1], np.int64)
    for i in range(n):  # ascending: each cell's items come out sorted
        if keep[i]:
            ia, ib = _cells(xs[i] - reach[i], xs[i] + reach[i], x0, cell, nx)
            ja, jb = _cells(ys[i] - reach[i], ys[i] + reach[i], y0, cell, ny)
            for a in range(ia, ib + 1):
                for b in range(ja, jb + 1):
                    c = b * nx + a
                    items[fill[c]] = i
                    fill[c] += 1
    return x0, y0, cell, nx, ny, ptr, items


@njit(cache=True, nogil=True, inline="always")
def _cells(lo: float, hi: float, origin: float, cell: float, count: int) -> tuple[int, int]:
    a = math.floor((lo - origin) / cell)
    b = math.floor((hi - origin) / cell)
    return min(max(a, 0), count - 1), min(max(b, 0), count - 1)


@njit(cache=True, nogil=True)
def _near(
    grid: tuple[float, float, float, int, int, IntArray, IntArray],
    xa: float,
    ya: float,
    xb: float,
    yb: float,
    pad: float,
    stamp: IntArray,
    mark: int,
    out: IntArray,
) -> int:
    """The items of ``grid`` whose cells the box of segment a-b (grown by ``pad``) overlaps,
    each once (``stamp``/``mark``), ascending, into ``out``; returns how many."""
    x0, y0, cell, nx, ny, ptr, items = grid
    if items.shape[0] == 0:
        return 0
    ia, ib = _cells(min(xa, xb) - pad, max(xa, xb) + pad, x0, cell, nx)
    ja, jb = _cells(min(ya, yb) - pad, max(ya, yb) + pad, y0, cell, ny)
    k = 0
    for a in range(ia, ib + 1):
        for b in range(ja, jb + 1):
            c = b * nx + a
            for t in range(ptr[c], ptr[c + 1]):
                i = items[t]
                if stamp[i] != mark:
                    stamp[i] = mark
                    out[k] = i
                    k += 1
    if k > 1:
        out[:k] = np.sort(out[:k])
    return k


# Not nogil: a pass over a few bytes, asked every tick; releasing the GIL for it made the
# loop wait to take it back from the trace writer's or a planner's thread (a tick of a run
# with a trace store spent ~15 % of its time here).
@njit(cache=True)
def any_airborne(status: StatusArray) -> bool:
    """Is any drone flying or holding?"""
    for st in status:  # noqa: SIM110 - numba compiles the loop, not a generator in any()
        if st in (FLYING, HOLDING):
            return True
    return False


# Not nogil either: a short pass on the tick, once per hold begun (a pause begins ~780 of them
# on one tick at 1,000 drones; as numpy operations each was ~30 us of that tick)
@njit(cache=True)
def hold_clearances(
    x0: float, y0: float, x1: float, y1: float, known: FloatArray
) -> tuple[float, float]:
    """The least gap (distance to the centre less the range) from (x0, y0) and from (x1, y1)
    to the SAMs ``known`` (k, 3: x, y, range); inf without SAMs."""
    g0 = math.inf
    g1 = math.inf
    for k in range(known.shape[0]):
        x, y, r = known[k, 0], known[k, 1], known[k, 2]
        g0 = min(g0, math.hypot(x0 - x, y0 - y) - r)
        g1 = min(g1, math.hypot(x1 - x, y1 - y) - r)
    return g0, g1


# Not nogil either, and for the same reason: they run on a commit's tick, which begins ~780
# flights at once. As numpy operations per flight (a distance to each of 1,000 airports, a
# slice copy) each released the GIL and waited to take it back from a planner's thread
# running Python: the commit's tick took 300-640 ms (``bench/executive_ticks.py
# --airports 1000``), 22 ms with no other thread busy. Now one call per tick for them all.
@njit(cache=True)
def airports_at(airports: FloatArray, points: FloatArray, tol: float) -> IntArray:
    """For each point of ``points`` (k, 2): the index of the airport of ``airports`` (m, 2)
    nearest to it (the first of equals) if it is within ``tol`` km, else -1. Only airports
    within twice ``tol`` by squared distance are measured with ``math.hypot`` (the answer's
    distance, as before): it cost ~6 us a point at 1,000 airports."""
    out = np.full(points.shape[0], -1, dtype=np.int64)
    near = 4.0 * tol * tol
    for p in range(points.shape[0]):
        x, y = points[p, 0], points[p, 1]
        best = -1
        gap = math.inf
        for k in range(airports.shape[0]):
            dx, dy = airports[k, 0] - x, airports[k, 1] - y
            if dx * dx + dy * dy <= near:
                g = math.hypot(dx, dy)
                if g < gap:
                    gap = g
                    best = k
        if gap <= tol:
            out[p] = best
    return out


@njit(cache=True)
def put_columns(dst: FloatArray, lo: int, src: FloatArray) -> None:
    """``dst[:, lo : lo + src.shape[1]] = src``."""
    for r in range(src.shape[0]):
        for c in range(src.shape[1]):
            dst[r, lo + c] = src[r, c]


@njit(cache=True, nogil=True)
def tick_kernel(
    dt: float,
    F: FloatArray,
    status: StatusArray,
    cur: IntArray,
    p_lo: IntArray,
    p_hi: IntArray,
    P: FloatArray,
    wp_s: FloatArray,
    wp_t: IntArray,
    wp_cur: IntArray,
    wp_hi: IntArray,
    end_airport: IntArray,
    T: FloatArray,
    t_type: IntArray,
    t_alive: BoolArray,
    t_by: IntArray,
    elig: BoolArray,
    capture_r: float,
    SM: FloatArray,
    s_alive: BoolArray,
    s_known: BoolArray,
    sensor_r: float,
    ev: IntArray,
) -> int:
    """Advance one tick; return the number of event rows written to ``ev``."""
    n = status.shape[0]
    nt = T.shape[1]
    ns = SM.shape[1]
    ne = 0
    arrived = np.zeros(n, dtype=np.bool_)
    # 1. Move along the path and burn fuel (holding drones fly a circle and wrap).
    for d in range(n):
        st = status[d]
        if st != FLYING and st != HOLDING:
            continue
        F[OX, d] = F[X, d]
        F[OY, d] = F[Y, d]
        ds = F[SPEED, d] * dt
        length = F[LEN, d]
        s = F[S, d]
        reach = False
        if st == FLYING and ds >= length - s:
            ds = length - s
            reach = True
        fuel = F[FUEL, d]
        if ds > fuel and ds - fuel > FUEL_TOLERANCE:
            ds = fuel
            reach = False
        if reach:
            s = length
        else:
            s = s + ds
        if st == HOLDING and length > 0.0:
            while s >= length:
                s -= length
            cur[d] = p_lo[d]
        F[S, d] = s
        F[FUEL, d] = max(fuel - ds, 0.0)
        F[ODO, d] += ds
        k = cur[d]
        while k + 1 < p_hi[d] and s >= P[7, k + 1]:
            k += 1
        cur[d] = k
        x, y, h = _locate(P, k, s - P[7, k])
        F[X, d] = x
        F[Y, d] = y
        F[HDG, d] = h
        arrived[d] = reach
    # 2. Collect: planned waypoints crossed this tick, then other targets passed close by.
    # Targets and SAMs are looked up in grids (built per tick: they move, come and go), in
    # ascending index, so events come out as a scan of them all would write them.
    r2 = capture_r * capture_r
    free = np.zeros(nt, np.bool_)
    for j in range(nt):
        free[j] = t_alive[j] and t_by[j] < 0
    t_grid = _grid(T[0], T[1], np.zeros(nt), free, 2.0 * capture_r)
    t_stamp = np.full(nt, -1, np.int64)
    near = np.empty(max(nt, ns), np.int64)
    for d in range(n):
        st = status[d]
        if st != FLYING and st != HOLDING:
            continue
        x0, y0, x1, y1 = F[OX, d], F[OY, d], F[X, d], F[Y, d]
        while wp_cur[d] < wp_hi[d] and wp_s[wp_cur[d]] <= F[S, d] + _WAYPOINT_SLACK:
            j = wp_t[wp_cur[d]]
            wp_cur[d] += 1
            code, aux = EV_MISSED, MISS_REMOVED
            if j < 0 or not t_alive[j]:
                aux = MISS_REMOVED
            elif t_by[j] >= 0:
                aux = MISS_TAKEN
            elif not elig[d, t_type[j]]:
                aux = MISS_SENSOR
            elif _seg_dist2(x0, y0, x1, y1, T[0, j], T[1, j]) > r2 + 1e-12:
                aux = MISS_MOVED
            else:
                code, aux = EV_COLLECTED, 1
                t_by[j] = d
            ev[ne, 0] = code
            ev[ne, 1] = d
            ev[ne, 2] = j
            ev[ne, 3] = aux
            ne += 1
        for c in range(_near(t_grid, x0, y0, x1, y1, capture_r, t_stamp, d, near)):
            j = near[c]
            if not t_alive[j] or t_by[j] >= 0 or not elig[d, t_type[j]]:
                continue
            if _seg_dist2(x0, y0, x1, y1, T[0, j], T[1, j]) > r2:
                continue
            own = False  # a target still ahead in this drone's plan waits for its waypoint
            for w in range(wp_cur[d], wp_hi[d]):
                if wp_t[w] == j:
                    own = True
                    break
            if own:
                continue
            t_by[j] = d
            ev[ne, 0] = EV_COLLECTED
            ev[ne, 1] = d
            ev[ne, 2] = j
            ev[ne, 3] = 0
            ne += 1
    # 3. Detect hidden SAMs: the swept segment comes within sensor range of the SAM's edge.
    s_reach = np.empty(ns)
    for q in range(ns):
        s_reach[q] = max(SM[2, q], 0.0) + max(sensor_r, 0.0)
    s_grid = _grid(SM[0], SM[1], s_reach, s_alive.copy(), 0.0)
    s_stamp = np.full(ns, -1, np.int64)
    for d in range(n):
        st = status[d]
        if st != FLYING and st != HOLDING:
            continue
        found = _near(s_grid, F[OX, d], F[OY, d], F[X, d], F[Y, d], 0.0, s_stamp, 2 * d, near)
        for c in range(found):
            q = near[c]
            if not s_alive[q] or s_known[q]:
                continue
            reach = SM[2, q] + sensor_r
            if (
                _seg_dist2(F[OX, d], F[OY, d], F[X, d], F[Y, d], SM[0, q], SM[1, q])
                <= reach * reach
            ):
                s_known[q] = True
                ev[ne, 0] = EV_DETECTED
                ev[ne, 1] = d
                ev[ne, 2] = q
                ev[ne, 3] = 0
                ne += 1
    # 4. A drone whose swept segment enters an open true SAM disk is lost.
    for d in range(n):
        st = status[d]
        if st != FLYING and st != HOLDING:
            continue
        found = _near(s_grid, F[OX, d], F[OY, d], F[X, d], F[Y, d], 0.0, s_stamp, 2 * d + 1, near)
        for c in range(found):
            q = near[c]
            if not s_alive[q]:
                continue
            lim = max(SM[2, q] - SAM_TOLERANCE, 0.0)
            if _seg_dist2(F[OX, d], F[OY, d], F[X, d], F[Y, d], SM[0, q], SM[1, q]) < lim * lim:
                status[d] = LOST
                ev[ne, 0] = EV_LOST_SAM
                ev[ne, 1] = d
                ev[ne, 2] = q
                ev[ne, 3] = 0
                ne += 1
                break
    # 5. At the end of its path: land at an airport, or report (the caller starts a hold).
    for d in range(n):
        if status[d] != FLYING or not arrived[d]:
            continue
        if end_airport[d] >= 0:
            status[d] = LANDED
            ev[ne, 0] = EV_LANDED
            ev[ne, 2] = end_airport[d]
        else:
            ev[ne, 0] = EV_ARRIVED
            ev[ne, 2] = -1
        ev[ne, 1] = d
        ev[ne, 3] = 0
        ne += 1
    # 6. No fuel left in the air: lost.
    for d in range(n):
        st = status[d]
        if (st in (FLYING, HOLDING)) and F[FUEL, d] <= 0.0:
            status[d] = LOST
            ev[ne, 0] = EV_LOST_FUEL
            ev[ne, 1] = d
            ev[ne, 2] = -1
            ev[ne, 3] = 0
            ne += 1
    return ne


# The fleet size from which a tick gives the GIL away while its kernel runs. Below it the
# kernel takes well under 0.2 ms (bench/sim_tick.py: ~0.19 ms at 1,000 drones, tens of us
# at 10): giving the GIL away for so little let the trace writer's or a planner's thread
# take it, and the loop waited to get it back (a traced run of the demo as fast as
# possible: ~15 % of its tick). From it up, the other threads run during the kernel.
NOGIL_FLEET = 1_000


@njit(cache=True)
def tick_kernel_held(*args):  # type: ignore[no-untyped-def]  # tick_kernel's arguments
    """``tick_kernel`` holding the GIL (a small fleet's tick, see ``NOGIL_FLEET``): the same
    compiled code, called natively, so the same results to the bit."""
    return tick_kernel(*args)
