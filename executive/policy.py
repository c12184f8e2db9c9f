"""How the executive behaves: which changes trigger a replan, how drafts are committed,
how much fuel is kept in reserve, how long planning may take. One value, set by the CLI or
the dashboard and recorded with the run."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["TRIGGERS", "Policy"]

# sam: a newly known SAM touches a planned path or target; drone_lost: a drone is lost;
# target: a target is added, removed, moved or its priority changes; fuel: a drone's fuel
# is changed by an edit; operator: CUT, REPLAN, RESET or a reallocation in words.
TRIGGERS = ("sam", "drone_lost", "target", "fuel", "operator")


class Policy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    replan: bool = True  # False: fly the first plan blindly (--no-replan)
    triggers: tuple[Literal["sam", "drone_lost", "target", "fuel", "operator"], ...] = TRIGGERS
    commit: Literal["auto", "review"] = "auto"  # review: a draft waits for ACCEPT / REJECT
    fuel_reserve: float = Field(1.0, ge=0)  # km kept above the way to an allowed end airport
    planning_deadline_s: float = Field(0.5, gt=0)  # wall seconds a planning round may take
    # Search budget when the sim runs as fast as possible: iterations, so runs reproduce.
    batch_iterations: int = Field(3000, ge=1)
    lookahead_margin_s: float = Field(0.25, ge=0)  # slack on top of the planning latency
    telemetry_every: int = Field(5, ge=1)  # ticks between telemetry traces
    hash_every: int = Field(20, ge=1)  # ticks between state-hash traces
    safety_every: int = Field(10, ge=1)  # ticks between fuel-safety checks
    use_agents: bool = True  # run the agent chain next to the algorithmic baseline
