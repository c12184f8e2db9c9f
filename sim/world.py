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
* ``state_hash()`` fingerprints the tick, the fleet and both environments: the same inputs
  at the same ticks give the same hashes.

Where it lives
--------------
``World`` is the face; its parts are private modules of one idea each: ``sim._environment``
(targets and SAMs, known vs truth, the environment's digest), ``sim._fleet`` (the drones'
arrays, their flights, one tick of physics), ``sim._layout`` (flights laid out for the
kernel), ``sim._apply_edit`` and ``sim._apply_command`` (inputs at a tick boundary).

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
from collections.abc import Mapping, Sequence

import numpy as np

from planner.edits import Edit
from planner.geometry import Path
from planner.mission import Mission, compile_mission
from planner.model import Environment, Scenario
from sim import _kernels as K
from sim._apply_command import apply_command, apply_fly_paths
from sim._apply_edit import apply_edit
from sim._environment import EnvironmentState
from sim._fleet import Fleet
from sim.commands import START_TOLERANCE, Command, FlyPath
from sim.errors import SimError
from sim.events import Event
from sim.flight import Flight, slice_path
from sim.snapshot import DroneStatus, FleetView

__all__ = ["World"]


class World:
    """The truth of one mission, advanced one tick at a time; see the module's contract.

    ``World(scenario, routes=None, *, mission=None)``: ``routes`` maps drone ids to planned
    node ids (those drones take off at tick 0 along ``mission``'s geometry; SimError if a
    route is for a disabled drone or does not start at the drone's start); ``mission`` is
    the scenario compiled over its visible SAMs, compiled on first use if not given."""

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
        self._mission = mission
        self._env = EnvironmentState(scenario.environment)
        self._fleet = Fleet(scenario, self._env)
        self.drone_ids: tuple[str, ...] = self._fleet.drone_ids
        for drone_id, route in (routes or {}).items():
            i = self._fleet.index_of(drone_id)
            if not self._fleet.configs[i].enabled:
                raise SimError(f"drone {drone_id} is disabled in the scenario but has a route")
            flight = Flight.from_route(self.mission, list(route))
            if flight is None:
                continue
            if math.dist(flight.path.start, self._fleet.xy(i)) > START_TOLERANCE:
                raise SimError(f"drone {drone_id}: route starts at {route[0]!r}, not at its start")
            self._fleet.set_flight(i, flight, K.FLYING)

    def frozen(self) -> World:
        """This world as it is now, for reading in another thread while it ticks on: the
        same reads (``status``, ``checkpoint``, ``known_environment`` ...) on copies of its
        arrays, taken in well under a millisecond at 1,000 drones and 5,000 targets. A cut's
        remainder and a picture are built from it off the tick. Read only: never advanced,
        edited or commanded."""
        copy = object.__new__(World)
        copy.__dict__.update(self.__dict__)
        copy._env = self._env.frozen()
        copy._fleet = self._fleet.frozen(copy._env)
        return copy

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
        """Bumps on every change of the environment (edits, detections)."""
        return self._env.version

    @property
    def truth_environment(self) -> Environment:
        """Every live target and SAM, hidden SAMs included: never for the executive."""
        return self._env.truth

    @property
    def known_environment(self) -> Environment:
        """Every live target, and only the SAMs that are known: what the executive sees."""
        return self._env.known

    def status(self, drone_id: str) -> DroneStatus:
        """parked, flying, holding, landed or lost."""
        return K.STATUS_NAMES[int(self._fleet.status[self._fleet.index_of(drone_id)])]

    def flight(self, drone_id: str) -> Flight | None:
        """The flight the drone follows now (its holding circle while it holds)."""
        return self._fleet.flights[self._fleet.index_of(drone_id)]

    def kept_span(self, drone_id: str) -> tuple[Flight, float] | None:
        """The flight a holding drone left (the very object it flew) and the arc length
        where it left it: ``kept_path`` without building it. None as there."""
        hold = self._fleet.holds[self._fleet.index_of(drone_id)]
        if hold is None or hold.flight is None:
            return None
        return hold.flight, hold.s

    def kept_path(self, drone_id: str) -> Path | None:
        """The rest of the flight a holding drone left, which RESUME flies again (None when
        it is not holding, or holds at the end of its path): a view draws it while paused."""
        hold = self._fleet.holds[self._fleet.index_of(drone_id)]
        if hold is None or hold.flight is None:
            return None
        return slice_path(hold.flight.path, hold.s)

    def position(self, drone_id: str) -> tuple[float, float, float]:
        """x, y (km) and heading (radians, counter-clockwise from east)."""
        F, i = self._fleet.F, self._fleet.index_of(drone_id)
        return float(F[K.X, i]), float(F[K.Y, i]), float(F[K.HDG, i])

    def fuel(self, drone_id: str) -> float:
        """Km of flight left."""
        return float(self._fleet.F[K.FUEL, self._fleet.index_of(drone_id)])

    def progress(self, drone_id: str) -> float:
        """Arc length flown along the current flight."""
        return float(self._fleet.F[K.S, self._fleet.index_of(drone_id)])

    def flight_fuel(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every drone's at once (``drone_ids`` order; new arrays): the km of fuel left, the
        km of its flight left (its length less its progress, as ``flight`` and ``progress``
        give them: 0 with no flight), and whether it flies (not holds) a flight that ends at
        an airport (within ``AIRPORT_TOLERANCE``). What a safety check reads of ~780
        airborne drones, one accessor at a time, in most of its 3 ms of Python."""
        f = self._fleet
        F = f.F
        lands = (f.status == K.FLYING) & (f.end_airport >= 0)
        return F[K.FUEL].copy(), F[K.LEN] - F[K.S], lands

    def collected(self) -> dict[str, str]:
        """Target id -> id of the drone that collected it."""
        env = self._env
        return {
            env.t_ids[j]: self.drone_ids[int(env.t_by[j])] for j in np.nonzero(env.t_by >= 0)[0]
        }

    def checkpoint(self, drone_id: str, tick: int) -> tuple[float, float, float, float]:
        """Where the drone will be at the start of ``tick`` (x, y, heading, s) if nothing
        changes before then: what the executive cuts a plan at. Fuel is not limiting here."""
        i = self._fleet.index_of(drone_id)
        return self._fleet.checkpoint(i, max(0, int(tick) - self.tick), self.dt)

    def fleet_view(self, tick: int) -> FleetView:
        """A frozen copy of the fleet's arrays, labelled as the end of ``tick``."""
        return self._fleet.view(tick, (tick + 1) / self.tick_hz, self._env.version)

    def active(self) -> bool:
        """Is any drone airborne?"""
        return self._fleet.active()

    def state_hash(self) -> str:
        """blake2b of the tick, the fleet (positions, headings and arc lengths rounded to
        1e-9 km, fuel, distance flown, statuses, points, collected targets) and the true and
        known environments."""
        fleet = self._fleet
        h = hashlib.blake2b(digest_size=16)
        h.update(np.int64(self.tick).tobytes())
        rows = fleet.F[[K.X, K.Y, K.HDG, K.FUEL, K.S, K.LEN, K.ODO]]
        h.update((np.round(rows, 9) + 0.0).tobytes())
        h.update(fleet.status.tobytes())
        h.update((np.round(fleet.points, 9) + 0.0).tobytes())
        h.update(self._env.t_by.tobytes())
        h.update(self._env.digest())
        return h.hexdigest()

    # ----- changes -------------------------------------------------------------------

    def advance(self) -> list[Event]:
        """Physics of the current tick (inputs already applied); returns its events."""
        events = self._fleet.advance(self.dt, self.tick)
        self.tick += 1
        return events

    def apply_edit(self, edit: Edit) -> tuple[list[Event], list[Event]]:
        """Apply ``edit`` now; returns (observable events, truth-only events)."""
        return apply_edit(edit, tick=self.tick, env=self._env, fleet=self._fleet)

    def apply_command(self, command: Command) -> list[Event]:
        """Apply ``command`` now; returns its events (applied or rejected)."""
        return apply_command(command, tick=self.tick, env=self._env, fleet=self._fleet)

    def apply_fly_paths(self, commands: Sequence[FlyPath]) -> list[Event]:
        """Apply these ``fly_path`` commands now, in order, their flights begun at once;
        returns their events (``sim._apply_command.apply_fly_paths``)."""
        return apply_fly_paths(commands, tick=self.tick, env=self._env, fleet=self._fleet)
