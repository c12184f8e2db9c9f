"""The mission model every package imports: environment, drones, scenario and solution.

These are the seed's data contracts (seed 000, Appendix B) as validated value objects.
Field names keep the seed's JSON spelling through aliases (``fuelBudget``,
``accessibleTargets``, ``from``), so the seed's JSON loads as it is, while Python code uses
snake_case. Unknown fields are rejected: a typo in a scenario is an error, not a silence.
Types are strict (``"25"`` is not a number, ``"yes"`` and ``1`` are not booleans) and every
number is bounded; the field types and their bounds come from ``planner.limits``.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from planner.edits import Edit
from planner.geo import GeoOrigin, GeoPlan
from planner.limits import (
    CaptureRadius,
    Coordinate,
    DroneSpeed,
    Duration,
    Flag,
    Fuel,
    HoldRadius,
    Identifier,
    Label,
    Priority,
    SamRange,
    Seed,
    SensorRange,
    SensorType,
    StartCoordinate,
    TickHz,
)

__all__ = [
    "ALL_SENSORS",
    "Airport",
    "DroneConfig",
    "EndMode",
    "Environment",
    "FrozenSegment",
    "Point",
    "RouteResult",
    "Sam",
    "Scenario",
    "SimConfig",
    "Solution",
    "Target",
    "drone_label",
    "synthetic_start_id",
]

ALL_SENSORS: Final = "ALL"
EndMode = Literal["return", "end", "best_end"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class Point(_Model):
    """A position in km (east, north): where a replan takes over a drone, so it may lie
    outside the box airports and targets live in (``limits.MAX_START_COORD_KM``)."""

    x: StartCoordinate
    y: StartCoordinate


class Airport(_Model):
    """Where drones take off and land."""

    id: Identifier
    x: Coordinate
    y: Coordinate
    label: Label | None = None


class Target(_Model):
    """Something to observe, worth ``priority`` points to a drone whose sensors cover its
    ``type``."""

    id: Identifier
    x: Coordinate
    y: Coordinate
    priority: Priority
    type: SensorType


class Sam(_Model):
    """A surface-to-air missile site: a disk of ``range`` km around ``pos`` no drone may enter."""

    id: Identifier
    pos: tuple[Coordinate, Coordinate]
    range: SamRange

    @property
    def x(self) -> float:
        """East coordinate of the centre (km)."""
        return self.pos[0]

    @property
    def y(self) -> float:
        """North coordinate of the centre (km)."""
        return self.pos[1]


class Environment(_Model):
    """The world a mission flies in: airports, targets, SAMs and synthetic starts."""

    airports: list[Airport] = Field(min_length=1)
    targets: list[Target] = Field(default_factory=list)
    sams: list[Sam] = Field(default_factory=list)
    # Where a drone will be when a replan takes over (``D1_START``): a start like an airport.
    synthetic_starts: dict[Identifier, Point] = Field(default_factory=dict)

    def airport(self, airport_id: str) -> Airport | None:
        """The airport ``airport_id``, or None."""
        return next((a for a in self.airports if a.id == airport_id), None)

    def target(self, target_id: str) -> Target | None:
        """The target ``target_id``, or None."""
        return next((t for t in self.targets if t.id == target_id), None)

    def position(self, node_id: str) -> tuple[float, float] | None:
        """Where an airport, target or synthetic start is; None if the id is unknown."""
        places: tuple[Airport | Target, ...] = (*self.airports, *self.targets)
        for item in places:
            if item.id == node_id:
                return (item.x, item.y)
        start = self.synthetic_starts.get(node_id)
        return None if start is None else (start.x, start.y)


class FrozenSegment(_Model):
    """A leg already flown or committed: ``from`` -> ``to``. A drone's segments form a chain."""

    from_: Identifier = Field(alias="from")
    to: Identifier


class DroneConfig(_Model):
    """One drone as the scenario describes it (seed B.1): fuel budget in km of flight, where it
    starts and may end, its sensors and the legs already frozen.
    """

    enabled: Flag = True
    fuel_budget: Fuel = Field(alias="fuelBudget")
    home_airport: Identifier | None = None
    start_airport: Identifier | None = None
    end_airport: Identifier | None = None
    # ``return``: back to home; ``end``: to end_airport; ``best_end``: any of allowed_ends.
    end_mode: EndMode | None = None
    allowed_ends: list[Identifier] | None = None
    accessible_targets: list[SensorType] | Literal["ALL"] = Field(
        default=ALL_SENSORS, alias="accessibleTargets"
    )
    frozen_segments: list[FrozenSegment] = Field(default_factory=list)

    @field_validator("accessible_targets")
    @classmethod
    def _all_in_list_means_all(
        cls, value: list[str] | Literal["ALL"]
    ) -> list[str] | Literal["ALL"]:
        if isinstance(value, list) and ALL_SENSORS in value:
            return ALL_SENSORS
        return value

    @property
    def start(self) -> str | None:
        """Where the drone takes off: its start airport, else its home."""
        return self.start_airport or self.home_airport

    @property
    def home(self) -> str | None:
        """Its home airport, else its start airport."""
        return self.home_airport or self.start_airport

    @property
    def mode(self) -> EndMode:
        """How its route ends: the explicit ``end_mode``, else ``end`` when an end airport other
        than home is given, else ``return``.
        """
        if self.end_mode is not None:
            return self.end_mode
        if self.end_airport is not None and self.end_airport != self.home:
            return "end"
        return "return"

    def can_sense(self, target_type: str) -> bool:
        """Whether one of its sensors covers targets of ``target_type``."""
        return self.accessible_targets == ALL_SENSORS or target_type in self.accessible_targets

    def end_options(self, airport_ids: list[str]) -> list[str]:
        """The airports this drone may end at, by its mode (none for a drone without a home,
        which :func:`planner.scenario.references.scenario_problems` reports)."""
        if self.mode == "best_end":
            return list(self.allowed_ends) if self.allowed_ends else list(airport_ids)
        end = (self.end_airport or self.home) if self.mode == "end" else self.home
        return [] if end is None else [end]

    def frozen_route(self) -> list[str]:
        """The frozen chain as node ids, starting at the drone's start (empty if none)."""
        if not self.frozen_segments:
            return []
        return [self.frozen_segments[0].from_, *(seg.to for seg in self.frozen_segments)]


class Scenario(_Model):
    """A whole mission as a file holds it: environment, drones, simulation settings, timeline."""

    environment: Environment
    drone_configs: dict[Identifier, DroneConfig] = Field(min_length=1)
    # Simulation settings and the stamped environment edits (hidden SAMs, pop-ups); both
    # optional, so a planner-only scenario still simulates with the defaults.
    sim: SimConfig = Field(default_factory=lambda: SimConfig())
    timeline: list[Edit] = Field(default_factory=list)
    # Where (0, 0) is on the Earth; positions may then be given as lat/lon (planner.geo).
    geo: GeoOrigin | None = None

    def enabled_drones(self) -> dict[str, DroneConfig]:
        """The drones that fly (``enabled``), by id."""
        return {k: v for k, v in self.drone_configs.items() if v.enabled}


class RouteResult(_Model):
    """One drone's part of a Solution (seed B.3): route ids, distance, points, feasibility."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=False)

    route: list[str]
    distance: float
    total_points: float
    visited_targets: list[str]
    fuel_used: float
    fuel_budget: float | None = None
    feasible: bool
    # The flown polyline [[x, y], ...]; arcs sampled so no point enters a true SAM disk.
    path: list[tuple[float, float]] | None = None


class Solution(_Model):
    """Seed B.3, plus the excluded targets and, per route, the flown polyline."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=False)

    routes: dict[str, RouteResult]
    allocation: dict[str, list[str]]
    sequences: dict[str, str]
    unassigned_targets: list[str]
    excluded_targets: list[str] = Field(default_factory=list)
    total_points: float
    total_fuel: float
    # Lat/lon of the routes when the mission has a geo origin (planner.interop.geo_solution).
    geo: GeoPlan | None = None


def drone_label(drone_id: str) -> str:
    """``"1"`` -> ``"D1"``; ids that are already names stay as they are."""
    return f"D{drone_id}" if drone_id.isdigit() else drone_id


def synthetic_start_id(drone_id: str) -> str:
    """``"1"`` -> ``"D1_START"``: the id of the point where a replan takes over the drone."""
    return f"{drone_label(drone_id)}_START"


class SimConfig(_Model):
    """The scenario's ``sim`` section: how the fixed-tick simulation flies it.

    Distances in km, times in seconds, speeds in km/s (0.1 km/s = 360 km/h).
    """

    tick_hz: TickHz = 20.0
    seed: Seed = 0
    # One tick's step, speed / tick_hz, is at most limits.MAX_TICK_STEP_KM (checked with the
    # scenario, planner.scenario.limits): no tick jumps over a SAM or past the sensor range.
    speed: DroneSpeed = 0.1
    # Per drone id, overriding ``speed``.
    drone_speeds: dict[Identifier, DroneSpeed] = Field(default_factory=dict)
    # A hidden SAM is detected when a drone's distance to its edge (centre distance minus
    # range) is at most this.
    sensor_range: SensorRange = 10.0
    # A target is collected when a drone that can sense it passes within this distance.
    capture_radius: CaptureRadius = 0.5
    # Radius of the circle a holding drone flies.
    hold_radius: HoldRadius = 1.0
    # The simulation stops here at the latest (seconds); None: when every drone is done.
    max_duration: Duration | None = None

    def speed_of(self, drone_id: str) -> float:
        """The speed (km/s) of drone ``drone_id``."""
        return float(self.drone_speeds.get(drone_id, self.speed))


Scenario.model_rebuild()
