"""The environment as the simulation holds it: every target and SAM in arrays, each SAM
known or hidden, and the two views of it (the truth and what is known).

The truth is every live SAM; what is known is only the SAMs that were visible from the start,
added visible, revealed, or detected. Targets and airports are the same in both. A removed
target or SAM keeps its slot (dead), and an id added again reuses it, so the kernel's indices
stay valid. ``version`` bumps on every change; the ``planner.model.Environment`` views and the
digest for the state hash are rebuilt only when it moved.
"""

from __future__ import annotations

import hashlib

import numpy as np

from planner.model import ALL_SENSORS, Airport, DroneConfig, Environment, Sam, Target
from sim._kernels import BoolArray, FloatArray, IntArray
from sim.errors import SimError

__all__ = ["EnvironmentState"]


class EnvironmentState:
    """Airports, targets and SAMs as arrays the kernel reads (and writes: captures and
    detections), with the edits' primitive operations and the environment views."""

    def __init__(self, environment: Environment) -> None:
        self.airports: list[Airport] = list(environment.airports)
        self.airport_xy: FloatArray = np.array(
            [(a.x, a.y) for a in environment.airports], dtype=np.float64
        )
        self.synthetic_starts = dict(environment.synthetic_starts)
        self.version = 0
        self._views: dict[bool, tuple[int, Environment]] = {}
        # slot -> (what it holds, its model): a view reuses the models of slots that did
        # not change (5,000 targets validated again were 40 ms of a tick at 1,000 drones)
        self._targets: dict[int, tuple[tuple[object, ...], Target]] = {}
        self._sams: dict[int, tuple[tuple[object, ...], Sam]] = {}
        self._digest: tuple[int, bytes] | None = None
        self._known: tuple[int, np.ndarray] | None = None  # ``known_sam_array``'s, by version

        # Targets: x, y, priority; a sensor type code; alive; the drone that collected it.
        self.types: dict[str, int] = {}
        self.t_ids: list[str] = []
        self.t_index: dict[str, int] = {}
        self.T: FloatArray = np.zeros((3, 0))
        self.t_type: IntArray = np.zeros(0, dtype=np.int64)
        self.t_alive: BoolArray = np.zeros(0, dtype=np.bool_)
        self.t_by: IntArray = np.zeros(0, dtype=np.int64)
        for target in environment.targets:
            self.put_target(target.id, target.x, target.y, target.priority, target.type)

        # SAMs: x, y, range; alive; known (those of the scenario are).
        self.s_ids: list[str] = []
        self.s_index: dict[str, int] = {}
        self.SM: FloatArray = np.zeros((3, 0))
        self.s_alive: BoolArray = np.zeros(0, dtype=np.bool_)
        self.s_known: BoolArray = np.zeros(0, dtype=np.bool_)
        for sam in environment.sams:
            self.put_sam(sam.id, sam.x, sam.y, sam.range, known=True)

    def frozen(self) -> EnvironmentState:
        """A copy as it is now, for reading in another thread while this one changes: its
        arrays, lists and dicts copied (tens of µs at 5,000 targets), the views already
        drawn shared (they are immutable); a view not drawn yet is drawn by its reader."""
        copy = object.__new__(EnvironmentState)
        copy.__dict__.update(self.__dict__)
        copy.airports, copy.synthetic_starts = list(self.airports), dict(self.synthetic_starts)
        copy._views = dict(self._views)
        copy._targets, copy._sams = dict(self._targets), dict(self._sams)
        copy.types, copy.t_ids, copy.t_index = (
            dict(self.types),
            list(self.t_ids),
            dict(self.t_index),
        )
        copy.T, copy.t_type = self.T.copy(), self.t_type.copy()
        copy.t_alive, copy.t_by = self.t_alive.copy(), self.t_by.copy()
        copy.s_ids, copy.s_index, copy.SM = list(self.s_ids), dict(self.s_index), self.SM.copy()
        copy.s_alive, copy.s_known = self.s_alive.copy(), self.s_known.copy()
        return copy

    # ----- changes -------------------------------------------------------------------

    def changed(self) -> None:
        """Something in the environment changed: the views and the digest are stale."""
        self.version += 1

    def put_target(self, target_id: str, x: float, y: float, priority: float, type_: str) -> None:
        """Add (or bring back) a live, uncollected target."""
        code = self.types.setdefault(type_, len(self.types))
        j = self.t_index.get(target_id)
        if j is None:
            j = len(self.t_ids)
            self.t_ids.append(target_id)
            self.t_index[target_id] = j
            self.T = np.concatenate((self.T, np.zeros((3, 1))), axis=1)
            self.t_type = np.append(self.t_type, 0)
            self.t_alive = np.append(self.t_alive, False)
            self.t_by = np.append(self.t_by, -1)
        self.T[:, j] = (x, y, priority)
        self.t_type[j] = code
        self.t_alive[j] = True
        self.t_by[j] = -1

    def put_sam(self, sam_id: str, x: float, y: float, radius: float, known: bool) -> None:
        """Add (or bring back) a live SAM, known or hidden."""
        q = self.s_index.get(sam_id)
        if q is None:
            q = len(self.s_ids)
            self.s_ids.append(sam_id)
            self.s_index[sam_id] = q
            self.SM = np.concatenate((self.SM, np.zeros((3, 1))), axis=1)
            self.s_alive = np.append(self.s_alive, False)
            self.s_known = np.append(self.s_known, False)
        self.SM[:, q] = (x, y, radius)
        self.s_alive[q] = True
        self.s_known[q] = known

    def set_target(self, j: int, x: float, y: float, priority: float, type_: str) -> None:
        """Replace the fields of the target in slot ``j``; whether it is live and who
        collected it stay."""
        self.T[:, j] = (x, y, priority)
        self.t_type[j] = self.types.setdefault(type_, len(self.types))

    # ----- lookups -------------------------------------------------------------------

    def live_target(self, target_id: str) -> int | None:
        """The slot of a live target, or None."""
        j = self.t_index.get(target_id)
        return j if j is not None and self.t_alive[j] else None

    def live_sam(self, sam_id: str) -> int | None:
        """The slot of a live SAM, or None."""
        q = self.s_index.get(sam_id)
        return q if q is not None and self.s_alive[q] else None

    def target(self, target_id: str) -> Target | None:
        """The live target ``target_id`` (collected or not), or None."""
        j = self.live_target(target_id)
        if j is None:
            return None
        x, y, priority = (float(v) for v in self.T[:, j])
        return Target(
            id=target_id, x=x, y=y, priority=priority, type=self._type_name(int(self.t_type[j]))
        )

    def sam(self, sam_id: str) -> tuple[Sam, bool] | None:
        """The live SAM ``sam_id`` and whether it is known, or None."""
        q = self.live_sam(sam_id)
        if q is None:
            return None
        x, y, radius = (float(v) for v in self.SM[:, q])
        return Sam(id=sam_id, pos=(x, y), range=radius), bool(self.s_known[q])

    def is_hidden_sam(self, sam_id: str) -> bool:
        """Is ``sam_id`` a live SAM that is not known?"""
        q = self.s_index.get(sam_id)
        return q is not None and bool(self.s_alive[q]) and not bool(self.s_known[q])

    def is_airport_or_start(self, node_id: str) -> bool:
        """Is ``node_id`` taken by an airport or a synthetic start?"""
        return any(a.id == node_id for a in self.airports) or node_id in self.synthetic_starts

    def airport(self, airport_id: str) -> Airport | None:
        """The airport called ``airport_id``, or None."""
        return next((a for a in self.airports if a.id == airport_id), None)

    def known_sams(self) -> list[tuple[float, float, float]]:
        """(x, y, range) of every live known SAM, in slot order."""
        return [(x, y, r) for x, y, r in self.known_sam_array().tolist()]

    def known_sam_array(self) -> np.ndarray:
        """(k, 3): x, y, range of every live known SAM, in slot order; read-only, kept while
        ``version`` is the same (a pause holds a swarm against it: 774 copies were 12 ms
        of the pause's tick at 500 SAMs)."""
        kept = self._known
        if kept is None or kept[0] != self.version:
            live = self.s_alive & self.s_known
            known = np.ascontiguousarray(self.SM[:3, : live.size][:, live].T)
            known.flags.writeable = False
            kept = self._known = (self.version, known)
        return kept[1]

    def eligibility(self, configs: list[DroneConfig]) -> BoolArray:
        """(drones, type codes): can drone ``i`` sense targets of type code ``c``?"""
        elig = np.zeros((len(configs), max(1, len(self.types))), dtype=np.bool_)
        for i, config in enumerate(configs):
            for type_, code in self.types.items():
                elig[i, code] = (
                    config.accessible_targets == ALL_SENSORS or type_ in config.accessible_targets
                )
        return elig

    # ----- views ---------------------------------------------------------------------

    @property
    def truth(self) -> Environment:
        """Every live target and SAM, hidden SAMs included."""
        return self._view(known_only=False)

    @property
    def known(self) -> Environment:
        """Every live target, and only the live SAMs that are known."""
        return self._view(known_only=True)

    def _view(self, known_only: bool) -> Environment:
        cached = self._views.get(known_only)
        if cached is not None and cached[0] == self.version:
            return cached[1]
        # Built from state every edit validated on its way in: the models are constructed,
        # not validated again, and a slot that did not change keeps its model.
        kept_targets, kept_sams = self._targets, self._sams
        targets: list[Target] = []
        xs, ys, ps = self.T.tolist()
        for j, (alive, code) in enumerate(zip(self.t_alive.tolist(), self.t_type.tolist())):
            if not alive:
                continue
            key: tuple[object, ...] = (self.t_ids[j], xs[j], ys[j], ps[j], code)
            kept = kept_targets.get(j)
            if kept is None or kept[0] != key:
                model = Target.model_construct(
                    id=self.t_ids[j], x=xs[j], y=ys[j], priority=ps[j], type=self._type_name(code)
                )
                kept = kept_targets[j] = (key, model)
            targets.append(kept[1])
        sams: list[Sam] = []
        sx, sy, sr = self.SM.tolist()
        for q, (alive, known) in enumerate(zip(self.s_alive.tolist(), self.s_known.tolist())):
            if not alive or not (known or not known_only):
                continue
            key = (self.s_ids[q], sx[q], sy[q], sr[q])
            held = kept_sams.get(q)
            if held is None or held[0] != key:
                sam = Sam.model_construct(id=self.s_ids[q], pos=(sx[q], sy[q]), range=sr[q])
                held = kept_sams[q] = (key, sam)
            sams.append(held[1])
        env = Environment.model_construct(
            airports=list(self.airports),
            targets=targets,
            sams=sams,
            synthetic_starts=dict(self.synthetic_starts),
        )
        self._views[known_only] = (self.version, env)
        return env

    def digest(self) -> bytes:
        """blake2b of every target and SAM slot (ids, positions and ranges rounded to 1e-9
        km, types, alive and known flags): the environment's part of the state hash. Who
        collected what is the fleet's part."""
        if self._digest is not None and self._digest[0] == self.version:
            return self._digest[1]
        h = hashlib.blake2b(digest_size=16)
        h.update("\x1f".join(self.t_ids).encode())
        h.update((np.round(self.T, 9) + 0.0).tobytes())
        h.update(self.t_type.tobytes())
        h.update(self.t_alive.tobytes())
        h.update("\x1f".join(self.s_ids).encode())
        h.update((np.round(self.SM, 9) + 0.0).tobytes())
        h.update(self.s_alive.tobytes())
        h.update(self.s_known.tobytes())
        out = h.digest()
        self._digest = (self.version, out)
        return out

    def _type_name(self, code: int) -> str:
        for name, c in self.types.items():
            if c == code:
                return name
        raise SimError(f"unknown target type code {code}")  # pragma: no cover
