"""The mission model every package imports: environment, drones, scenario and solution.

These are the seed's data contracts (seed 000, Appendix B) as validated value objects.
Field names keep the seed's JSON spelling through aliases (``fuelBudget``,
``accessibleTargets``, ``from``), so the seed's JSON loads as it is, while Python code uses
snake_case. Unknown fields are rejected: a typo in a scenario is an error, not a silence.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from planner.edits import Edit

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

ALL_SENSORS = "ALL"
EndMode = Literal["return", "end", "best_end"]

Coordinate = Annotated[float, Field(allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Identifier = Annotated[str, Field(min_length=1)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class Point(_Model):
    x: Coordinate
    y: Coordinate


class Airport(_Model):
    id: Identifier
    x: Coordinate
    y: Coordinate
    label: str | None = None


class Target(_Model):
    id: Identifier
    x: Coordinate
    y: Coordinate
    priority: NonNegative
    type: Identifier


class Sam(_Model):
    id: Identifier
    pos: tuple[Coordinate, Coordinate]
    range: Annotated[float, Field(gt=0, allow_inf_nan=False)]

    @property
    def x(self) -> float:
        return self.pos[0]

    @property
    def y(self) -> float:
        return self.pos[1]


class Environment(_Model):
    airports: list[Airport] = Field(min_length=1)
    targets: list[Target] = Field(default_factory=list)
    sams: list[Sam] = Field(default_factory=list)
    # Where a drone will be when a replan takes over (``D1_START``): a start like an airport.
    synthetic_starts: dict[Identifier, Point] = Field(default_factory=dict)

    def airport(self, airport_id: str) -> Airport | None:
        return next((a for a in self.airports if a.id == airport_id), None)

    def target(self, target_id: str) -> Target | None:
        return next((t for t in self.targets if t.id == target_id), None)

    def position(self, node_id: str) -> tuple[float, float] | None:
        """Where an airport, target or synthetic start is; None if the id is unknown."""
        for item in (*self.airports, *self.targets):
            if item.id == node_id:
                return (item.x, item.y)
        start = self.synthetic_starts.get(node_id)
        return None if start is None else (start.x, start.y)


class FrozenSegment(_Model):
    """A leg already flown or committed: ``from`` -> ``to``. A drone's segments form a chain."""

    from_: Identifier = Field(alias="from")
    to: Identifier


class DroneConfig(_Model):
    enabled: bool = True
    fuel_budget: NonNegative = Field(alias="fuelBudget")
    home_airport: Identifier | None = None
    start_airport: Identifier | None = None
    end_airport: Identifier | None = None
    # ``return``: back to home; ``end``: to end_airport; ``best_end``: any of allowed_ends.
    end_mode: EndMode | None = None
    allowed_ends: list[Identifier] | None = None
    accessible_targets: list[Identifier] | Literal["ALL"] = Field(
        default=ALL_SENSORS, alias="accessibleTargets"
    )
    frozen_segments: list[FrozenSegment] = Field(default_factory=list)

    @field_validator("accessible_targets")
    @classmethod
    def _all_in_list_means_all(cls, value):
        if isinstance(value, list) and ALL_SENSORS in value:
            return ALL_SENSORS
        return value

    @property
    def start(self) -> str | None:
        return self.start_airport or self.home_airport

    @property
    def home(self) -> str | None:
        return self.home_airport or self.start_airport

    @property
    def mode(self) -> EndMode:
        if self.end_mode is not None:
            return self.end_mode
        if self.end_airport is not None and self.end_airport != self.home:
            return "end"
        return "return"

    def can_sense(self, target_type: str) -> bool:
        return self.accessible_targets == ALL_SENSORS or target_type in self.accessible_targets

    def end_options(self, airport_ids: list[str]) -> list[str]:
        """The airports this drone may end at, by its mode."""
        if self.mode == "best_end":
            return list(self.allowed_ends) if self.allowed_ends else list(airport_ids)
        if self.mode == "end":
            return [self.end_airport or self.home]
        return [self.home]

    def frozen_route(self) -> list[str]:
        """The frozen chain as node ids, starting at the drone's start (empty if none)."""
        if not self.frozen_segments:
            return []
        return [self.frozen_segments[0].from_, *(seg.to for seg in self.frozen_segments)]


class Scenario(_Model):
    environment: Environment
    drone_configs: dict[Identifier, DroneConfig] = Field(min_length=1)
    # Simulation settings and the stamped environment edits (hidden SAMs, pop-ups); both
    # optional, so a planner-only scenario still simulates with the defaults.
    sim: SimConfig = Field(default_factory=lambda: SimConfig())
    timeline: list[Edit] = Field(default_factory=list)

    def enabled_drones(self) -> dict[str, DroneConfig]:
        return {k: v for k, v in self.drone_configs.items() if v.enabled}


class RouteResult(_Model):
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


def drone_label(drone_id: str) -> str:
    """``"1"`` -> ``"D1"``; ids that are already names stay as they are."""
    return f"D{drone_id}" if drone_id.isdigit() else drone_id


def synthetic_start_id(drone_id: str) -> str:
    return f"{drone_label(drone_id)}_START"


class SimConfig(_Model):
    """The scenario's ``sim`` section: how the fixed-tick simulation flies it.

    Distances in km, times in seconds, speeds in km/s (0.1 km/s = 360 km/h).
    """

    tick_hz: Annotated[float, Field(gt=0, le=1000, allow_inf_nan=False)] = 20.0
    seed: int = 0
    speed: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 0.1
    # Per drone id, overriding ``speed``.
    drone_speeds: dict[Identifier, Annotated[float, Field(gt=0, allow_inf_nan=False)]] = Field(
        default_factory=dict
    )
    # A hidden SAM is detected when a drone's distance to its edge (centre distance minus
    # range) is at most this.
    sensor_range: NonNegative = 10.0
    # A target is collected when a drone that can sense it passes within this distance.
    capture_radius: NonNegative = 0.5
    # Radius of the circle a holding drone flies.
    hold_radius: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 1.0
    # The simulation stops here at the latest (seconds); None: when every drone is done.
    max_duration: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None

    def speed_of(self, drone_id: str) -> float:
        return float(self.drone_speeds.get(drone_id, self.speed))


Scenario.model_rebuild()
