"""The fleet: every drone's state in arrays, the flight it follows, and one tick of physics.

Drone ``i`` (index order of ``scenario.drone_configs``) has a column of ``F`` (the rows of
``sim._kernels``: position, heading, speed, fuel left, arc length along its flight, that
flight's length, distance flown, where it was at the start of the tick), a status code, its
points and the targets it collected, and, once lost, why. ``advance`` runs the kernel over
every drone at once and turns the rows it writes into typed events, in the kernel's order.
The flight-level operations (set a flight, hold, lose) are what edits and commands use.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from planner.model import Scenario, SimConfig
from sim import _kernels as K
from sim._environment import EnvironmentState
from sim._layout import FlightLayout
from sim.errors import SimError
from sim.events import (
    DroneHolding,
    DroneLanded,
    DroneLost,
    Event,
    SamDetected,
    TargetCollected,
    TargetMissed,
)
from sim.flight import Flight, hold_circle
from sim.snapshot import FleetView

__all__ = ["AIRPORT_TOLERANCE", "Fleet", "KeptFlight"]

AIRPORT_TOLERANCE = 1e-6  # km: a path ending this close to an airport ends at it
_MISS_REASONS: tuple[Literal["removed", "moved", "already_collected", "sensor"], ...] = (
    "removed",
    "moved",
    "already_collected",
    "sensor",
)  # by the kernel's MISS_* codes


@dataclass(frozen=True)
class KeptFlight:
    """What a holding drone resumes: the flight it left and where it left it."""

    flight: Flight | None
    s: float
    waypoints: tuple[tuple[str, float], ...]  # still to collect, arc lengths of ``flight``


class Fleet:
    """The drones of ``scenario`` over the environment ``env``; see the module's docstring."""

    def __init__(self, scenario: Scenario, env: EnvironmentState) -> None:
        self.env = env
        self.config: SimConfig = scenario.sim
        self.drone_ids: tuple[str, ...] = tuple(scenario.drone_configs)
        self.index = {d: i for i, d in enumerate(self.drone_ids)}
        self.configs = [scenario.drone_configs[d] for d in self.drone_ids]
        n = len(self.drone_ids)
        self.F: K.FloatArray = np.zeros((K.N_FLEET_ROWS, n))
        self.status: K.StatusArray = np.full(n, K.PARKED, dtype=np.int8)
        self.points: K.FloatArray = np.zeros(n)
        self.collected: list[list[str]] = [[] for _ in range(n)]
        self._collected_view: tuple[tuple[str, ...], ...] | None = None
        self.lost_reason: list[str | None] = [None] * n
        self.flights: list[Flight | None] = [None] * n
        self.holds: list[KeptFlight | None] = [None] * n
        self.elig: K.BoolArray = env.eligibility(self.configs)
        for i, config in enumerate(self.configs):
            start = scenario.environment.position(config.start) if config.start else None
            if start is None:
                raise SimError(f"drone {self.drone_ids[i]}: unknown start {config.start!r}")
            self.F[K.X, i], self.F[K.Y, i] = start
            self.F[K.FUEL, i] = config.fuel_budget
            self.F[K.SPEED, i] = self.config.speed_of(self.drone_ids[i])
        self.F[K.OX] = self.F[K.X]
        self.F[K.OY] = self.F[K.Y]
        self.layout = FlightLayout(n)
        self.end_airport: K.IntArray = np.full(n, -1, dtype=np.int64)  # where a flight lands
        self._ev: K.IntArray = np.zeros((16, 4), dtype=np.int64)

    def frozen(self, env: EnvironmentState) -> Fleet:
        """A copy as it is now over ``env`` (the environment's own frozen copy), for reading
        in another thread while this one ticks on: arrays and per-drone lists copied; the
        flights are immutable and shared. Never advanced: the kernel's layout is shared."""
        copy = object.__new__(Fleet)
        copy.__dict__.update(self.__dict__)
        copy.env = env
        copy.F, copy.status, copy.points = self.F.copy(), self.status.copy(), self.points.copy()
        copy.collected = [list(c) for c in self.collected]
        copy.lost_reason, copy.flights = list(self.lost_reason), list(self.flights)
        copy.holds, copy.end_airport = list(self.holds), self.end_airport.copy()
        return copy

    # ----- reading -------------------------------------------------------------------

    def index_of(self, drone_id: str) -> int:
        """Drone ``drone_id``'s index; SimError if there is no such drone."""
        try:
            return self.index[drone_id]
        except KeyError:
            raise SimError(f"no drone {drone_id!r}") from None

    def xy(self, i: int) -> tuple[float, float]:
        """Where drone ``i`` is."""
        return float(self.F[K.X, i]), float(self.F[K.Y, i])

    def active(self) -> bool:
        """Is any drone airborne?"""
        return K.any_airborne(self.status)  # asked every tick: one pass, no temporaries

    def checkpoint(self, i: int, ahead: int, dt: float) -> tuple[float, float, float, float]:
        """Where drone ``i`` will be ``ahead`` ticks from now (x, y, heading, s) if nothing
        changes before then. Fuel is not limiting here."""
        s = float(self.F[K.S, i])
        flight = self.flights[i]
        status = int(self.status[i])
        if flight is None or status not in (K.FLYING, K.HOLDING) or ahead == 0:
            x, y = self.xy(i)
            return x, y, float(self.F[K.HDG, i]), s
        s += ahead * float(self.F[K.SPEED, i]) * dt
        if status == K.HOLDING:
            s = math.fmod(s, flight.length)
        s = min(s, flight.length)
        x, y, h = flight.path.locate(s)
        return x, y, h, s

    def view(self, tick: int, time: float, environment_version: int) -> FleetView:
        """A frozen copy of the fleet's arrays for the tick just run."""
        if self._collected_view is None:
            self._collected_view = tuple(tuple(c) for c in self.collected)
        return FleetView(
            tick=tick,
            time=time,
            ids=self.drone_ids,
            fleet=self.F.copy(),
            status=self.status.copy(),
            points=self.points.copy(),
            collected=self._collected_view,
            lost_reasons=tuple(self.lost_reason),
            environment_version=environment_version,
        )

    # ----- flights -------------------------------------------------------------------

    def set_flight(self, i: int, flight: Flight, status: int) -> None:
        """Drone ``i`` follows ``flight`` from its start from now on, with ``status``."""
        self.set_flights([i], [flight], status)

    def set_flights(self, ids: Sequence[int], flights: Sequence[Flight], status: int) -> K.IntArray:
        """Each drone ``ids[n]`` follows ``flights[n]`` from its start from now on, with
        ``status`` (a drone named twice: its last); returns the airport each flight ends at
        (-1: none). At once, not one by one: a swarm's commit begins ~780 flights on a tick."""
        ends = np.full(len(flights), -1, dtype=np.int64)
        if not flights:
            return ends
        airport_xy = self.env.airport_xy
        landing = [n for n, flight in enumerate(flights) if not flight.holding]
        if landing and airport_xy.size:
            points = np.array([flights[n].path.end for n in landing], dtype=np.float64)
            ends[landing] = K.airports_at(airport_xy, points, AIRPORT_TOLERANCE)
        last = {i: n for n, i in enumerate(ids)}  # the drone's last flight of the call
        placed = list(last)
        chosen = list(last.values())
        for i, n in last.items():
            self.flights[i] = flights[n]
        at = np.array(placed, dtype=np.int64)
        self.status[at] = status
        self.F[K.S, at] = 0.0
        self.F[K.LEN, at] = [flights[n].length for n in chosen]
        self.end_airport[at] = ends[chosen]
        self.layout.place(placed, self.flights, self.env.t_index)
        return ends

    def start_hold(self, i: int, keep: KeptFlight | None) -> None:
        """Drone ``i`` flies a holding circle through where it is, tangent to its heading,
        turning to the side that keeps farther from the known SAMs (left on a tie); ``keep``
        is what a ``resume`` goes back to."""
        x, y = self.xy(i)
        h = float(self.F[K.HDG, i])
        radius = float(self.config.hold_radius)
        # as arrays: a pause holds a swarm's every drone on one tick (1,000 x 500 SAMs)
        known = self.env.known_sam_array()
        left = True
        if known.shape[0]:
            # the two circles' centres, left and right of the heading (``hold_circle``'s)
            lx, ly = (
                x + radius * math.cos(h + 0.5 * math.pi),
                y + radius * math.sin(h + 0.5 * math.pi),
            )
            rx, ry = (
                x + radius * math.cos(h - 0.5 * math.pi),
                y + radius * math.sin(h - 0.5 * math.pi),
            )
            gap_left, gap_right = K.hold_clearances(lx, ly, rx, ry, known)
            left = gap_left >= gap_right  # left on a tie
        circle = hold_circle(x, y, h, radius, left)
        self.set_flight(i, Flight(circle, holding=True), K.HOLDING)
        self.holds[i] = keep

    def clear_flight(self, i: int) -> None:
        """Drone ``i`` follows nothing (landed or lost)."""
        self.flights[i] = None
        self.holds[i] = None
        self.F[K.LEN, i] = 0.0
        self.layout.clear(i)

    def lose(self, i: int, reason: str) -> None:
        """Drone ``i`` is lost for ``reason``; it stays where it is and burns nothing."""
        self.status[i] = K.LOST
        self.lost_reason[i] = reason
        self.clear_flight(i)

    def refresh_eligibility(self) -> None:
        """Recompute who can sense what (after a target of a new type appeared)."""
        self.elig = self.env.eligibility(self.configs)

    # ----- one tick ------------------------------------------------------------------

    def advance(self, dt: float, tick: int) -> list[Event]:
        """Run tick ``tick``'s physics over every drone (``sim._kernels.tick_kernel``) and
        return its events."""
        env, lay = self.env, self.layout
        needed = lay.w_used + env.t_alive.size + env.s_alive.size + 3 * self.status.size + 8
        if self._ev.shape[0] < needed:
            self._ev = np.zeros((2 * needed, 4), dtype=np.int64)
        kernel = K.tick_kernel if self.status.size >= K.NOGIL_FLEET else K.tick_kernel_held
        ne = kernel(
            dt,
            self.F,
            self.status,
            lay.cur,
            lay.p_lo,
            lay.p_hi,
            lay.P,
            lay.wp_s,
            lay.wp_t,
            lay.wp_cur,
            lay.wp_hi,
            self.end_airport,
            env.T,
            env.t_type,
            env.t_alive,
            env.t_by,
            self.elig,
            float(self.config.capture_radius),
            env.SM,
            env.s_alive,
            env.s_known,
            float(self.config.sensor_range),
            self._ev,
        )
        return self._decode(ne, tick) if ne else []

    def _decode(self, ne: int, tick: int) -> list[Event]:
        """The kernel's event rows as typed events; applies what follows from them (points,
        lost drones, landings, holds at the end of a path, detections known)."""
        env = self.env
        events: list[Event] = []
        for code, d, obj, aux in self._ev[:ne].tolist():
            drone = self.drone_ids[d]
            if code == K.EV_COLLECTED:
                points = float(env.T[2, obj])
                self.points[d] += points
                self.collected[d].append(env.t_ids[obj])
                self._collected_view = None
                events.append(
                    TargetCollected(
                        tick=tick,
                        drone=drone,
                        target=env.t_ids[obj],
                        points=points,
                        planned=bool(aux),
                    )
                )
            elif code == K.EV_MISSED:
                events.append(
                    TargetMissed(
                        tick=tick, drone=drone, target=env.t_ids[obj], reason=_MISS_REASONS[aux]
                    )
                )
            elif code == K.EV_DETECTED:
                env.changed()
                events.append(
                    SamDetected(
                        tick=tick,
                        drone=drone,
                        sam=env.s_ids[obj],
                        pos=(float(env.SM[0, obj]), float(env.SM[1, obj])),
                        range=float(env.SM[2, obj]),
                    )
                )
            elif code == K.EV_LOST_SAM:
                self.lose(d, "sam")
                # Detection runs before kills and sensor_range >= 0, so the SAM is known.
                events.append(
                    DroneLost(
                        tick=tick, drone=drone, reason="sam", sam=env.s_ids[obj], pos=self.xy(d)
                    )
                )
            elif code == K.EV_LOST_FUEL:
                self.lose(d, "fuel")
                events.append(DroneLost(tick=tick, drone=drone, reason="fuel", pos=self.xy(d)))
            elif code == K.EV_LANDED:
                self.clear_flight(d)
                events.append(DroneLanded(tick=tick, drone=drone, airport=env.airports[obj].id))
            elif code == K.EV_ARRIVED:  # noqa: SIM102 - one branch per event code
                if self.status[d] == K.FLYING:
                    self.start_hold(d, keep=None)
                    events.append(
                        DroneHolding(tick=tick, drone=drone, reason="end_of_path", pos=self.xy(d))
                    )
        # A drone lost after arriving in the same tick: its hold never started.
        return events
