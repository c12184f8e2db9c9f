"""The world as it truly is: the fleet in arrays, the true environment, and what is known.

Contract
--------
* ``World(scenario, routes)`` holds the truth: per drone (index order of
  ``scenario.drone_configs``) position, heading, speed, fuel left, distance flown, status
  (parked, flying, holding, landed, lost), arc length ``s`` along its current flight, the
  targets it collected and its points; every airport, target and SAM, hidden SAMs included.
* ``truth_environment`` is every live SAM; ``known_environment`` only those that were
  visible from the start, added visible, revealed, or detected. Targets and airports are
  the same in both. Both are ``planner.model.Environment`` values, rebuilt only when
  something changed (``environment_version``).
* ``apply_edit`` / ``apply_command`` change the world at a tick boundary and return events;
  anything that cannot be applied is rejected with a reason, never raised.
* ``advance()`` runs one tick of physics (``sim._kernels.tick_kernel``): move, burn fuel,
  collect, detect, SAM kills, landing, fuel exhaustion, in that order.

Definitions
-----------
* **Collected**: a planned waypoint is collected when ``s`` reaches its arc length, if the
  target still exists, nobody collected it, the drone can sense its type and it is within
  ``capture_radius`` of the tick's swept segment (it may have moved); otherwise a
  ``TargetMissed`` says why. Any other live target is collected when the swept segment of
  a tick passes within ``capture_radius`` of it and the drone can sense its type (targets
  still ahead in a drone's own plan wait for their waypoint). Lower drone index first.
* **Detected**: a hidden SAM is detected at the first tick whose swept segment comes within
  ``range + sensor_range`` of its centre, i.e. the drone is within ``sensor_range`` of the
  edge of the SAM's disk. Once: it then belongs to the known environment.
* **Lost to a SAM**: the tick's swept segment enters the open true disk (closer to the
  centre than ``range``, with a 1e-9 km hair so a path touching the circle is safe).
  Only airborne (flying, holding) drones are checked.
* **Fuel** burnt equals the distance flown, holding included; a drone whose fuel reaches 0
  in the air is lost; at the end of its path it lands if the end is an airport (within
  1e-6 km), otherwise it holds there.
* Paths are followed exactly (lines and arcs, no turn dynamics): the planner's geometry is
  the drone's trajectory.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from planner.edits import Edit
from planner.geometry import Path, SamField
from planner.mission import Mission, compile_mission
from planner.model import ALL_SENSORS, Environment, Sam, Scenario, Target
from sim import _kernels as K
from sim.commands import START_TOLERANCE, Command, FlyPath
from sim.errors import SimError
from sim.events import (
    CommandApplied,
    CommandRejected,
    DroneHolding,
    DroneLanded,
    DroneLost,
    EditApplied,
    EditRejected,
    SamDetected,
    TargetCollected,
    TargetMissed,
)
from sim.flight import N_PIECE_ROWS, Flight, hold_circle, slice_path
from sim.snapshot import FleetView

__all__ = ["World"]

_AIRPORT_TOLERANCE = 1e-6  # km: a path ending this close to an airport ends at it
_MISS_REASONS = ("removed", "moved", "already_collected", "sensor")


@dataclass(frozen=True)
class _Hold:
    """What a holding drone resumes: the flight it left and where it left it."""

    flight: Flight | None
    s: float
    waypoints: tuple[tuple[str, float], ...]  # still to collect, arc lengths of ``flight``


class World:
    def __init__(
        self,
        scenario: Scenario,
        routes: Mapping[str, Sequence[str]] | None = None,
        *,
        mission: Mission | None = None,
    ) -> None:
        self.scenario = scenario
        self.config = scenario.sim
        self.tick_hz = float(self.config.tick_hz)
        self.dt = 1.0 / self.tick_hz
        self.tick = 0  # the next tick to run
        env = scenario.environment
        self._mission = mission
        self._airports = list(env.airports)
        self._airport_xy = np.array([(a.x, a.y) for a in env.airports], dtype=np.float64)
        self._synthetic_starts = dict(env.synthetic_starts)
        self._env_version = 0
        self._env_cache: dict[str, tuple[int, Environment]] = {}
        self._env_bytes: tuple[int, bytes] | None = None

        # Targets (slots are reused when an id is removed and added again).
        self._types: dict[str, int] = {}
        self._t_ids: list[str] = []
        self._t_index: dict[str, int] = {}
        self._T = np.zeros((3, 0))  # x, y, priority
        self._t_type = np.zeros(0, dtype=np.int64)
        self._t_alive = np.zeros(0, dtype=np.bool_)
        self._t_by = np.zeros(0, dtype=np.int64)
        for target in env.targets:
            self._put_target(target.id, target.x, target.y, target.priority, target.type)

        # SAMs: known unless added hidden.
        self._s_ids: list[str] = []
        self._s_index: dict[str, int] = {}
        self._SM = np.zeros((3, 0))  # x, y, range
        self._s_alive = np.zeros(0, dtype=np.bool_)
        self._s_known = np.zeros(0, dtype=np.bool_)
        for sam in env.sams:
            self._put_sam(sam.id, sam.x, sam.y, sam.range, known=True)

        # The fleet.
        self.drone_ids: tuple[str, ...] = tuple(scenario.drone_configs)
        self._d_index = {d: i for i, d in enumerate(self.drone_ids)}
        self._configs = [scenario.drone_configs[d] for d in self.drone_ids]
        n = len(self.drone_ids)
        self._F = np.zeros((K.N_FLEET_ROWS, n))
        self._status = np.full(n, K.PARKED, dtype=np.int8)
        self._points = np.zeros(n)
        self._collected: list[list[str]] = [[] for _ in range(n)]
        self._collected_view: tuple[tuple[str, ...], ...] | None = None
        self._lost_reason: list[str | None] = [None] * n
        self._flights: list[Flight | None] = [None] * n
        self._holds: list[_Hold | None] = [None] * n
        self._elig = np.zeros((n, 0), dtype=np.bool_)
        self._refresh_eligibility()
        for i, config in enumerate(self._configs):
            start = env.position(config.start) if config.start else None
            if start is None:
                raise SimError(f"drone {self.drone_ids[i]}: unknown start {config.start!r}")
            self._F[K.X, i], self._F[K.Y, i] = start
            self._F[K.FUEL, i] = config.fuel_budget
            self._F[K.SPEED, i] = self.config.speed_of(self.drone_ids[i])

        # Every flight's pieces and waypoints laid out in flat buffers for the kernel. A new
        # flight is appended (O(its pieces)); the buffers are compacted when full, so a
        # command costs the same with 10 drones or 1000.
        self._cur = np.zeros(n, dtype=np.int64)
        self._p_lo = np.zeros(n, dtype=np.int64)
        self._p_hi = np.zeros(n, dtype=np.int64)
        self._P = np.zeros((N_PIECE_ROWS, 0))
        self._p_used = 0
        self._wp_s = np.zeros(0)
        self._wp_t = np.zeros(0, dtype=np.int64)
        self._w_used = 0
        self._wp_cur = np.zeros(n, dtype=np.int64)
        self._wp_lo = np.zeros(n, dtype=np.int64)
        self._wp_hi = np.zeros(n, dtype=np.int64)
        self._end_airport = np.full(n, -1, dtype=np.int64)
        self._ev = np.zeros((16, 4), dtype=np.int64)

        for drone_id, route in (routes or {}).items():
            i = self._index_of(drone_id)
            if not self._configs[i].enabled:
                raise SimError(f"drone {drone_id} is disabled in the scenario but has a route")
            flight = Flight.from_route(self.mission, list(route))
            if flight is None:
                continue
            if math.dist(flight.path.start, (self._F[K.X, i], self._F[K.Y, i])) > START_TOLERANCE:
                raise SimError(f"drone {drone_id}: route starts at {route[0]!r}, not at its start")
            self._set_flight(i, flight, K.FLYING)
        if self._status.size:
            self._F[K.OX] = self._F[K.X]
            self._F[K.OY] = self._F[K.Y]

    # ----- public views --------------------------------------------------------------

    @property
    def mission(self) -> Mission:
        """The scenario compiled over its visible SAMs (what the initial plan was made on)."""
        if self._mission is None:
            self._mission = compile_mission(self.scenario)
        return self._mission

    @property
    def time(self) -> float:
        """Simulated seconds elapsed: the start of the next tick."""
        return self.tick / self.tick_hz

    @property
    def environment_version(self) -> int:
        return self._env_version

    @property
    def truth_environment(self) -> Environment:
        return self._environment(known_only=False)

    @property
    def known_environment(self) -> Environment:
        return self._environment(known_only=True)

    def status(self, drone_id: str) -> str:
        return K.STATUS_NAMES[int(self._status[self._index_of(drone_id)])]

    def flight(self, drone_id: str) -> Flight | None:
        """The flight the drone follows now (its holding circle while it holds)."""
        return self._flights[self._index_of(drone_id)]

    def position(self, drone_id: str) -> tuple[float, float, float]:
        i = self._index_of(drone_id)
        return float(self._F[K.X, i]), float(self._F[K.Y, i]), float(self._F[K.HDG, i])

    def fuel(self, drone_id: str) -> float:
        return float(self._F[K.FUEL, self._index_of(drone_id)])

    def progress(self, drone_id: str) -> float:
        """Arc length flown along the current flight."""
        return float(self._F[K.S, self._index_of(drone_id)])

    def collected(self) -> dict[str, str]:
        """Target id -> id of the drone that collected it."""
        return {
            self._t_ids[j]: self.drone_ids[int(self._t_by[j])]
            for j in np.nonzero(self._t_by >= 0)[0]
        }

    def checkpoint(self, drone_id: str, tick: int) -> tuple[float, float, float, float]:
        """Where the drone will be at the start of ``tick`` (x, y, heading, s) if nothing
        changes before then: what the executive cuts a plan at. Fuel is not limiting here."""
        i = self._index_of(drone_id)
        ahead = max(0, int(tick) - self.tick)
        s = float(self._F[K.S, i])
        flight = self._flights[i]
        status = int(self._status[i])
        if flight is None or status not in (K.FLYING, K.HOLDING) or ahead == 0:
            x, y, h = self.position(drone_id)
            return x, y, h, s
        s += ahead * float(self._F[K.SPEED, i]) * self.dt
        if status == K.HOLDING:
            s = math.fmod(s, flight.length)
        s = min(s, flight.length)
        x, y, h = flight.path.locate(s)
        return x, y, h, s

    def fleet_view(self, tick: int) -> FleetView:
        if self._collected_view is None:
            self._collected_view = tuple(tuple(c) for c in self._collected)
        return FleetView(
            tick=tick,
            time=(tick + 1) / self.tick_hz,
            ids=self.drone_ids,
            fleet=self._F.copy(),
            status=self._status.copy(),
            points=self._points.copy(),
            collected=self._collected_view,
            lost_reasons=tuple(self._lost_reason),
            environment_version=self._env_version,
        )

    def active(self) -> bool:
        """Is any drone airborne?"""
        return bool(np.any((self._status == K.FLYING) | (self._status == K.HOLDING)))

    def state_hash(self) -> str:
        """blake2b of the tick, the fleet (positions, headings and arc lengths rounded to
        1e-9 km, fuel, distance flown, statuses, points, collected targets) and the true and
        known environments."""
        h = hashlib.blake2b(digest_size=16)
        h.update(np.int64(self.tick).tobytes())
        rows = self._F[[K.X, K.Y, K.HDG, K.FUEL, K.S, K.LEN, K.ODO]]
        h.update((np.round(rows, 9) + 0.0).tobytes())
        h.update(self._status.tobytes())
        h.update((np.round(self._points, 9) + 0.0).tobytes())
        h.update(self._t_by.tobytes())
        h.update(self._environment_bytes())
        return h.hexdigest()

    # ----- one tick ------------------------------------------------------------------

    def advance(self) -> list:
        """Physics of the current tick (inputs already applied); returns its events."""
        needed = (self._w_used + self._t_alive.size + self._s_alive.size
                  + 3 * self._status.size + 8)
        if self._ev.shape[0] < needed:
            self._ev = np.zeros((2 * needed, 4), dtype=np.int64)
        ne = K.tick_kernel(
            self.dt, self._F, self._status, self._cur, self._p_lo, self._p_hi, self._P,
            self._wp_s, self._wp_t, self._wp_cur, self._wp_hi, self._end_airport,
            self._T, self._t_type, self._t_alive, self._t_by, self._elig,
            float(self.config.capture_radius),
            self._SM, self._s_alive, self._s_known, float(self.config.sensor_range), self._ev,
        )
        events = self._decode(ne) if ne else []
        self.tick += 1
        return events

    def _decode(self, ne: int) -> list:
        tick = self.tick
        events: list = []
        for code, d, obj, aux in self._ev[:ne].tolist():
            drone = self.drone_ids[d]
            if code == K.EV_COLLECTED:
                points = float(self._T[2, obj])
                self._points[d] += points
                self._collected[d].append(self._t_ids[obj])
                self._collected_view = None
                events.append(TargetCollected(tick=tick, drone=drone, target=self._t_ids[obj],
                                              points=points, planned=bool(aux)))
            elif code == K.EV_MISSED:
                events.append(TargetMissed(tick=tick, drone=drone, target=self._t_ids[obj],
                                           reason=_MISS_REASONS[aux]))
            elif code == K.EV_DETECTED:
                self._env_changed()
                events.append(SamDetected(tick=tick, drone=drone, sam=self._s_ids[obj],
                                          pos=(float(self._SM[0, obj]), float(self._SM[1, obj])),
                                          range=float(self._SM[2, obj])))
            elif code == K.EV_LOST_SAM:
                self._lose(d, "sam")
                # Detection runs before kills and sensor_range >= 0, so the SAM is known.
                events.append(DroneLost(tick=tick, drone=drone, reason="sam", sam=self._s_ids[obj],
                                        pos=self._xy(d)))
            elif code == K.EV_LOST_FUEL:
                self._lose(d, "fuel")
                events.append(DroneLost(tick=tick, drone=drone, reason="fuel", pos=self._xy(d)))
            elif code == K.EV_LANDED:
                self._clear_flight(d)
                events.append(DroneLanded(tick=tick, drone=drone, airport=self._airports[obj].id))
            elif code == K.EV_ARRIVED:
                if self._status[d] == K.FLYING:
                    self._start_hold(d, keep=None)
                    events.append(DroneHolding(tick=tick, drone=drone, reason="end_of_path",
                                               pos=self._xy(d)))
        # A drone lost after arriving in the same tick: its hold never started.
        return events

    # ----- edits ---------------------------------------------------------------------

    def apply_edit(self, edit: Edit) -> tuple[list, list]:
        """Apply ``edit`` now; returns (observable events, truth-only events)."""
        tick = self.tick
        hidden = self._names_hidden_sam(edit)
        try:
            extra = self._edit(edit)
        except _Rejected as exc:
            event = EditRejected(tick=tick, edit=edit, reason=str(exc))
            return ([], [event]) if hidden else ([event], [])
        applied = EditApplied(tick=tick, edit=edit)
        if hidden:
            return extra, [applied]
        return [applied, *extra], []

    def _names_hidden_sam(self, edit: Edit) -> bool:
        if edit.op == "add_sam":
            return edit.hidden
        if edit.op in ("remove_sam", "move_sam"):
            q = self._s_index.get(edit.id)
            return q is not None and bool(self._s_alive[q]) and not bool(self._s_known[q])
        return False

    def _edit(self, edit: Edit) -> list:
        op = edit.op
        if op == "add_target":
            if any(a.id == edit.id for a in self._airports) or edit.id in self._synthetic_starts:
                raise _Rejected(f"id {edit.id!r} is an airport or start")
            if self._live_target(edit.id) is not None:
                raise _Rejected(f"target {edit.id!r} already exists")
            self._put_target(edit.id, edit.x, edit.y, edit.priority, edit.type)
            self._refresh_eligibility()
        elif op in ("remove_target", "move_target", "set_priority"):
            j = self._live_target(edit.id)
            if j is None:
                raise _Rejected(f"no target {edit.id!r}")
            if op == "remove_target":
                self._t_alive[j] = False
            elif op == "move_target":
                self._T[0, j], self._T[1, j] = edit.x, edit.y
            else:
                self._T[2, j] = edit.priority
        elif op == "add_sam":
            if self._live_sam(edit.id) is not None:
                raise _Rejected(f"SAM {edit.id!r} already exists")
            self._put_sam(edit.id, edit.pos[0], edit.pos[1], edit.range, known=not edit.hidden)
        elif op in ("remove_sam", "move_sam", "reveal_sam"):
            q = self._live_sam(edit.id)
            if q is None:
                raise _Rejected(f"no SAM {edit.id!r}")
            if op == "remove_sam":
                self._s_alive[q] = False
                self._s_known[q] = False
            elif op == "move_sam":
                self._SM[0, q], self._SM[1, q] = edit.pos
                if edit.range is not None:
                    self._SM[2, q] = edit.range
            else:
                if self._s_known[q]:
                    raise _Rejected(f"SAM {edit.id!r} is already known")
                self._s_known[q] = True
        elif op in ("disable_drone", "set_fuel"):
            i = self._d_index.get(edit.drone)
            if i is None:
                raise _Rejected(f"no drone {edit.drone!r}")
            if self._status[i] == K.LOST:
                raise _Rejected(f"drone {edit.drone} is already lost")
            if op == "set_fuel":
                self._F[K.FUEL, i] = edit.fuel
                return []
            self._lose(i, "disabled")
            return [DroneLost(tick=self.tick, drone=edit.drone, reason="disabled", pos=self._xy(i))]
        else:  # pragma: no cover - the union is closed
            raise _Rejected(f"unknown op {op!r}")
        self._env_changed()
        return []

    # ----- commands ------------------------------------------------------------------

    def apply_command(self, command: Command) -> list:
        """Apply ``command`` now; returns its events (applied or rejected)."""
        tick = self.tick
        i = self._d_index.get(command.drone)
        kind = command.kind
        try:
            if i is None:
                raise _Rejected(f"no drone {command.drone!r}")
            if self._status[i] == K.LOST:
                raise _Rejected("the drone is lost")
            detail, extra = getattr(self, f"_cmd_{kind}")(i, command)
        except _Rejected as exc:
            return [CommandRejected(tick=tick, drone=command.drone, command=kind, reason=str(exc))]
        return [CommandApplied(tick=tick, drone=command.drone, command=kind, detail=detail), *extra]

    def _cmd_fly_path(self, i: int, command: FlyPath):
        path = command.path
        if not (path.length > 0.0 and math.isfinite(path.length)):
            raise _Rejected("the path has no length (use hold)")
        here = self._xy(i)
        gap = math.dist(path.start, here)
        if gap > START_TOLERANCE:
            raise _Rejected(
                f"the path starts at ({path.start[0]:.6f}, {path.start[1]:.6f}), {gap:.6g} km"
                f" from the drone at ({here[0]:.6f}, {here[1]:.6f})"
            )
        last = -math.inf
        for target_id, s in command.waypoints:
            if self._live_target(target_id) is None:
                raise _Rejected(f"waypoint {target_id!r} is not a target")
            if not (0.0 <= s <= path.length + 1e-9) or s < last:
                raise _Rejected(f"waypoint {target_id!r} at s={s:g}: arc lengths must be"
                                f" ascending within [0, {path.length:g}]")
            last = s
        self._set_flight(i, Flight(path, tuple(command.waypoints)), K.FLYING)
        self._holds[i] = None
        end = self._end_airport[i]
        to = f"to {self._airports[end].id}" if end >= 0 else "ending away from an airport"
        return f"{path.length:.3f} km {to}, {len(command.waypoints)} waypoint(s)", []

    def _cmd_hold(self, i: int, command):
        if self._status[i] != K.FLYING:
            raise _Rejected(f"the drone is {K.STATUS_NAMES[self._status[i]]}, not flying")
        flight = self._flights[i]
        s = float(self._F[K.S, i])
        keep = _Hold(flight, s, flight.remaining_waypoints(s) if flight else ())
        self._start_hold(i, keep)
        return f"holding on a {self.config.hold_radius:g} km circle", []

    def _cmd_resume(self, i: int, command):
        hold = self._holds[i]
        if self._status[i] != K.HOLDING or hold is None:
            raise _Rejected("the drone is not holding")
        if hold.flight is None:
            raise _Rejected("nothing to resume: the drone holds at the end of its path")
        rest = slice_path(hold.flight.path, hold.s)
        if rest is None:
            raise _Rejected("nothing to resume: the kept flight is finished")
        circle = self._flights[i]
        assert circle is not None
        s = float(self._F[K.S, i])
        back = slice_path(circle.path, s)  # the rest of the orbit, back to the hold's start
        pieces = (back.pieces if back is not None else ()) + rest.pieces
        offset = (back.length if back is not None else 0.0) - hold.s
        path = Path(pieces, (back.length if back is not None else 0.0) + rest.length)
        waypoints = tuple((t, w + offset) for t, w in hold.waypoints)
        self._set_flight(i, Flight(path, waypoints), K.FLYING)
        self._holds[i] = None
        return f"back on the kept flight after {offset + hold.s:.3f} km of orbit", []

    def _cmd_return_to_base(self, i: int, command):
        config = self._configs[i]
        airport_id = command.airport or config.home
        airport = next((a for a in self._airports if a.id == airport_id), None)
        if airport is None:
            raise _Rejected(f"no airport {airport_id!r}")
        here = self._xy(i)
        if self._status[i] in (K.PARKED, K.LANDED) and math.dist(here, (airport.x, airport.y)) <= _AIRPORT_TOLERANCE:
            raise _Rejected(f"the drone is already at {airport_id}")
        known = [(float(self._SM[0, q]), float(self._SM[1, q]), float(self._SM[2, q]))
                 for q in range(self._s_alive.size) if self._s_alive[q] and self._s_known[q]]
        path = SamField(known).shortest_path(here, (airport.x, airport.y))
        if path is None or path.length <= 0.0:
            raise _Rejected(f"no way from ({here[0]:.2f}, {here[1]:.2f}) to {airport_id} that"
                            " avoids the known SAMs")
        self._set_flight(i, Flight(path), K.FLYING)
        self._holds[i] = None
        return f"{path.length:.3f} km to {airport_id} avoiding {len(known)} known SAM(s)", []

    def _cmd_disable(self, i: int, command):
        self._lose(i, "disabled")
        return "disabled", [DroneLost(tick=self.tick, drone=command.drone, reason="disabled",
                                      pos=self._xy(i))]

    # ----- helpers -------------------------------------------------------------------

    def _index_of(self, drone_id: str) -> int:
        try:
            return self._d_index[drone_id]
        except KeyError:
            raise SimError(f"no drone {drone_id!r}") from None

    def _xy(self, i: int) -> tuple[float, float]:
        return float(self._F[K.X, i]), float(self._F[K.Y, i])

    def _lose(self, i: int, reason: str) -> None:
        self._status[i] = K.LOST
        self._lost_reason[i] = reason
        self._clear_flight(i)

    def _clear_flight(self, i: int) -> None:
        self._flights[i] = None
        self._holds[i] = None
        self._F[K.LEN, i] = 0.0
        self._p_hi[i] = self._cur[i] = self._p_lo[i]
        self._wp_hi[i] = self._wp_cur[i] = self._wp_lo[i]

    def _set_flight(self, i: int, flight: Flight, status: int) -> None:
        self._flights[i] = flight
        self._status[i] = status
        self._F[K.S, i] = 0.0
        self._F[K.LEN, i] = flight.length
        end = flight.path.end
        self._end_airport[i] = -1
        if not flight.holding and self._airport_xy.size:
            gaps = np.hypot(self._airport_xy[:, 0] - end[0], self._airport_xy[:, 1] - end[1])
            k = int(np.argmin(gaps))
            if gaps[k] <= _AIRPORT_TOLERANCE:
                self._end_airport[i] = k
        self._place(i)

    def _start_hold(self, i: int, keep: _Hold | None) -> None:
        x, y, h = self._xy(i) + (float(self._F[K.HDG, i]),)
        radius = float(self.config.hold_radius)
        # Turn to the side that keeps farther from the known SAMs (left on a tie).
        best = None
        for left in (True, False):
            circle = hold_circle(x, y, h, radius, left)
            c = circle.pieces[0].center
            clearance = min(
                (math.hypot(c[0] - self._SM[0, q], c[1] - self._SM[1, q]) - radius - self._SM[2, q]
                 for q in range(self._s_alive.size) if self._s_alive[q] and self._s_known[q]),
                default=math.inf,
            )
            if best is None or clearance > best[0]:
                best = (clearance, circle)
        self._set_flight(i, Flight(best[1], holding=True), K.HOLDING)
        self._holds[i] = keep

    def _place(self, i: int) -> None:
        """Append drone ``i``'s new flight to the kernel's buffers (compact them if full)."""
        flight = self._flights[i]
        pieces = flight.pieces
        k, w = pieces.shape[1], len(flight.waypoints)
        if self._p_used + k > self._P.shape[1] or self._w_used + w > self._wp_s.size:
            self._cur[i] = self._wp_cur[i] = -1  # laid out fresh
            self._compact()
            return
        lo, wlo = self._p_used, self._w_used
        self._P[:, lo:lo + k] = pieces
        self._p_lo[i], self._p_hi[i], self._cur[i] = lo, lo + k, lo
        for n, (target_id, s) in enumerate(flight.waypoints):
            self._wp_s[wlo + n] = s
            self._wp_t[wlo + n] = self._t_index[target_id]  # checked when the flight was set
        self._wp_lo[i], self._wp_hi[i], self._wp_cur[i] = wlo, wlo + w, wlo
        self._p_used += k
        self._w_used += w

    def _compact(self) -> None:
        """Lay every live flight out afresh, with room to grow, keeping the cursors."""
        n = len(self.drone_ids)
        live_p = sum(f.pieces.shape[1] for f in self._flights if f is not None)
        live_w = sum(len(f.waypoints) for f in self._flights if f is not None)
        P = np.zeros((N_PIECE_ROWS, max(64, 2 * live_p)))
        wp_s = np.zeros(max(64, 2 * live_w))
        wp_t = np.zeros(wp_s.size, dtype=np.int64)
        p_lo, p_hi, cur = (np.zeros(n, dtype=np.int64) for _ in range(3))
        wp_lo, wp_hi, wp_cur = (np.zeros(n, dtype=np.int64) for _ in range(3))
        p = w = 0
        for i, flight in enumerate(self._flights):
            p_lo[i], wp_lo[i] = p, w
            if flight is not None:
                k = flight.pieces.shape[1]
                P[:, p:p + k] = flight.pieces
                for m, (target_id, s) in enumerate(flight.waypoints):
                    wp_s[w + m] = s
                    wp_t[w + m] = self._t_index[target_id]
                p += k
                w += len(flight.waypoints)
            p_hi[i], wp_hi[i] = p, w
            old = self._cur[i]
            cur[i] = p_lo[i] if old < 0 else min(p_lo[i] + old - self._p_lo[i], max(p_lo[i], p_hi[i] - 1))
            old = self._wp_cur[i]
            wp_cur[i] = wp_lo[i] if old < 0 else min(wp_lo[i] + old - self._wp_lo[i], wp_hi[i])
        self._P, self._p_lo, self._p_hi, self._cur, self._p_used = P, p_lo, p_hi, cur, p
        self._wp_s, self._wp_t, self._w_used = wp_s, wp_t, w
        self._wp_lo, self._wp_hi, self._wp_cur = wp_lo, wp_hi, wp_cur

    def _put_target(self, target_id, x, y, priority, type_) -> None:
        code = self._types.setdefault(type_, len(self._types))
        j = self._t_index.get(target_id)
        if j is None:
            j = len(self._t_ids)
            self._t_ids.append(target_id)
            self._t_index[target_id] = j
            self._T = np.concatenate((self._T, np.zeros((3, 1))), axis=1)
            self._t_type = np.append(self._t_type, 0)
            self._t_alive = np.append(self._t_alive, False)
            self._t_by = np.append(self._t_by, -1)
        self._T[:, j] = (x, y, priority)
        self._t_type[j] = code
        self._t_alive[j] = True
        self._t_by[j] = -1

    def _put_sam(self, sam_id, x, y, radius, known: bool) -> None:
        q = self._s_index.get(sam_id)
        if q is None:
            q = len(self._s_ids)
            self._s_ids.append(sam_id)
            self._s_index[sam_id] = q
            self._SM = np.concatenate((self._SM, np.zeros((3, 1))), axis=1)
            self._s_alive = np.append(self._s_alive, False)
            self._s_known = np.append(self._s_known, False)
        self._SM[:, q] = (x, y, radius)
        self._s_alive[q] = True
        self._s_known[q] = known

    def _live_target(self, target_id: str) -> int | None:
        j = self._t_index.get(target_id)
        return j if j is not None and self._t_alive[j] else None

    def _live_sam(self, sam_id: str) -> int | None:
        q = self._s_index.get(sam_id)
        return q if q is not None and self._s_alive[q] else None

    def _refresh_eligibility(self) -> None:
        n = len(self._configs)
        elig = np.zeros((n, max(1, len(self._types))), dtype=np.bool_)
        for i, config in enumerate(self._configs):
            for type_, code in self._types.items():
                elig[i, code] = config.accessible_targets == ALL_SENSORS or type_ in config.accessible_targets
        self._elig = elig

    def _env_changed(self) -> None:
        self._env_version += 1

    def _environment(self, known_only: bool) -> Environment:
        key = "known" if known_only else "truth"
        cached = self._env_cache.get(key)
        if cached is not None and cached[0] == self._env_version:
            return cached[1]
        targets = [
            Target(id=self._t_ids[j], x=float(self._T[0, j]), y=float(self._T[1, j]),
                   priority=float(self._T[2, j]), type=_type_name(self._types, int(self._t_type[j])))
            for j in range(len(self._t_ids)) if self._t_alive[j]
        ]
        sams = [
            Sam(id=self._s_ids[q], pos=(float(self._SM[0, q]), float(self._SM[1, q])),
                range=float(self._SM[2, q]))
            for q in range(len(self._s_ids))
            if self._s_alive[q] and (self._s_known[q] or not known_only)
        ]
        env = Environment(airports=self._airports, targets=targets, sams=sams,
                          synthetic_starts=self._synthetic_starts)
        self._env_cache[key] = (self._env_version, env)
        return env

    def _environment_bytes(self) -> bytes:
        if self._env_bytes is not None and self._env_bytes[0] == self._env_version:
            return self._env_bytes[1]
        h = hashlib.blake2b(digest_size=16)
        h.update("\x1f".join(self._t_ids).encode())
        h.update((np.round(self._T, 9) + 0.0).tobytes())
        h.update(self._t_type.tobytes())
        h.update(self._t_alive.tobytes())
        h.update("\x1f".join(self._s_ids).encode())
        h.update((np.round(self._SM, 9) + 0.0).tobytes())
        h.update(self._s_alive.tobytes())
        h.update(self._s_known.tobytes())
        out = h.digest()
        self._env_bytes = (self._env_version, out)
        return out


class _Rejected(Exception):
    """An input that cannot be applied; its message is the reason in the event."""


def _type_name(types: dict[str, int], code: int) -> str:
    for name, c in types.items():
        if c == code:
            return name
    raise SimError(f"unknown target type code {code}")  # pragma: no cover
