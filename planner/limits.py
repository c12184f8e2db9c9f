"""The bounds of everything a scenario or an edit may say, in one place.

Every number a scenario file, a timeline edit or an operator's edit carries is bounded here,
and so is every size (airports, targets, SAMs, drones, the timeline, ids), so that the
largest mission these limits accept plans and flies in bounded time and memory
(``bench/limits.py`` measures it; docs/planning.md states the figure). A value
out of bounds is one problem naming its JSON path and the bound, e.g.
``$.environment.targets[3].x: must be from -10000 to 10000 km, got 1e+308``.

The **field types** (``Coordinate``, ``SamRange``, ``Priority``, ``Fuel``, ``DroneSpeed``...)
live here: pydantic types in strict mode (no ``"25"`` -> 25, no ``true`` -> 1; an int is a
valid float) with the bound as a validator. ``planner.model`` and ``planner.edits`` build
every field from them, so the bounds hold at every door: files, the dashboard, the bus. The
checks of a whole scenario against these bounds (its sizes, on the parsed JSON; the
relations between its fields: one tick's step, the longest flight, every stamp within
``MAX_MISSION_TICKS``; its budgets) are ``planner.scenario.limits``'. This module imports
nothing of the planner: the model is built on it.

The sizes are not small fixed counts: they come from budgets. The distance table every plan
needs holds a float64 per pair of nodes (airports, synthetic starts, targets), so
``TABLE_BUDGET_BYTES`` bounds the nodes at once (``MAX_NODES``); the team search keeps a few
numbers per drone and node (``SEARCH_BUDGET_BYTES``); compiling the table costs about
``COMPILE_S_PER_PAIR`` per pair of nodes, ``COMPILE_S_PER_ROW_NODE`` per node and node of the
SAMs' tangent graph and ``COMPILE_S_PER_TANGENT`` per node and SAM tangent, which must stay
within ``COMPILE_BUDGET_S`` (``compile_problem``; ``compile_estimate`` is the model, measured
on one core of the reference machine by ``bench/gil_hold.py``; a scenario's budgets are
``planner.scenario.limits.budget_problems``, and ``planner.mission.compile_mission`` checks the
time budget again itself). The per-list caps (``MAX_TARGETS``, ``MAX_DRONES``...) only stop a
file from building a million objects before the budgets are checked.

Why the step bound: the simulation moves a drone ``speed / tick_hz`` km along its path per
tick and checks the straight chord from where it was to where it is against every SAM
(``sim._kernels``). Every point flown in a tick lies within half a step of that chord (the
points whose distances to the chord's two ends sum to at most one step form an ellipse of
semi-minor axis below half a step). With a step of at most ``MAX_TICK_STEP_KM`` =
``MIN_SAM_RANGE_KM``, a path through the inner half of any SAM disk always puts the chord
inside the disk: no tick jumps over a SAM (a graze shallower than half a step, at most
0.05 km -- the planner's own margin, ``MARGIN_ABS`` -- can pass). And with
``MIN_SENSOR_RANGE_KM`` >= the step, a drone heading into a disk ends at least one tick
inside the sensor band around it (the band is wider than a step), so a hidden SAM is always
detected a tick before the drone could enter it: no tick jumps past the sensor range.
``MIN_HOLD_RADIUS_KM`` keeps a holding circle longer than a step, so one tick never winds
round it more than once.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable
from typing import Annotated, Any, Final

from pydantic import AfterValidator, Field, Strict
from pydantic_core import PydanticCustomError

__all__ = [
    "COMPILE_BUDGET_S",
    "COMPILE_S_PER_PAIR",
    "COMPILE_S_PER_ROW_NODE",
    "COMPILE_S_PER_TANGENT",
    "ID_CHARACTERS",
    "MAX_AIRPORTS",
    "MAX_CAPTURE_RADIUS_KM",
    "MAX_COORD_KM",
    "MAX_DRONES",
    "MAX_DRONE_SPEED",
    "MAX_FROZEN_SEGMENTS",
    "MAX_FUEL_KM",
    "MAX_HOLD_RADIUS_KM",
    "MAX_ID_LENGTH",
    "MAX_JSON_DEPTH",
    "MAX_LABEL_LENGTH",
    "MAX_MISSION_TICKS",
    "MAX_NODES",
    "MAX_PRIORITY",
    "MAX_SAMS",
    "MAX_SAM_RANGE_KM",
    "MAX_SCENARIO_BYTES",
    "MAX_SEED",
    "MAX_SENSOR_RANGE_KM",
    "MAX_SENSOR_TYPES",
    "MAX_START_COORD_KM",
    "MAX_SYNTHETIC_STARTS",
    "MAX_TARGETS",
    "MAX_TICK_HZ",
    "MAX_TICK_STEP_KM",
    "MAX_TIMELINE",
    "MAX_TIME_S",
    "MIN_DRONE_SPEED",
    "MIN_HOLD_RADIUS_KM",
    "MIN_SAM_RANGE_KM",
    "MIN_SENSOR_RANGE_KM",
    "MIN_TICK_HZ",
    "SEARCH_BUDGET_BYTES",
    "SEARCH_BYTES_PER_DRONE_NODE",
    "SWARM_DRONES",
    "SWARM_SAMS",
    "SWARM_TARGETS",
    "TABLE_BUDGET_BYTES",
    "CaptureRadius",
    "Coordinate",
    "DroneSpeed",
    "Duration",
    "Flag",
    "Fuel",
    "HoldRadius",
    "Identifier",
    "Label",
    "Priority",
    "SamRange",
    "Seconds",
    "Seed",
    "SensorRange",
    "SensorType",
    "StartCoordinate",
    "Tick",
    "TickHz",
    "compile_estimate",
    "compile_problem",
    "json_schema_keywords",
]

# ----- sizes -----------------------------------------------------------------------------

# ----- budgets: what one mission may cost --------------------------------------------------

TABLE_BUDGET_BYTES: Final = 1024**3  # the SAM-aware distance table: a float64 per node pair
MAX_NODES: Final = math.isqrt(TABLE_BUDGET_BYTES // 8)  # 11,585 airports + starts + targets
SEARCH_BUDGET_BYTES: Final = 1024**3  # the team search's arrays per drone and node
SEARCH_BYTES_PER_DRONE_NODE: Final = 48  # what planner.team_search keeps per drone and node
COMPILE_BUDGET_S: Final = 60.0  # the distance table's estimated compile time, one core
# The compile's cost model (seconds on one core; bench/gil_hold.py measures the real thing).
COMPILE_S_PER_PAIR: Final = 0.4e-6  # a pair of nodes: the straight segment, then the graph
COMPILE_S_PER_ROW_NODE: Final = 0.4e-6  # a node's Dijkstra over one tangent-graph node
COMPILE_S_PER_TANGENT: Final = 0.6e-6  # a node's tangent to one SAM, tested clear

# The swarm these budgets are sized for: all three at once fit every budget (with a start per
# drone for a replan), and the door, `isr scenario new` and `isr scenario generate` take them.
SWARM_DRONES: Final = 1_000
SWARM_TARGETS: Final = 5_000
SWARM_SAMS: Final = 500

MAX_SCENARIO_BYTES: Final = 16 * 1024 * 1024  # 5,000 targets and 1,000 drones are ~1 MB
MAX_JSON_DEPTH: Final = 16  # a scenario nests 5 deep ($.timeline[0].pos[1]); 16 leaves room
MAX_AIRPORTS: Final = 1_000
MAX_TARGETS: Final = MAX_NODES  # at once, the timeline's additions included
MAX_SAMS: Final = 1_000  # at once, the timeline's additions included
MAX_DRONES: Final = 10_000  # the simulation's measured scale (bench/sim_tick.py)
MAX_SYNTHETIC_STARTS: Final = MAX_DRONES  # one per drone at most
MAX_TIMELINE: Final = 1000  # edits
MAX_SENSOR_TYPES: Final = 32  # entries of one drone's accessibleTargets
MAX_FROZEN_SEGMENTS: Final = MAX_TARGETS + MAX_AIRPORTS  # one drone's frozen chain
MAX_ID_LENGTH: Final = 64
MAX_LABEL_LENGTH: Final = 200
ID_CHARACTERS: Final = "letters A-Z a-z, digits, '_', '-', '.' and ':'"
_ID = re.compile(r"[A-Za-z0-9_.:-]+")

# ----- numbers ---------------------------------------------------------------------------

MAX_COORD_KM: Final = 10_000.0  # airports, targets, SAM centres: |x|, |y| (km)
# Where a replan takes over a drone: a drone flies round a SAM or holds near the edge of the
# box, so its position may leave it by a SAM's range and a holding circle; twice the box holds.
MAX_START_COORD_KM: Final = 2 * MAX_COORD_KM
MIN_SAM_RANGE_KM: Final = 0.1
MAX_SAM_RANGE_KM: Final = 1_000.0
MAX_PRIORITY: Final = 1_000.0  # points of one target; MAX_TARGETS of them sum to 1.2e7
MAX_FUEL_KM: Final = 10_000.0
MIN_TICK_HZ: Final = 1.0
MAX_TICK_HZ: Final = 1_000.0
MIN_DRONE_SPEED: Final = 0.001  # km/s (3.6 km/h)
MAX_DRONE_SPEED: Final = 1.0  # km/s (3,600 km/h); with the step bound it needs >= 10 Hz
MAX_TICK_STEP_KM: Final = MIN_SAM_RANGE_KM  # speed / tick_hz; why: the module's docstring
MIN_SENSOR_RANGE_KM: Final = MAX_TICK_STEP_KM
MAX_SENSOR_RANGE_KM: Final = 1_000.0
MAX_CAPTURE_RADIUS_KM: Final = 10.0
MIN_HOLD_RADIUS_KM: Final = 0.1  # its circle, 0.63 km, is longer than one step
MAX_HOLD_RADIUS_KM: Final = 100.0
# The longest mission: ~28 hours at 20 Hz. A drone's fuel / speed * tick_hz (it burns fuel
# as it flies or holds, so that is how long it can stay up), every timeline stamp and
# max_duration stay within it, so `isr sim` always ends.
MAX_MISSION_TICKS: Final = 2_000_000
MAX_TIME_S: Final = MAX_MISSION_TICKS / MIN_TICK_HZ  # a stamp or duration in seconds
MAX_SEED: Final = 2**32 - 1


def _number(value: float) -> str:
    return f"{value:,.10g}".replace(",", "")


def _bounded(lo: float, hi: float, unit: str) -> AfterValidator:
    """A validator refusing values outside [lo, hi], naming the bound and its unit."""
    text = f"must be from {_number(lo)} to {_number(hi)}{' ' + unit if unit else ''}"

    def check(value: Any) -> Any:
        if not lo <= value <= hi:
            raise PydanticCustomError("out_of_bounds", text)
        return value

    return AfterValidator(check)


def _identifier(value: str) -> str:
    if not _ID.fullmatch(value):
        raise PydanticCustomError(
            "bad_identifier", f"an id is 1 to {MAX_ID_LENGTH} of {ID_CHARACTERS}"
        )
    return value


def json_schema_keywords(check: Callable[..., Any]) -> dict[str, Any]:
    """What a validator of this module checks, as JSON Schema keywords (none for others):
    the id pattern, or a bound's minimum and maximum (``planner.scenario.schema``)."""
    if check is _identifier:
        return {"pattern": f"^{_ID.pattern}$"}
    if check.__qualname__ == f"{_bounded.__name__}.<locals>.check":
        bound = inspect.getclosurevars(check).nonlocals
        return {"minimum": bound["lo"], "maximum": bound["hi"]}
    return {}


def _printable(value: str) -> str:
    if not value.isprintable():
        raise PydanticCustomError(
            "not_printable", "must hold printable characters only (no control characters)"
        )
    return value


# Strict: a JSON number (an int is a valid float), never a string or a bool. A sign
# constraint (gt=0 / ge=0) comes before the bound, so its message stays pydantic's own.
_FINITE = Field(allow_inf_nan=False)
_POSITIVE = Field(gt=0, allow_inf_nan=False)
_NON_NEGATIVE = Field(ge=0, allow_inf_nan=False)

Coordinate = Annotated[float, Strict(), _FINITE, _bounded(-MAX_COORD_KM, MAX_COORD_KM, "km")]
StartCoordinate = Annotated[
    float, Strict(), _FINITE, _bounded(-MAX_START_COORD_KM, MAX_START_COORD_KM, "km")
]
SamRange = Annotated[float, Strict(), _POSITIVE, _bounded(MIN_SAM_RANGE_KM, MAX_SAM_RANGE_KM, "km")]
Priority = Annotated[float, Strict(), _NON_NEGATIVE, _bounded(0.0, MAX_PRIORITY, "")]
Fuel = Annotated[float, Strict(), _NON_NEGATIVE, _bounded(0.0, MAX_FUEL_KM, "km")]
TickHz = Annotated[float, Strict(), _POSITIVE, _bounded(MIN_TICK_HZ, MAX_TICK_HZ, "Hz")]
DroneSpeed = Annotated[
    float, Strict(), _POSITIVE, _bounded(MIN_DRONE_SPEED, MAX_DRONE_SPEED, "km/s")
]
SensorRange = Annotated[
    float, Strict(), _NON_NEGATIVE, _bounded(MIN_SENSOR_RANGE_KM, MAX_SENSOR_RANGE_KM, "km")
]
CaptureRadius = Annotated[
    float, Strict(), _NON_NEGATIVE, _bounded(0.0, MAX_CAPTURE_RADIUS_KM, "km")
]
HoldRadius = Annotated[
    float, Strict(), _POSITIVE, _bounded(MIN_HOLD_RADIUS_KM, MAX_HOLD_RADIUS_KM, "km")
]
Seconds = Annotated[float, Strict(), _NON_NEGATIVE, _bounded(0.0, MAX_TIME_S, "s")]
Duration = Annotated[float, Strict(), _POSITIVE, _bounded(0.0, MAX_TIME_S, "s")]
Tick = Annotated[int, Strict(), Field(ge=0), _bounded(0, MAX_MISSION_TICKS, "ticks")]
Seed = Annotated[int, Strict(), Field(ge=0), _bounded(0, MAX_SEED, "")]
Flag = Annotated[bool, Strict()]
Identifier = Annotated[
    str, Strict(), Field(min_length=1, max_length=MAX_ID_LENGTH), AfterValidator(_identifier)
]
# A sensor type names a kind of target ("A", "EO/IR"): printable text, not an id.
SensorType = Annotated[
    str, Strict(), Field(min_length=1, max_length=MAX_ID_LENGTH), AfterValidator(_printable)
]
Label = Annotated[str, Strict(), Field(max_length=MAX_LABEL_LENGTH), AfterValidator(_printable)]


# ----- the compile's budget ---------------------------------------------------------------


def compile_estimate(nodes: int, sams: int, graph_nodes: int) -> float:
    """Estimated seconds (one core) to compile the distance table of ``nodes`` points among
    ``sams`` SAMs whose tangent graph has ``graph_nodes`` nodes."""
    return (
        COMPILE_S_PER_PAIR * nodes * (nodes - 1) / 2
        + COMPILE_S_PER_ROW_NODE * nodes * graph_nodes
        + COMPILE_S_PER_TANGENT * nodes * 2 * sams
    )


def compile_problem(nodes: int, sams: int, graph_nodes: int) -> str | None:
    """Why a table of ``nodes`` points among ``sams`` SAMs (tangent graph of ``graph_nodes``
    nodes) is over budget, or None when it fits: the table's bytes, then the time."""
    table = 8 * nodes * nodes
    if table > TABLE_BUDGET_BYTES:
        return (
            f"{nodes:,} nodes (airports, starts and targets at once) need a distance table of"
            f" {table / 1024**2:,.0f} MiB, over the memory budget of"
            f" {TABLE_BUDGET_BYTES / 1024**2:,.0f} MiB (planner.limits.TABLE_BUDGET_BYTES):"
            f" at most {MAX_NODES:,} nodes"
        )
    seconds = compile_estimate(nodes, sams, graph_nodes)
    if seconds > COMPILE_BUDGET_S:
        return (
            f"{nodes:,} nodes among {sams:,} SAMs (a tangent graph of {graph_nodes:,} nodes)"
            f" would take about {seconds:,.0f} s to compile, over the time budget of"
            f" {COMPILE_BUDGET_S:g} s (planner.limits.COMPILE_BUDGET_S): fewer targets, or"
            " fewer or more clustered SAMs"
        )
    return None
