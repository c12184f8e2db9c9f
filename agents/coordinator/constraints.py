"""Building constraints from a command clause: moves, forbidden targets, required targets.

Commands understood: "move T5 to D1", "transfer T3 from D1 to D2", "assign T3 and T7 to
drone 2", "D1 must visit T5" (moves); "D2 must not visit T4", "forbid T4 for D2", "don't let
D2 visit T4", "keep D2 away from T4" (forbidden; with no drone named, for every drone);
"keep D2 out of the north-east" (a region: the open targets inside it are forbidden for that
drone, and the region is listed); "T9 is required", "make sure T9 is visited", "don't skip
T9" (required). A target already collected draws a warning when named.
"""

from __future__ import annotations

from collections.abc import Mapping, Set

from agents.coordinator.decision import Decision
from agents.coordinator.ids import Ids, tokens
from agents.coordinator.intent import clause_kind
from agents.coordinator.orders import parse_priority, parse_reserve, parse_swap
from agents.coordinator.regions import Box, Point, region_targets, regions_in
from planner.model import drone_label

__all__ = ["parse_command"]


def parse_command(
    clause: str,
    ids: Ids,
    d: Decision,
    positions: Mapping[str, Point | None],
    box: Box,
    collected: Set[str],
    priorities: Mapping[str, float] | None = None,
) -> bool:
    """Adds what ``clause`` orders to ``d``; False when it orders nothing."""
    kind, hit = clause_kind(clause)
    if kind is None:
        return False
    if kind == "reserve":
        return parse_reserve(clause, ids, d)
    if kind == "priority":
        if not priorities:
            ids.errors.append("a priority threshold needs the targets' priorities")
            return True
        return parse_priority(clause, ids, d, priorities, collected)
    if kind == "swap":
        return parse_swap(clause, ids, d)
    d.rules_hit.append(f"{kind}:{hit}")
    drones = [x for x in (ids.drone(t) for t in tokens(clause, "#")) if x is not None]
    targets = [x for x in (ids.target(t) for t in tokens(clause, "@")) if x is not None]
    for t in targets:
        if t in collected:
            d.warnings.append(f"{t} is already collected")
    if kind == "require":
        for t in targets:
            d.require(t)
        return True
    if kind == "forbid":
        written = tokens(clause, "#")
        named = drones if written else ids.drones  # an unknown drone forbids nothing
        if not written:
            d.warnings.append(
                "no drone named: " + ", ".join(targets) + " forbidden for every drone"
            )
        regions = regions_in(clause) if written else []
        for drone in named:
            d.forbid(drone, targets)
        if not written:
            for t in targets:
                d.unrequire(t, f"forbid {t} for every drone")
        for drone in named:
            for region in regions:
                inside = [t for t in region_targets(region, positions, box) if t not in collected]
                if not any(p is not None for p in positions.values()):
                    ids.errors.append(f"region {region}: target positions are not known")
                    continue
                d.forbid(drone, inside)
                d.regions.append(
                    {
                        "drone": drone,
                        "region": region,
                        "box": [round(v, 3) for v in box],
                        "targets": inside,
                    }
                )
                if not inside:
                    d.warnings.append(
                        f"no open target lies in the {region}; nothing to forbid"
                        f" for {drone_label(drone)}"
                    )
        return True
    # move: targets before "to #d" go to d; "from #d" names the drone they leave
    pending: list[str] = []
    paired = False
    words = clause.split()
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("@"):
            found = ids.targets.get(w[1:].lower())
            if found is not None:
                pending.append(found)
        elif w.lower() == "from" and i + 1 < len(words) and words[i + 1].startswith("#"):
            source = ids.drone(words[i + 1][1:])
            if source is not None:
                for t in pending:
                    d.sources[t] = source
            i += 1
        elif w.lower() == "to" and i + 1 < len(words) and words[i + 1].startswith("#"):
            to_drone = ids.drone(words[i + 1][1:])
            if to_drone and pending:
                for t in pending:
                    d.move(t, to_drone)
                paired = True
            pending = []
            i += 1
        i += 1
    if pending:
        if len(drones) == 1 and not paired:
            for t in pending:
                d.move(t, drones[0])
        elif drones:
            ids.errors.append(f"which drone should take {', '.join(pending)}? name it after 'to'")
    return True
