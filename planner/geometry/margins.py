"""Safety margins and geometric tolerances: how far a plan keeps from a SAM, and when two
numbers count as touching.

The planner avoids a buffered disk, ``planning_radius(r)``, so that a drone flying its plan
stays at least ``max(MARGIN_ABS, MARGIN_REL * r)`` outside the true disk the simulation uses.
"""

from __future__ import annotations

import math

__all__ = [
    "DEFAULT_SAGITTA",
    "MARGIN_ABS",
    "MARGIN_REL",
    "TOL",
    "TRUE_TOL",
    "TWO_PI",
    "planning_radius",
]

MARGIN_ABS = 0.05  # km: minimum clearance between a planned path and a true SAM disk
MARGIN_REL = 0.01  # fraction of the true radius, for large SAMs

# Geometric tolerance (km). It decides when a segment "touches" a buffered circle rather than
# entering it, and when a node lies on a circle. It is ~1e5 times smaller than MARGIN_ABS,
# so nothing it lets through can reach a true disk.
TOL = 1e-7
# Tolerance against TRUE disks (inside_true, escape segments): a point computed to lie on a
# true circle is not "inside" it.
TRUE_TOL = 1e-9
TWO_PI = 2.0 * math.pi
DEFAULT_SAGITTA = 0.5 * MARGIN_ABS  # every margin is >= MARGIN_ABS


def planning_radius(true_radius: float) -> float:
    """The buffered radius the planner avoids, for a SAM of ``true_radius`` km."""
    return float(true_radius) + max(MARGIN_ABS, MARGIN_REL * float(true_radius))
