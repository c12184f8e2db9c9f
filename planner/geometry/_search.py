"""Shortest paths on the tangent graph: query entries, distance rows, single legs (numba,
``nogil``).

A query point's *entries* are the ways it joins a circle: a clear tangent from it to the
circle, or the point itself when it lies on the circle (a way of length ~0). A shortest path
between two query points is the straight segment when that is clear, else it leaves the
source along one of its entries, follows arcs and bitangents of the static graph
(``_static``), and arrives along one of the destination's entries. Other queries' points never
help: a bend at a free point can be cut short, and on a circle they only split arcs. So each
source needs one Dijkstra over the static nodes, seeded from its entries; each destination
then reads it through the two boundaries around each of its entries, or joins the source
directly on a circle where both have an entry between the same two boundaries.

The arrays travel as two tuples. ``ent`` = ``(ptr, circ, ang, len, hi, link, link_w, off)``:
entries of point q are ``ptr[q]:ptr[q+1]``; ``hi`` is the index (into the static graph's
boundaries) of the first boundary at or after the entry's angle, wrapping round (-1 on a
circle without boundaries: all of it is free); ``link[e]`` the nodes at its high and low
boundaries (-1 for a blocked mark) and ``link_w[e]`` the arcs to them; ``off`` its angle
from the low boundary. ``geo`` = ``(centers, radii, circ_ptr, bnd_ang, bnd_node, node_pos,
adj, adj_w)`` and ``grid`` = the disk grid (``_disks``).
"""

from __future__ import annotations

import math

import numpy as np

from planner._jit import njit
from planner.geometry._disks import DiskGrid, hits, point_in_disk, segment_blocked
from planner.geometry.margins import TOL, TWO_PI

Entries = tuple[np.ndarray, ...]
"""``(ptr, circ, ang, len, hi, link, link_w, off)``: see the module's docstring."""
Geometry = tuple[np.ndarray, ...]
"""``(centers, radii, circ_ptr, bnd_ang, bnd_node, node_pos, adj, adj_w)``."""

__all__ = [
    "Entries",
    "Geometry",
    "components",
    "entry_links",
    "finish",
    "leg",
    "pair_rows",
    "query_entries",
    "upper_rows",
]


@njit(cache=True, nogil=True, inline="always")
def _norm_angle(a: float) -> float:
    a = a % TWO_PI
    return 0.0 if a >= TWO_PI else a


@njit(cache=True, nogil=True)
def _grow(a: np.ndarray, size: int) -> np.ndarray:
    if size < a.shape[0]:
        return a
    out = np.empty((2 * a.shape[0] + 16,) + a.shape[1:], a.dtype)
    out[: a.shape[0]] = a
    return out


@njit(cache=True, nogil=True, inline="always")
def _lo_boundary(circ_ptr: np.ndarray, k: int, hi_b: int) -> int:
    return int(circ_ptr[k + 1] - 1 if hi_b == circ_ptr[k] else hi_b - 1)


@njit(cache=True, nogil=True, inline="always")
def _disk_meets(px: float, py: float, tx: float, ty: float, disks: np.ndarray) -> bool:
    """Does the way from p onto the circle at t meet one of ``disks`` (k, 3) of ``(x, y,
    r)``, by the tests of the contract (t inside by TOL, or the segment within r - TOL)?"""
    dx = tx - px
    dy = ty - py
    dd = dx * dx + dy * dy
    for k in range(disks.shape[0]):
        r = disks[k, 2]
        if math.hypot(tx - disks[k, 0], ty - disks[k, 1]) < r - TOL:
            return True
        lim = r - TOL
        if lim > 0.0 and hits(
            px, py, dx, dy, dd if dd > 0.0 else 1.0, disks[k, 0], disks[k, 1], lim
        ):
            return True
    return False


@njit(cache=True, nogil=True, inline="always")
def _ways_clear(
    px: float, py: float, cx: float, cy: float, r: float, d: float, disks: np.ndarray
) -> bool:
    """Do the two ways from p onto the circle (c, r), ``d = |p c| > r``, miss every one of
    ``disks`` (k, 3) by more than TOL? Each way runs from p along an edge of the cone of
    half-angle ``a = asin(r / d)`` about p->c, ``sqrt(d^2 - r^2)`` long; a disk (c', R)
    meets such a ray only within ``asin(R / |p c'|)`` of p->c' and from ``|p c'| - R`` on.
    Cosines, no trigonometry: a point's hundreds of circles cost it a few products each."""
    ways = math.sqrt(max(d * d - r * r, 0.0))
    ux = (cx - px) / d
    uy = (cy - py) / d
    sa = r / d
    ca = ways / d
    for k in range(disks.shape[0]):
        big = disks[k, 2] + TOL
        vx = disks[k, 0] - px
        vy = disks[k, 1] - py
        e = math.hypot(vx, vy)
        if e - big > ways:
            continue  # farther than the ways reach
        if e <= big:
            return False  # p at the disk: keep it simple, work the ways out
        cb = math.sqrt(1.0 - (big / e) ** 2)  # the disk's half-angle's cosine, seen from p
        for sign in (1.0, -1.0):  # the two edges: u turned by +a and by -a
            wx = ux * ca - sign * uy * sa
            wy = uy * ca + sign * ux * sa
            if (wx * vx + wy * vy) / e >= cb - 1e-12:
                return False
    return True


@njit(cache=True, nogil=True)
def query_entries(
    eff: np.ndarray,
    reachable: np.ndarray,
    centers: np.ndarray,
    radii: np.ndarray,
    full: np.ndarray,
    grid: DiskGrid,
    redo: np.ndarray,
    old_ptr: np.ndarray,
    old_circ: np.ndarray,
    old_ang: np.ndarray,
    old_len: np.ndarray,
    old_side: np.ndarray,
    new_to_old: np.ndarray,
    was_full: np.ndarray,
    added: np.ndarray,
    removed: np.ndarray,
    limit: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Entries of every reachable query point, circle by circle: CSR ``ptr`` (n+1), ``circ``,
    ``ang`` (angle on the circle, in [0, 2pi)), ``len`` (the way onto the circle) and ``side``
    (0 the tangent at +alpha or the point on the circle, 1 the one at -alpha).

    Points with ``redo`` are tested against every disk. The others had the entries
    ``old_*`` (circles numbered as before: ``new_to_old[k]``, -1 for a new circle) in a field
    that differed by the disks ``removed`` and the disks ``added`` ((k, 3) arrays of ``(x, y,
    r)``, k = 0 for none): a way that was clear stays clear unless it meets one added; a way
    that was blocked is tested again only if it meets one removed. Ways onto a new circle, or onto one
    that was inside another disk (``was_full``), are tested in full. The result is the same
    as testing everything. A circle's old entries (``old_ang``, ``old_len``) are kept as they
    were when every disk added or removed is farther from the point than the circle's centre
    (a way onto the circle is shorter than that): no trigonometry for the millions of entries
    of a swarm's points that a pop-up, or a SAM taken away, cannot touch.

    A point has no entry longer than its ``limit`` (km; inf: none): a way from it that is
    no longer than that never takes one (a drone's start, searched only as far as its
    fuel reaches: most of a swarm's 500 circles are farther).
    """
    x0, y0, cell, nx, ny, ptr, disks = grid
    n = eff.shape[0]
    m = centers.shape[0]
    ent_ptr = np.zeros(n + 1, np.int64)
    circ = np.empty(64, np.int64)
    angs = np.empty(64, np.float64)
    lens = np.empty(64, np.float64)
    sides = np.empty(64, np.int64)
    e = 0
    stamp = np.zeros(m, np.int64)
    mark = 0
    only_added = removed.shape[0] == 0
    changed = np.concatenate((added, removed)).reshape(-1, 3)
    for q in range(n):
        if reachable[q]:
            px = eff[q, 0]
            py = eff[q, 1]
            lim = limit[q]
            o = old_ptr[q] if not redo[q] else 0
            o_end = old_ptr[q + 1] if not redo[q] else 0
            # ways onto circles nearer than this meet no disk added or removed (a way onto
            # a circle is shorter than the way to its centre): they are as they were
            clear = math.inf
            for a in range(added.shape[0]):
                gap = math.hypot(px - added[a, 0], py - added[a, 1]) - added[a, 2] - TOL
                clear = min(clear, gap)
            for a in range(removed.shape[0]):
                gap = math.hypot(px - removed[a, 0], py - removed[a, 1]) - removed[a, 2] - TOL
                clear = min(clear, gap)
            for k in range(m):
                if full[k]:
                    continue
                ko = new_to_old[k]
                # The old entries of this point on the same circle, by side.
                had0 = False
                had1 = False
                first = o
                if ko >= 0:
                    while o < o_end and old_circ[o] < ko:
                        o += 1
                    first = o
                    while o < o_end and old_circ[o] == ko:
                        if old_side[o] == 0:
                            had0 = True
                        else:
                            had1 = True
                        o += 1
                fresh = redo[q] or ko < 0 or was_full[k]
                if not fresh and not had0 and not had1 and only_added:
                    # only disks added: no way onto this circle opens (a point on it had
                    # its entry before too), so none is worked out (a swarm's pop-ups
                    # spent most of a 280 ms pass on these)
                    continue
                cx = centers[k, 0]
                cy = centers[k, 1]
                r = radii[k]
                d = math.hypot(px - cx, py - cy)
                if not fresh and (
                    d < clear or (d > r and _ways_clear(px, py, cx, cy, r, d, changed))
                ):
                    for f in range(first, o):  # as they were: nothing added comes near
                        circ = _grow(circ, e)
                        angs = _grow(angs, e)
                        lens = _grow(lens, e)
                        sides = _grow(sides, e)
                        circ[e] = k
                        angs[e] = old_ang[f]
                        lens[e] = old_len[f]
                        sides[e] = old_side[f]
                        e += 1
                    continue
                if d - r > lim + TOL:  # every way onto it is longer than the limit
                    continue
                base = math.atan2(py - cy, px - cx)
                on = abs(d - r) <= TOL  # on the circle: the point itself joins its arcs
                if not on and not d > r + TOL:
                    continue
                alpha = 0.0 if on else math.acos(min(1.0, max(-1.0, r / d)))
                for side in range(2):
                    if on and side == 1:
                        break
                    # The point as the path's pieces will compute it, from the angle kept.
                    ang = _norm_angle(base + alpha if side == 0 else base - alpha)
                    tx = cx + r * math.cos(ang)
                    ty = cy + r * math.sin(ang)
                    length = math.hypot(tx - px, ty - py)
                    if length > lim:
                        continue
                    if not on:
                        if not fresh and not _disk_meets(px, py, tx, ty, removed):
                            had = had0 if side == 0 else had1
                            if not had or _disk_meets(px, py, tx, ty, added):
                                continue
                        else:
                            if point_in_disk(tx, ty, centers, radii, TOL, -1, x0, y0, cell, nx, ny, ptr, disks) >= 0:  # fmt: skip
                                continue
                            mark += 1
                            if segment_blocked(px, py, tx, ty, centers, radii, TOL, -1, x0, y0, cell, nx, ny, ptr, disks, stamp, mark):  # fmt: skip
                                continue
                    circ = _grow(circ, e)
                    angs = _grow(angs, e)
                    lens = _grow(lens, e)
                    sides = _grow(sides, e)
                    circ[e] = k
                    angs[e] = ang
                    lens[e] = length
                    sides[e] = side
                    e += 1
        ent_ptr[q + 1] = e
    return ent_ptr, circ[:e].copy(), angs[:e].copy(), lens[:e].copy(), sides[:e].copy()


@njit(cache=True, nogil=True)
def entry_links(
    ent_circ: np.ndarray,
    ent_ang: np.ndarray,
    radii: np.ndarray,
    circ_ptr: np.ndarray,
    bnd_ang: np.ndarray,
    bnd_node: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Where each entry sits among its circle's boundaries: ``hi``, ``link``, ``link_w``,
    ``off`` (see the module's docstring)."""
    count = ent_circ.shape[0]
    hi = np.full(count, -1, np.int64)
    link = np.full((count, 2), -1, np.int64)
    link_w = np.zeros((count, 2), np.float64)
    off = np.zeros(count, np.float64)
    for e in range(count):
        k = ent_circ[e]
        lo = circ_ptr[k]
        top = circ_ptr[k + 1]
        a = ent_ang[e]
        if top == lo:
            off[e] = a
            continue
        p = lo + np.searchsorted(bnd_ang[lo:top], a)
        hb = lo if p == top else p
        lb = _lo_boundary(circ_ptr, k, hb)
        hi[e] = hb
        link[e, 0] = bnd_node[hb]
        link_w[e, 0] = radii[k] * ((bnd_ang[hb] - a) % TWO_PI)
        link[e, 1] = bnd_node[lb]
        link_w[e, 1] = radii[k] * ((a - bnd_ang[lb]) % TWO_PI)
        off[e] = (a - bnd_ang[lb]) % TWO_PI
    return hi, link, link_w, off


@njit(cache=True, nogil=True, inline="always")
def _find(parent: np.ndarray, a: int) -> int:
    while parent[a] != a:
        parent[a] = parent[parent[a]]
        a = parent[a]
    return a


@njit(cache=True, nogil=True, inline="always")
def _union(parent: np.ndarray, a: int, b: int) -> None:
    ra = _find(parent, a)
    rb = _find(parent, b)
    if ra != rb:
        parent[max(ra, rb)] = min(ra, rb)


@njit(cache=True, nogil=True)
def components(
    ent_ptr: np.ndarray,
    ent_circ: np.ndarray,
    ent_hi: np.ndarray,
    link: np.ndarray,
    circ_ptr: np.ndarray,
    adj: np.ndarray,
) -> np.ndarray:
    """A label per query point: two points have the same one exactly when the graph joins
    them (through static nodes, or along one free stretch of a circle), i.e. when their
    graph distance is finite. The straight segment between them is not considered."""
    n = ent_ptr.shape[0] - 1
    v = adj.shape[0]
    m = circ_ptr.shape[0] - 1
    nb = circ_ptr[m]
    # Union-find over: static nodes, stretches between boundaries (one per boundary: the
    # stretch ending there), whole free circles, query points.
    parent = np.arange(v + nb + m + n)
    for u in range(v):
        for slot in range(3):
            w = adj[u, slot]
            if w >= 0:
                _union(parent, u, w)
    for q in range(n):
        for e in range(ent_ptr[q], ent_ptr[q + 1]):
            hb = ent_hi[e]
            stretch = v + nb + ent_circ[e] if hb < 0 else v + hb
            _union(parent, v + nb + m + q, stretch)
            for side in range(2):
                if link[e, side] >= 0:
                    _union(parent, stretch, link[e, side])
    labels = np.empty(n, np.int64)
    for q in range(n):
        labels[q] = _find(parent, v + nb + m + q)
    return labels


# ----- a binary heap of (key, node) on flat arrays ----------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _push(keys: np.ndarray, vals: np.ndarray, size: int, key: float, val: int) -> int:
    i = size
    while i > 0:
        parent = (i - 1) >> 1
        if keys[parent] <= key:
            break
        keys[i] = keys[parent]
        vals[i] = vals[parent]
        i = parent
    keys[i] = key
    vals[i] = val
    return size + 1


@njit(cache=True, nogil=True, inline="always")
def _pop(keys: np.ndarray, vals: np.ndarray, size: int) -> int:
    """Remove the root (read it before calling); returns the new size."""
    size -= 1
    key = keys[size]
    val = vals[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and keys[c + 1] < keys[c]:
            c += 1
        if keys[c] >= key:
            break
        keys[i] = keys[c]
        vals[i] = vals[c]
        i = c
    keys[i] = key
    vals[i] = val
    return size


@njit(cache=True, nogil=True)
def _dijkstra(
    s: int,
    ent: Entries,
    node_pos: np.ndarray,
    adj: np.ndarray,
    adj_w: np.ndarray,
    dist: np.ndarray,
    keys: np.ndarray,
    vals: np.ndarray,
    pred: np.ndarray,
    pdir: np.ndarray,
    hx: float,
    hy: float,
    use_h: bool,
    tgt_head: np.ndarray,
    tgt_next: np.ndarray,
    tgt_w: np.ndarray,
    tgt_ent: np.ndarray,
    best: np.ndarray,
    best_link: np.ndarray,
) -> None:
    """Distances from query ``s`` to every static node (``dist``, inf if none; ``keys`` and
    ``vals`` are heap scratch of at least ``3 V + 2 entries`` slots), with predecessors
    when ``pred`` is non-empty (``pred[u]`` a node, or ``-1 - entry`` for a node reached from
    the source's entry; ``pdir`` +1 / -1 for an arc travelled CCW / CW, 0 for a line).

    Without ``use_h`` it stops once the nearest node left is farther than ``best[0]``
    (those farther keep the ``dist`` found so far: a way's length, not the shortest). With
    ``use_h`` it is an A* towards ``(hx, hy)`` that stops once no node can beat
    ``best[0]``; ``tgt_*`` link nodes to the target's entries (a linked list per node:
    ``tgt_w`` the arc, ``tgt_ent`` the entry's length added after it), and a settled link
    that improves ``best[0]`` records ``(node, slot)`` in ``best_link``.
    """
    ent_ptr, _, _, ent_len, _, link, link_w, _ = ent
    with_pred = pred.shape[0] > 0
    dist[:] = np.inf
    size = 0
    for e in range(ent_ptr[s], ent_ptr[s + 1]):
        for side in range(2):
            u = link[e, side]
            if u < 0:
                continue
            d = ent_len[e] + link_w[e, side]
            if d < dist[u]:
                dist[u] = d
                if with_pred:
                    pred[u] = -1 - e
                    pdir[u] = 1 - 2 * side
                h = math.hypot(node_pos[u, 0] - hx, node_pos[u, 1] - hy) if use_h else 0.0
                size = _push(keys, vals, size, d + h, u)
    while size > 0:
        key = keys[0]
        u = vals[0]
        size = _pop(keys, vals, size)
        du = dist[u]
        if use_h:
            hu = math.hypot(node_pos[u, 0] - hx, node_pos[u, 1] - hy)
            if key > du + hu:
                continue  # stale: u was reached more cheaply since
            if key >= best[0]:
                break
            t = tgt_head[u]
            while t >= 0:
                cand = du + tgt_w[t] + tgt_ent[t]
                if cand < best[0]:
                    best[0] = cand
                    best_link[0] = u
                    best_link[1] = t
                t = tgt_next[t]
        elif key > du:
            continue  # stale
        elif du > best[0]:
            break  # past the source's limit (``_row``): no way it needs goes farther
        # The line edge, then the arcs to the neighbouring boundaries that are nodes.
        for slot in range(3):
            w = adj[u, slot]
            if w < 0:
                continue
            d = du + adj_w[u, slot]
            if d < dist[w]:
                dist[w] = d
                if with_pred:
                    pred[w] = u
                    pdir[w] = 0 if slot == 0 else (1 if slot == 1 else -1)
                h = math.hypot(node_pos[w, 0] - hx, node_pos[w, 1] - hy) if use_h else 0.0
                size = _push(keys, vals, size, d + h, w)


@njit(cache=True, nogil=True, inline="always")
def _same_interval_arc(e_off: float, f_off: float, e_hi: int, f_hi: int) -> float:
    """Angle between two entries on one circle along free arc only (inf if boundaries lie
    between them both ways round)."""
    if f_hi < 0:  # a circle without boundaries: the shorter way round
        d = abs(e_off - f_off)
        return min(d, TWO_PI - d)
    if e_hi != f_hi:
        return np.inf
    return abs(e_off - f_off)


@njit(cache=True, nogil=True)
def _dest_value(
    q: int,
    dist: np.ndarray,
    src_first: np.ndarray,
    src_count: np.ndarray,
    ent: Entries,
    radii: np.ndarray,
) -> float:
    """Shortest way from the source (whose static distances are ``dist``) to the effective
    point of ``q`` through the graph: via a boundary node, or along one circle directly."""
    ent_ptr, ent_circ, _, ent_len, ent_hi, link, link_w, off = ent
    best = np.inf
    for f in range(ent_ptr[q], ent_ptr[q + 1]):
        ln = ent_len[f]
        u = link[f, 0]
        if u >= 0:
            best = min(best, dist[u] + link_w[f, 0] + ln)
        u = link[f, 1]
        if u >= 0:
            best = min(best, dist[u] + link_w[f, 1] + ln)
        k = ent_circ[f]
        first = src_first[k]
        if first >= 0:
            for e in range(first, first + src_count[k]):
                arc = _same_interval_arc(off[e], off[f], ent_hi[e], ent_hi[f])
                if arc < np.inf:
                    best = min(best, ent_len[e] + radii[k] * arc + ln)
    return best


@njit(cache=True, nogil=True)
def _row(
    s: int,
    dests: np.ndarray,
    out: np.ndarray,
    scratch: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    eff: np.ndarray,
    reachable: np.ndarray,
    labels: np.ndarray,
    ent: Entries,
    geo: Geometry,
    grid: DiskGrid,
    limit: float,
) -> None:
    """Graph distances from the effective point of ``s`` to those of ``dests`` into ``out``
    (``inf`` where unreachable; escape legs are the caller's). ``scratch`` = ``(dist, keys,
    vals, src_first, src_count, stamp)`` from ``_scratch``, left as found. A distance up to
    ``limit`` (km) is the shortest; a longer one is a way's length, or inf: the search
    stops there."""
    centers, radii, _, _, _, node_pos, adj, adj_w = geo
    x0, y0, cell, nx, ny, ptr, disks = grid
    dist, keys, vals, src_first, src_count, stamp = scratch
    ent_ptr, ent_circ = ent[0], ent[1]
    m = centers.shape[0]
    if not reachable[s]:
        out[:] = np.inf
        return
    empty_i = np.empty(0, np.int64)
    empty_f = np.empty(0, np.float64)
    best = np.full(1, limit, np.float64)  # where the search stops
    best_link = np.empty(2, np.int64)
    # The source's entries per circle (they are generated circle by circle).
    for e in range(ent_ptr[s], ent_ptr[s + 1]):
        k = ent_circ[e]
        if src_first[k] < 0:
            src_first[k] = e
        src_count[k] += 1
    searched = False
    sx = eff[s, 0]
    sy = eff[s, 1]
    for t in range(dests.shape[0]):
        q = dests[t]
        if not reachable[q]:
            out[t] = np.inf
            continue
        qx = eff[q, 0]
        qy = eff[q, 1]
        stamp[m] += 1
        if m == 0 or not segment_blocked(
            sx, sy, qx, qy, centers, radii, TOL, -1, x0, y0, cell, nx, ny, ptr, disks, stamp,
            int(stamp[m]),
        ):  # fmt: skip
            out[t] = math.hypot(qx - sx, qy - sy)
            continue
        if labels[q] != labels[s]:
            out[t] = np.inf  # the graph does not join them
            continue
        if not searched:
            _dijkstra(
                s, ent, node_pos, adj, adj_w, dist, keys, vals, empty_i, empty_i, 0.0, 0.0,
                False, empty_i, empty_i, empty_f, empty_f, best, best_link,
            )  # fmt: skip
            searched = True
        out[t] = _dest_value(q, dist, src_first, src_count, ent, radii)
    for e in range(ent_ptr[s], ent_ptr[s + 1]):
        src_first[ent_circ[e]] = -1
        src_count[ent_circ[e]] = 0


@njit(cache=True, nogil=True)
def _scratch(
    m: int, v: int, most_entries: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    cap = 3 * v + 2 * most_entries + 16
    return (
        np.empty(v, np.float64),
        np.empty(cap, np.float64),
        np.empty(cap, np.int64),
        np.full(m, -1, np.int64),
        np.zeros(m, np.int64),
        np.zeros(m + 1, np.int64),  # the last slot counts the marks handed out
    )


@njit(cache=True, nogil=True)
def _most_entries(ent_ptr: np.ndarray) -> int:
    most = 0
    for q in range(ent_ptr.shape[0] - 1):
        most = max(most, ent_ptr[q + 1] - ent_ptr[q])
    return most


@njit(cache=True, nogil=True)
def upper_rows(
    sources: np.ndarray,
    mat: np.ndarray,
    eff: np.ndarray,
    reachable: np.ndarray,
    labels: np.ndarray,
    ent: Entries,
    geo: Geometry,
    grid: DiskGrid,
    limits: np.ndarray,
) -> None:
    """For each source ``s``, ``mat[s, s+1:]``: graph distances to every later point (the
    shortest up to ``limits[s]``, as ``_row``)."""
    n = eff.shape[0]
    everyone = np.arange(n)
    scratch = _scratch(geo[0].shape[0], geo[5].shape[0], _most_entries(ent[0]))
    for s in sources:
        _row(
            s, everyone[s + 1 :], mat[s, s + 1 :], scratch, eff, reachable, labels, ent, geo,
            grid, limits[s],
        )  # fmt: skip


@njit(cache=True, nogil=True)
def pair_rows(
    sources: np.ndarray,
    dests_ptr: np.ndarray,
    dests: np.ndarray,
    out: np.ndarray,
    eff: np.ndarray,
    reachable: np.ndarray,
    labels: np.ndarray,
    ent: Entries,
    geo: Geometry,
    grid: DiskGrid,
    limits: np.ndarray,
) -> None:
    """For each ``sources[i]``, graph distances to ``dests[dests_ptr[i]:dests_ptr[i+1]]``,
    written to ``out`` at the same places (the shortest up to ``limits[sources[i]]``, as
    ``_row``)."""
    scratch = _scratch(geo[0].shape[0], geo[5].shape[0], _most_entries(ent[0]))
    for i in range(sources.shape[0]):
        lo = dests_ptr[i]
        hi = dests_ptr[i + 1]
        if hi > lo:
            _row(
                sources[i], dests[lo:hi], out[lo:hi], scratch, eff, reachable, labels, ent, geo,
                grid, limits[sources[i]],
            )  # fmt: skip


@njit(cache=True, nogil=True)
def finish(mat: np.ndarray, pts: np.ndarray, esc_len: np.ndarray, reachable: np.ndarray) -> None:
    """From graph distances in the upper triangle to the table: the escape legs added, the
    lower triangle mirrored (the upper one is authoritative), unreachable points ``inf``, and
    0 between identical points and on the diagonal."""
    n = mat.shape[0]
    for i in range(n):
        mat[i, i] = 0.0
        for j in range(i + 1, n):
            if not (reachable[i] and reachable[j]):
                d = np.inf
            else:
                d = mat[i, j] + esc_len[i] + esc_len[j]
            if pts[i, 0] == pts[j, 0] and pts[i, 1] == pts[j, 1]:
                d = 0.0
            mat[i, j] = d
            mat[j, i] = d


@njit(cache=True, nogil=True)
def leg(
    s: int,
    q: int,
    eff: np.ndarray,
    ent: Entries,
    geo: Geometry,
    grid: DiskGrid,
) -> tuple[int, int, int, int, np.ndarray, np.ndarray]:
    """The shortest way between the effective points of reachable queries ``s`` and ``q``.

    Returns ``(kind, e, f, side, nodes, dirs)``: kind 0 the straight segment; 1 along one
    circle from source entry ``e`` to destination entry ``f``; 2 from entry ``e`` through the
    static ``nodes`` (in order; ``dirs[i]`` how ``nodes[i]`` was reached: +1 / -1 an arc
    CCW / CW, 0 a line, and for ``nodes[0]`` the way round from ``e``) to entry ``f``, whose
    high (``side`` 0) or low (1) boundary is the last node. kind -1: no way at all.
    """
    ent_ptr, ent_circ, _, ent_len, ent_hi, link, link_w, off = ent
    centers, radii, _, _, _, node_pos, adj, adj_w = geo
    x0, y0, cell, nx, ny, ptr, disks = grid
    m = centers.shape[0]
    v = node_pos.shape[0]
    none = np.empty(0, np.int64)
    sx = eff[s, 0]
    sy = eff[s, 1]
    qx = eff[q, 0]
    qy = eff[q, 1]
    stamp = np.zeros(m, np.int64)
    if m == 0 or not segment_blocked(
        sx, sy, qx, qy, centers, radii, TOL, -1, x0, y0, cell, nx, ny, ptr, disks, stamp, 1
    ):
        return 0, -1, -1, 0, none, none
    best = np.full(1, np.inf)
    best_link = np.full(2, -1, np.int64)
    kind = -1
    be = -1
    bf = -1
    # Along one circle, directly.
    for f in range(ent_ptr[q], ent_ptr[q + 1]):
        k = ent_circ[f]
        for e in range(ent_ptr[s], ent_ptr[s + 1]):
            if ent_circ[e] != k:
                continue
            arc = _same_interval_arc(off[e], off[f], ent_hi[e], ent_hi[f])
            c = ent_len[e] + radii[k] * arc + ent_len[f]
            if c < best[0]:
                best[0] = c
                kind = 1
                be = e
                bf = f
    # Through the static nodes: each boundary node around q's entries leads to q.
    nq = ent_ptr[q + 1] - ent_ptr[q]
    tgt_head = np.full(v, -1, np.int64)
    tgt_next = np.empty(2 * nq, np.int64)
    tgt_w = np.empty(2 * nq, np.float64)
    tgt_ent = np.empty(2 * nq, np.float64)
    tgt_f = np.empty(2 * nq, np.int64)
    nt = 0
    for f in range(ent_ptr[q], ent_ptr[q + 1]):
        for side in range(2):
            u = link[f, side]
            if u < 0:
                continue
            tgt_w[nt] = link_w[f, side]
            tgt_ent[nt] = ent_len[f]
            tgt_f[nt] = 2 * f + side
            tgt_next[nt] = tgt_head[u]
            tgt_head[u] = nt
            nt += 1
    dist = np.empty(v, np.float64)
    cap = 3 * v + 2 * (ent_ptr[s + 1] - ent_ptr[s]) + 16
    keys = np.empty(cap, np.float64)
    vals = np.empty(cap, np.int64)
    pred = np.empty(v, np.int64)
    pdir = np.empty(v, np.int64)
    _dijkstra(
        s, ent, node_pos, adj, adj_w, dist, keys, vals, pred, pdir, qx, qy, True, tgt_head,
        tgt_next, tgt_w, tgt_ent, best, best_link,
    )  # fmt: skip
    if best_link[0] < 0:
        return kind, be, bf, 0, none, none
    # Walk the predecessors back from the last node to the source's entry.
    u = best_link[0]
    count = 1
    w = u
    while pred[w] >= 0:
        w = pred[w]
        count += 1
    nodes = np.empty(count, np.int64)
    dirs = np.empty(count, np.int64)
    w = u
    for i in range(count - 1, -1, -1):
        nodes[i] = w
        dirs[i] = pdir[w]
        if i > 0:
            w = pred[w]
    code = tgt_f[best_link[1]]
    return 2, -1 - pred[w], code // 2, code % 2, nodes, dirs
