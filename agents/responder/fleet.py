"""Rules answers about the fleet's fuel and totals: fuel used (most, least, total, each),
fuel left (most, least, each: never the margin), the path still to fly, who makes it home,
budgets, drones side by side, the mission's totals, the targets visited.

Fuel used is the fuel budget minus the fuel left (km flown so far). While a mission is under
way a drone also has a remaining path, so "uses" ranks by what it will have used once that
path is flown (used so far + remaining path); when every drone is down it is what each flew.
"""

from __future__ import annotations

from agents.responder.written import Answer
from agents.words.state import DroneState, MissionState

__all__ = [
    "budgets",
    "compare",
    "fuel_left",
    "fuel_used",
    "home",
    "still_to_fly",
    "totals",
    "visited",
]


EPS_KM = 0.05  # below this a remaining path is shown as 0.0: treat it as none


def _left(d: DroneState) -> float:
    """Km of planned path still to fly (0 when unknown or below what is shown)."""
    return d.remaining_km if d.remaining_km is not None and d.remaining_km >= EPS_KM else 0.0


def _used(d: DroneState) -> float:
    """Km flown so far (the fuel budget minus the fuel left)."""
    return max(0.0, d.budget - d.fuel)


def _whole(d: DroneState) -> float:
    """Km used once the planned remaining path is flown (so far, when it is unknown)."""
    return _used(d) + _left(d)


def _use_phrase(d: DroneState, over: bool) -> str:
    used = _used(d)
    if over or not _left(d):
        tail = " (did not fly)" if used == 0 and d.status == "parked" else ""
        return f"{d.label}: {used:.1f} km used of its {d.budget:.1f} km budget{tail}"
    return (
        f"{d.label}: {used:.1f} km used so far + {_left(d):.1f} km still to fly ="
        f" {_whole(d):.1f} km of its {d.budget:.1f} km budget"
    )


def _cite_use(a: Answer, d: DroneState) -> None:
    a.name(d.label)
    a.num(f"{d.label} fuel used", _used(d), "km")
    a.num(f"{d.label} fuel budget", d.budget, "km")
    a.num(f"{d.label} fuel left", d.fuel, "km")
    if _left(d):
        a.num(f"{d.label} remaining path", _left(d), "km")
        a.num(f"{d.label} fuel used once its path is flown", _whole(d), "km")


def fuel_used(a: Answer, state: MissionState, which: str, drones: tuple[str, ...]) -> None:
    """Which drone uses the most / least fuel, the total, or each named drone's use."""
    over = state.over
    chosen = [state.drones[d] for d in drones] if drones else list(state.drones.values())
    used_total = sum(_used(d) for d in state.drones.values())
    budget_total = sum(d.budget for d in state.drones.values())
    if which in ("most", "least"):
        ranked = sorted(chosen, key=lambda d: (_whole(d), d.id), reverse=which == "most")
        top = ranked[0]
        a.lines.append(f"{top.label} uses the {which} fuel: {_use_phrase(top, over)}.")
        if ranked[1:]:
            a.lines.append("Others: " + "; ".join(_use_phrase(d, over) for d in ranked[1:]) + ".")
        for d in ranked:
            _cite_use(a, d)
    elif which == "total" or not drones:
        per = ", ".join(f"{d.label} {_used(d):.1f}" for d in state.drones.values())
        a.lines.append(
            f"Total fuel used: {used_total:.1f} km ({per}) of {budget_total:.1f} km"
            f" budgeted; {budget_total - used_total:.1f} km left."
        )
        still = sum(_left(d) for d in state.drones.values())
        if not over and still > 0:
            a.lines.append(
                f"Still to fly under the plan: {still:.1f} km, so {used_total + still:.1f} km"
                " in total once it is flown."
            )
            a.num("fuel still to fly", still, "km")
            a.num("fuel used once the plan is flown", used_total + still, "km")
        for d in state.drones.values():
            _cite_use(a, d)
    else:
        a.lines.append("; ".join(_use_phrase(d, over) for d in chosen) + ".")
        for d in chosen:
            _cite_use(a, d)
    a.num("fuel used in total", used_total, "km")
    a.num("fuel budget in total", budget_total, "km")
    a.num("fuel left in total", budget_total - used_total, "km")


def budgets(a: Answer, state: MissionState, drones: tuple[str, ...]) -> None:
    """Each drone's fuel budget, with what it used, has left and its margin."""
    chosen = [state.drones[d] for d in drones] if drones else list(state.drones.values())
    parts = []
    for d in chosen:
        margin = f", margin {d.margin_km:.1f}" if d.margin_km is not None else ""
        parts.append(
            f"{d.label} {d.budget:.1f} km (used {_used(d):.1f}, left {d.fuel:.1f}{margin})"
        )
        _cite_use(a, d)
        if d.margin_km is not None:
            a.num(f"{d.label} fuel margin", d.margin_km, "km")
    total = sum(d.budget for d in chosen)
    a.lines.append("Fuel budgets: " + "; ".join(parts) + f". Together {total:.1f} km.")
    a.num("fuel budget in total" if not drones else "fuel budget of those named", total, "km")


def _targets(state: MissionState, d: DroneState) -> list[str]:
    return state.collected_by(d.id) + [t for t in d.planned_targets if t not in state.collected]


def compare(a: Answer, state: MissionState, drones: tuple[str, ...]) -> None:
    """The drones side by side, then the differences that matter (two drones) or a ranking."""
    chosen = [state.drones[d] for d in drones]
    rows = []
    for d in chosen:
        margin = f"{d.margin_km:.1f} km" if d.margin_km is not None else "unknown"
        planned = [t for t in d.planned_targets if t not in state.collected]
        rows.append(
            f"{d.label} ({d.status}): fuel used {_used(d):.1f} of {d.budget:.1f} km, left"
            f" {d.fuel:.1f}, margin {margin}; {d.points:g} points from"
            f" {len(state.collected_by(d.id))} targets"
            f" ({', '.join(state.collected_by(d.id)) or 'none'})"
            + (f", {len(planned)} still planned ({', '.join(planned)})" if planned else "")
        )
        _cite_use(a, d)
        a.num(f"{d.label} points", d.points)
        if d.margin_km is not None:
            a.num(f"{d.label} fuel margin", d.margin_km, "km")
        a.name(*_targets(state, d))
    a.lines.append("; ".join(rows) + ".")
    if len(chosen) == 2:
        x, y = chosen
        more_fuel, less_fuel = (x, y) if _used(x) >= _used(y) else (y, x)
        diff_fuel = _used(more_fuel) - _used(less_fuel)
        more_pts, less_pts = (x, y) if x.points >= y.points else (y, x)
        diff_pts = more_pts.points - less_pts.points
        a.lines.append(
            f"{more_fuel.label} used {diff_fuel:.1f} km more fuel than {less_fuel.label};"
            f" {more_pts.label} collected {diff_pts:g} more points than {less_pts.label}."
        )
        a.num("fuel used difference", diff_fuel, "km")
        a.num("points difference", diff_pts)
        if x.margin_km is not None and y.margin_km is not None:
            big, small = (x, y) if x.margin_km >= y.margin_km else (y, x)
            assert big.margin_km is not None and small.margin_km is not None
            diff = big.margin_km - small.margin_km
            a.lines.append(f"{big.label} has {diff:.1f} km more fuel margin than {small.label}.")
            a.num("fuel margin difference", diff, "km")
    elif len(chosen) > 2:
        best = max(chosen, key=lambda d: (d.points, d.id))
        most = max(chosen, key=lambda d: (_used(d), d.id))
        a.lines.append(
            f"Most points: {best.label} ({best.points:g}); most fuel used: {most.label}"
            f" ({_used(most):.1f} km)."
        )


def totals(a: Answer, state: MissionState) -> None:
    """The mission's totals: points, fuel, targets visited and not, drones lost."""
    n = len(state.environment.targets)
    possible = sum(t.priority for t in state.environment.targets if t.id not in state.excluded)
    used = sum(_used(d) for d in state.drones.values())
    budget = sum(d.budget for d in state.drones.values())
    open_ = state.open_targets
    lost = [d.label for d in state.drones.values() if d.status == "lost"]
    a.lines.append(
        f"Totals at tick {state.tick}: {state.collected_points:g} points collected,"
        f" {state.planned_points:g} planned in total, {possible:g} reachable at most;"
        f" fuel used {used:.1f} of {budget:.1f} km; targets visited {len(state.collected)}"
        f" of {n}, not visited {len(open_)} ({', '.join(open_) or 'none'});"
        f" drones lost: {', '.join(lost) or 'none'}."
    )
    a.num("points collected", state.collected_points)
    a.num("points planned in total", state.planned_points)
    a.num("points possible", possible)
    a.num("fuel used in total", used, "km")
    a.num("fuel budget in total", budget, "km")
    a.num("targets visited", len(state.collected))
    a.num("targets not visited", len(open_))
    a.num("targets known", n)
    a.name(*open_, *lost)


def visited(a: Answer, state: MissionState, rank: str | None = None) -> None:
    """The targets collected so far, per drone in the order it collected them (``rank``:
    the drone with the most / least targets first)."""
    n = len(state.environment.targets)
    if rank is not None:
        count = {d.id: len(state.collected_by(d.id)) for d in state.drones.values()}
        best = (max if rank == "most" else min)(count.values())
        ties = [state.drones[d].label for d, c in count.items() if c == best]
        a.lines.append(
            f"{' and '.join(ties)} collected the {rank} targets: {best}"
            + (" each." if len(ties) > 1 else ".")
        )
        a.num(f"{rank} targets collected by one drone", best)
    if not state.collected:
        a.lines.append(f"No target has been collected yet (0 of {n}).")
        a.num("targets visited", 0)
        return
    parts = []
    for d in state.drones.values():
        mine = state.collected_by(d.id)
        if mine:
            pts = sum(state.priority(t) for t in mine)
            parts.append(f"{d.label}: {', '.join(mine)} ({pts:g} points)")
            a.name(d.label, *mine)
            a.num(f"{d.label} points", pts)
    a.lines.append(
        f"{len(state.collected)} of {n} targets visited, {state.collected_points:g} points: "
        + "; ".join(parts)
        + "."
    )
    a.num("targets visited", len(state.collected))
    a.num("targets known", n)
    a.num("points collected", state.collected_points)


def _lost_line(d: DroneState) -> str:
    return (
        f"{d.label} is lost ({d.lost_reason or 'unknown reason'}): it had {d.fuel:.1f} km of"
        f" fuel left when lost at ({d.x:.1f}, {d.y:.1f})"
    )


def fuel_left(a: Answer, state: MissionState, which: str, drones: tuple[str, ...]) -> None:
    """Fuel LEFT in the tanks (never the margin): the drone with the most / least among
    those still flying (a lost drone's fuel is what it had when lost, said apart), or each
    named drone's."""
    pool = [state.drones[d] for d in drones] if drones else list(state.drones.values())
    for d in pool:
        a.name(d.label)
        a.num(f"{d.label} fuel left", d.fuel, "km")
        a.num(f"{d.label} fuel budget", d.budget, "km")
    if which == "each" and drones:
        for d in pool:
            if d.status == "lost":
                a.lines.append(_lost_line(d) + f" (budget {d.budget:.1f} km).")
                continue
            margin = (
                f"; after its remaining path of {d.remaining_km:.1f} km its margin is"
                f" {d.margin_km:.1f} km"
                if d.remaining_km is not None and d.margin_km is not None
                else ""
            )
            a.lines.append(
                f"{d.label} has {d.fuel:.1f} km of fuel left of its {d.budget:.1f} km budget"
                f" ({d.status}){margin}."
            )
        return
    alive = [d for d in pool if d.status != "lost"]
    lost = [d for d in pool if d.status == "lost"]
    if not alive:
        a.lines.append(
            "No drone asked about is still flying: " + "; ".join(map(_lost_line, lost)) + "."
        )
        return
    least = which == "least"
    ranked = sorted(alive, key=lambda d: (d.fuel, d.id), reverse=not least)
    top = ranked[0]
    word = "least" if least else "most"
    a.lines.append(
        f"{top.label} has the {word} fuel left: {top.fuel:.1f} km of its {top.budget:.1f} km"
        f" budget."
    )
    if ranked[1:]:
        a.lines.append(
            "Others: "
            + "; ".join(f"{d.label}: {d.fuel:.1f} km left of {d.budget:.1f}" for d in ranked[1:])
            + "."
        )
    if lost:
        a.lines.append("Not ranked: " + "; ".join(map(_lost_line, lost)) + ".")
    a.lines.append(
        "Fuel left is what is in the tanks now; the margin is that minus the path still to fly."
    )


def still_to_fly(a: Answer, state: MissionState, drones: tuple[str, ...]) -> None:
    """The path each drone still has to fly under the plan in force, with its fuel."""
    chosen = [state.drones[d] for d in drones] if drones else list(state.drones.values())
    parts = []
    for d in chosen:
        a.name(d.label)
        if d.status == "lost":
            parts.append(f"{d.label}: none, it is lost (flew {_used(d):.1f} km before)")
            a.num(f"{d.label} fuel used", _used(d), "km")
            continue
        if d.remaining_km is None:
            parts.append(f"{d.label}: unknown while it is {d.status} (fuel {d.fuel:.1f} km)")
            a.num(f"{d.label} fuel left", d.fuel, "km")
            continue
        parts.append(
            f"{d.label}: {_left(d):.1f} km still to fly ({d.status}; flown {_used(d):.1f} km,"
            f" fuel {d.fuel:.1f} km)"
        )
        a.num(f"{d.label} remaining path", _left(d), "km")
        a.num(f"{d.label} fuel used", _used(d), "km")
        a.num(f"{d.label} fuel left", d.fuel, "km")
    a.lines.append("Still to fly: " + "; ".join(parts) + ".")


def home(a: Answer, state: MissionState, negated: bool) -> None:
    """Which drones make it home (fuel margin >= 0, or landed) and which do not (lost, or a
    negative margin); a holding drone's is unknown."""
    ok, not_ok, unknown = [], [], []
    for d in state.drones.values():
        a.name(d.label)
        if d.status == "lost":
            not_ok.append(f"{d.label} (lost, {d.lost_reason or 'unknown reason'})")
        elif d.status == "landed":
            ok.append(f"{d.label} has {d.fuel:.1f} km left (landed)")
            a.num(f"{d.label} fuel left", d.fuel, "km")
        elif d.margin_km is None:
            unknown.append(f"{d.label} has {d.fuel:.1f} km left ({d.status})")
            a.num(f"{d.label} fuel left", d.fuel, "km")
        elif d.margin_km < 0:
            not_ok.append(f"{d.label} margin {d.margin_km:.1f} km (short of fuel)")
            a.num(f"{d.label} fuel margin", d.margin_km, "km")
        else:
            ok.append(f"{d.label} margin {d.margin_km:.1f} km")
            a.num(f"{d.label} fuel margin", d.margin_km, "km")
    first, second = (not_ok, ok) if negated else (ok, not_ok)
    lead = "Not making it home" if negated else "Making it home"
    other = "Making it home" if negated else "Not making it home"
    a.lines.append(f"{lead}: {', '.join(first) or 'none'}.")
    if second:
        a.lines.append(f"{other}: {', '.join(second)}.")
    if unknown:
        a.lines.append(f"Unknown (no path to judge): {', '.join(unknown)}.")
