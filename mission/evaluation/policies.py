"""The policies a batch compares, as run configurations, the scripted operator of the
review policy, and a suite's tasks (its missions x the policies)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from executive.contracts import HumanCommand
from executive.loop.policy import Policy
from mission.config import RunConfig

if TYPE_CHECKING:
    from executive.loop import Executive
    from sim import TickResult

__all__ = [
    "ITERATIONS",
    "OLD_NAMES",
    "POLICIES",
    "REFERENCES",
    "VARIANTS",
    "EvalTask",
    "accept_after",
    "config_for",
    "reference_policy",
    "suite_tasks",
]

# The last two are references, not policies a mission could fly: the plan made with the whole
# timeline known at t = 0 as if it all held from the start (the old "oracle"; not an upper
# bound), and the clairvoyant plan, made knowing every event and its time (planner.clairvoyant).
# Variants measure what one choice of a policy costs or buys, run when named: auto with the
# fuel reserve kept before the robust one (a 1 km constant, no leak share: what the whole
# reserve policy, executive.loop.policy.Policy.reserve_km and leak_share, costs and buys);
# auto hedging with one spare drone parked until value arrives (Policy.spare_drones); auto
# with the way-home check (Policy.home_check, planner.way_home) on the corridors one more
# SAM closes, the robust budget kept (auto-home-check), and with the full check (open
# ground too) and the reserve's SAM part (Policy.detour_factor) left to it alone
# (auto-lean-reserve): what the check costs, and whether it can stand in for the budget.
VARIANTS = ("auto-fixed-reserve", "auto-spare", "auto-home-check", "auto-lean-reserve")
POLICIES = (
    "auto",
    "review-accept-30s",
    "no-replan",
    "full-knowledge-t0",
    "clairvoyant",
    *VARIANTS,
)
REFERENCES = ("full-knowledge-t0", "clairvoyant")
OLD_NAMES = {"oracle": "full-knowledge-t0"}  # how runs stored before the rename are labelled
_HOME_CHECK: dict[str, Literal["corridors", "full"]] = {
    "auto-home-check": "corridors",
    "auto-lean-reserve": "full",
}
ITERATIONS = 1500  # the planner's budget per round: as fast as possible, reproducible


@dataclass(frozen=True)
class EvalTask:
    """One run of a batch: a mission file under a policy."""

    suite: str
    mission: str  # the file's name in the suite
    path: str  # where the file is (readable by the worker)
    policy: str
    disruption: str | None = None
    trace_url: str | None = None
    seed: int = 0
    agents: bool = True
    engine: str = "rules"  # the agents' engine

    @property
    def key(self) -> str:
        """What identifies the run in its suite (resume skips the keys already stored)."""
        return f"{self.suite}/{self.mission}/{self.policy}"


def reference_policy() -> Policy:
    """How a clairvoyant plan is flown: as planned, on the
    whole fuel (it was planned knowing what comes, with no reserve for surprises), the
    safety layer still keeping it out of every known SAM and turning a drone home whose fuel
    no longer covers its way."""
    return Policy(
        batch_iterations=ITERATIONS, replan=False, reserve="fixed", fuel_reserve=0.0, leak_share=0.0
    )


def config_for(task: EvalTask) -> RunConfig:
    """The run configuration of ``task``'s policy, labelled with the task."""
    if task.policy not in POLICIES:
        raise ValueError(f"unknown policy {task.policy!r}; choose from {', '.join(POLICIES)}")
    fixed = task.policy == "auto-fixed-reserve"
    # the clairvoyant knows every event and its time: its plan flies as planned; the
    # full-knowledge-at-t0 plan does not know when things happen, and flies as policies do
    policy = (
        reference_policy()
        if task.policy == "clairvoyant"
        else Policy(
            batch_iterations=ITERATIONS,
            replan=task.policy not in ("no-replan", *REFERENCES),
            commit="review" if task.policy.startswith("review") else "auto",
            reserve="fixed" if fixed else "robust",
            leak_share=0.0 if fixed else Policy().leak_share,
            detour_factor=0.0 if task.policy == "auto-lean-reserve" else Policy().detour_factor,
            home_check=_HOME_CHECK.get(task.policy, "off"),
            spare_drones=1 if task.policy == "auto-spare" else 0,
        )
    )
    labels = {"suite": task.suite, "mission": task.mission, "policy": task.policy}
    if task.disruption:
        labels["disruption"] = task.disruption
    return RunConfig(
        scenario_file=task.path,
        labels=labels,
        batch_key=task.key,
        policy=policy,
        oracle=task.policy == "full-knowledge-t0",
        clairvoyant=task.policy == "clairvoyant",
        seed=task.seed,
        agents=task.agents and task.policy not in ("no-replan", *REFERENCES),
        engine=task.engine,  # checked by RunConfig
        trace_url=task.trace_url,
        lessons=(),  # each run on its own: no run's prompts depend on the batch's order
    )


def accept_after(executive: Executive, seconds: float) -> Callable[[TickResult], None]:
    """An operator who ACCEPTs each draft ``seconds`` of mission time after it is offered:
    its tick hook, attached, and returned so that a caller may chain a hook of its own."""
    hz = executive.scenario.sim.tick_hz
    due: list[int] = []
    seen = [0]

    def watch(result: TickResult) -> None:
        events = list(executive.events_seen)
        new = events[seen[0] - len(events) :] if seen[0] else events
        for event in new:
            if event.get("kind") == "REVIEW":
                due.append(event["tick"] + int(seconds * hz))
        seen[0] = len(events)
        while due and result.tick + 1 >= due[0]:
            due.pop(0)
            executive.command(HumanCommand("ACCEPT", source="evaluation"))

    executive.watch(on_tick=watch)
    return watch


def suite_tasks(
    folder: Path,
    policies: list[str],
    url: str,
    *,
    limit: int | None = None,
    agents: bool = True,
    engine: str = "rules",
) -> tuple[str, list[EvalTask]]:
    """The suite's name and its tasks, every mission (the first ``limit``) x every policy,
    traced to ``url``. Raises ``ValueError`` naming ``suite.json`` when it is not a suite
    written by ``isr scenario generate``."""
    manifest_path = folder / "suite.json"
    try:
        manifest = json.loads(manifest_path.read_text())
        name = str(manifest["spec"]["name"])
        missions = manifest["missions"][:limit] if limit else manifest["missions"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(
            f"{manifest_path}: not a suite written by isr scenario generate ({exc})"
        ) from None
    tasks = [
        EvalTask(
            suite=name,
            mission=m["file"],
            path=str((folder / m["file"]).resolve()),
            policy=policy,
            disruption=m.get("disruption"),
            trace_url=url,
            agents=agents,
            engine=engine,
        )
        for m in missions
        for policy in policies
    ]
    return name, tasks
