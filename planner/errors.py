"""The planner's exception root: every error the planner raises on purpose derives from it."""

from __future__ import annotations


class PlannerError(Exception):
    """Something the planner was asked to do cannot be done (bad input, infeasible request)."""


class InfeasibleError(PlannerError):
    """No route satisfies the hard constraints (e.g. a frozen prefix already exceeds the fuel)."""
