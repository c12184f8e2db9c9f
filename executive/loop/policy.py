"""How the executive behaves: which changes trigger a replan, how drafts are committed,
how much fuel is kept in reserve, how long planning may take. One value, set by the CLI or
the dashboard and recorded with the run."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from planner.edits import TRIGGERS, Trigger
from planner.way_home import HomeCheck

__all__ = ["TRIGGERS", "Policy", "Trigger", "leak_plan_extra", "leak_turn_extra"]


class Policy(BaseModel):
    """The executive's rules for one run (frozen; unknown fields are refused)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    replan: bool = True  # False: fly the first plan blindly (--no-replan)
    triggers: tuple[Trigger, ...] = TRIGGERS  # the changes that start a replan (planner.edits)
    commit: Literal["auto", "review"] = "auto"  # review: a draft waits for ACCEPT / REJECT
    fuel_reserve: float = Field(1.0, ge=0)  # km kept above the way to an allowed end airport
    # "robust": on top of fuel_reserve, the way round one more SAM as large as the largest
    # known (detour_factor x its range) if it closed the way home; "fixed": fuel_reserve only
    reserve: Literal["fixed", "robust"] = "robust"
    detour_factor: float = Field(0.6, ge=0)
    # "robust" only: every plan is checked at commit for each drone's way home with one more
    # SAM of the largest known range on it (planner.way_home), its routes ended sooner where
    # that fails, fuel_reserve kept on top: "corridors" places it where it merges with a
    # known SAM (the budget prices the open ground), "full" next to the way's ends too
    home_check: Literal["off", "corridors", "full"] = "off"
    # A drone whose fuel an edit cut (a leak) plans and turns home from then on so that a
    # further leak of up to this share of the fuel it has left at that time still leaves its
    # way home with the reserve (leak_plan_extra, leak_turn_extra)
    leak_share: float = Field(0.25, ge=0, lt=1)
    # Hedging for value that arrives late: this many drones (those the first plan gives the
    # fewest points) stay parked until a change of a spare_release kind launches them
    spare_drones: int = Field(0, ge=0)
    spare_release: tuple[Trigger, ...] = ("drone_lost", "target", "fuel")
    planning_deadline_s: float = Field(0.5, gt=0)  # wall seconds a planning round may take
    # Search budget when the sim runs as fast as possible: iterations, so runs reproduce.
    batch_iterations: int = Field(3000, ge=1)
    lookahead_margin_s: float = Field(0.25, ge=0)  # slack on top of the planning latency
    telemetry_every: int = Field(5, ge=1)  # ticks between telemetry traces
    hash_every: int = Field(20, ge=1)  # ticks between state-hash traces
    # Scene snapshots for seeking a replay: every snapshot_every ticks, and after anything
    # happened, at most every snapshot_gap ticks (0: none).
    snapshot_every: int = Field(600, ge=0)
    snapshot_gap: int = Field(20, ge=1)
    safety_every: int = Field(10, ge=1)  # ticks between safety checks (known SAMs, fuel)
    # Review: a draft waits as long as the operator needs, unless a timeout (mission
    # seconds) is set; then "keep" drops it (the plan in force flies on) and "commit"
    # commits it, rebased onto the state then, as if approved.
    review_timeout_s: float | None = Field(None, gt=0)
    review_timeout_action: Literal["keep", "commit"] = "keep"
    review_preview_s: float = Field(1.0, gt=0)  # wall seconds between rebased previews

    @model_validator(mode="after")
    def _home_check_needs_the_robust_reserve(self) -> Policy:
        # asked for with the fixed reserve, the check would be silently off
        if self.home_check != "off" and self.reserve != "robust":
            raise ValueError(
                f"home_check={self.home_check!r} needs reserve='robust' (reserve is 'fixed')"
            )
        return self

    @property
    def home_rule(self) -> HomeCheck | None:
        """The way-home check every plan passes (None: none)."""
        if self.home_check == "off":
            return None
        return HomeCheck(self.fuel_reserve, ends=self.home_check == "full")

    def reserve_km(self, sam_ranges: Iterable[float]) -> float:
        """Km every plan keeps above its way home, and below which a drone turns home, with
        the known SAMs' ranges (km). Under "robust", what a SAM of the largest known size
        popping up on the way home costs: round a disk of radius r across a straight way,
        seen at the 10 km sensor range, the way is about 0.3-0.7 r longer (0.9 r at worst,
        with both ends at its edge); ``detour_factor`` 0.6 held the suites' pop-ups and
        closed corridors with no fuel-out (harder and adversarial suites: 1.2 cost 2.7 % more
        points and held nothing more)."""
        if self.reserve == "fixed":
            return self.fuel_reserve
        return self.fuel_reserve + self.detour_factor * max(sam_ranges, default=0.0)


def leak_plan_extra(share: float, fuel: float, home: float, reserve: float) -> float:
    """Km a leaked drone's plan keeps on top of ``reserve`` from a start with ``fuel`` km
    left, ``home`` km from its nearest airport, so that at every point p of any route within
    the rest (ending at an airport) a further leak of ``share`` of the fuel left then still
    leaves the way home: (1 - s) F(p) >= h(p) + r, with d flown to p. Two bounds hold for
    every route, and the smaller is kept:

    * h(p) <= L - d (the route ends at an airport): L <= (1 - s) F - r, i.e. s F;
    * h(p) <= min(h0 + d, L - d), the worst point at d = (L - h0) / 2: L <= (2((1 - s) F - r)
      - s h0) / (2 - s), i.e. s (F + r + h0) / (2 - s): the smaller near home.

    A flat share of the fuel at the leak, kept whatever the drone flew since, was the first
    bound frozen at its largest."""
    return share * min(fuel, (fuel + reserve + home) / (2.0 - share))


def leak_turn_extra(share: float, home: float, reserve: float) -> float:
    """Km a leaked drone keeps on top of ``reserve`` above a way home of ``home`` km before
    it turns home, wherever it flies: with (1 - s) F >= h + r a further leak of ``share`` of
    its fuel F still leaves the way home: F - h - r >= s (h + r) / (1 - s)."""
    return share * (home + reserve) / (1.0 - share)
