"""Team orienteering benchmark (Chao, Golden & Wasil sets) for the ISR planner and its peers.

    python bench/top.py --instances 'p[45].*.txt' --seconds 5 --solver isr --jobs 2 \
        --json bench/results/top_isr.json

The instances and their best-known totals live in the repository, ``tests/data/top/`` (the
defaults of ``--dir`` and ``--best-known``; see its README).

Solvers: ``isr`` (planner.team_search), ``ortools`` (routing model, optional nodes as
disjunctions, guided local search) and ``pyvrp`` (prize-collecting). The peers come from the
optional extra ``peers`` (``pip install -e '.[peers]'``). One thread per instance for every
solver; ``--jobs J`` runs J instances in parallel processes.

Every returned solution is verified here from the coordinates (route lengths recomputed in
float64, each node at most once, indices in range, no start/end node inside a route); an
infeasible one is reported loudly and counts as a failure (score 0, gap 100 %).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse
import concurrent.futures as cf
import glob
import json
import math
import multiprocessing as mp
import platform
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DATA = ROOT / "tests" / "data" / "top"  # Chao, Golden & Wasil sets 4 and 5

LENGTH_TOL = 1e-9
SCALE = 100_000  # peers work on integer distances: ceil(d * SCALE), capacity floor(tmax*SCALE)


# --------------------------------------------------------------------------- instances
@dataclass
class Instance:
    name: str
    n: int
    m: int
    tmax: float
    xy: np.ndarray  # (n, 2)
    score: np.ndarray  # (n,)

    @property
    def dist(self) -> np.ndarray:
        d = self.xy[:, None, :] - self.xy[None, :, :]
        return np.sqrt((d * d).sum(-1))


def read_instance(path: str | Path) -> Instance:
    path = Path(path)
    head: dict[str, str] = {}
    rows: list[list[float]] = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            if len(head) < 3 and parts[0] in ("n", "m", "tmax"):
                head[parts[0]] = parts[1]
                continue
            rows.append([float(v) for v in parts[:3]])
    n, m, tmax = int(head["n"]), int(head["m"]), float(head["tmax"])
    a = np.array(rows, dtype=np.float64)
    if a.shape != (n, 3):
        raise ValueError(f"{path}: expected {n} nodes, read {a.shape[0]}")
    return Instance(path.name, n, m, tmax, a[:, :2].copy(), a[:, 2].copy())


def read_best_known(path: str | Path) -> dict[str, float]:
    out: dict[str, float] = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2:
                out[parts[0]] = float(parts[1])
    return out


def path_length(inst: Instance, route: list[int]) -> float:
    """Length of start -> route -> end, from the coordinates, summed left to right."""
    nodes = [0, *route, inst.n - 1]
    s = 0.0
    for a, b in zip(nodes[:-1], nodes[1:]):
        s += math.hypot(inst.xy[a, 0] - inst.xy[b, 0], inst.xy[a, 1] - inst.xy[b, 1])
    return s


def verify(inst: Instance, routes: list[list[int]]) -> tuple[float, list[float], list[str]]:
    """(score, lengths, errors) of a solution given as per-vehicle lists of visited nodes."""
    errs: list[str] = []
    if len(routes) > inst.m:
        errs.append(f"{len(routes)} routes for {inst.m} vehicles")
    seen: set[int] = set()
    score = 0.0
    lengths = []
    for k, r in enumerate(routes):
        for u in r:
            if not (0 < u < inst.n - 1):
                errs.append(f"route {k}: node {u} is not a customer")
            elif u in seen:
                errs.append(f"route {k}: node {u} visited twice")
            else:
                seen.add(u)
                score += float(inst.score[u])
        if not r:  # an unused vehicle (TOP: it need not fly at all)
            lengths.append(0.0)
        elif all(0 <= u < inst.n for u in r):
            ln = path_length(inst, r)
            lengths.append(ln)
            if not ln <= inst.tmax + LENGTH_TOL:
                errs.append(f"route {k}: length {ln:.9f} > tmax {inst.tmax}")
    return score, lengths, errs


# --------------------------------------------------------------------------- solvers
def solve_isr(inst: Instance, seconds: float, seed: int) -> list[list[int]]:
    from planner.errors import InfeasibleError
    from planner.team_search import StopCriterion, TeamProblem, solve_team

    n, m = inst.n, inst.m
    ends = np.zeros((m, n), dtype=bool)
    ends[:, n - 1] = True
    el = np.ones((m, n), dtype=bool)
    el[:, 0] = False
    el[:, n - 1] = False
    prob = TeamProblem(
        dist=inst.dist,
        score=inst.score,
        starts=np.zeros(m, dtype=np.int64),
        end_options=ends,
        budget=np.full(m, inst.tmax),
        eligible=el,
    )
    try:
        sol = solve_team(prob, StopCriterion(max_seconds=seconds), seed=seed)
    except InfeasibleError:  # start -> end longer than tmax: nothing can be flown
        return [[] for _ in range(m)]
    return [r[1:-1] for r in sol.routes]


def _int_dist(inst: Instance) -> np.ndarray:
    # rounded up: an integer-feasible route is feasible in float (sum ceil >= sum)
    return np.ceil(inst.dist * SCALE).astype(np.int64)


def solve_ortools(inst: Instance, seconds: float, seed: int) -> list[list[int]]:
    from ortools.constraint_solver import pywrapcp, routing_enums_pb2

    n, m = inst.n, inst.m
    d = _int_dist(inst)
    cap = math.floor(inst.tmax * SCALE)
    manager = pywrapcp.RoutingIndexManager(n, m, [0] * m, [n - 1] * m)
    routing = pywrapcp.RoutingModel(manager)
    dl = d.tolist()

    def cb(i, j):
        return dl[manager.IndexToNode(i)][manager.IndexToNode(j)]

    transit = routing.RegisterTransitCallback(cb)
    routing.SetArcCostEvaluatorOfAllVehicles(transit)
    routing.AddDimension(transit, 0, cap, True, "Distance")
    # a point of score outweighs any total length, so the objective is score first
    unit = m * (cap + 1) + 1
    for node in range(1, n - 1):
        pen = round(float(inst.score[node])) * unit
        routing.AddDisjunction([manager.NodeToIndex(node)], pen)
    params = pywrapcp.DefaultRoutingSearchParameters()
    params.first_solution_strategy = routing_enums_pb2.FirstSolutionStrategy.PATH_CHEAPEST_ARC
    params.local_search_metaheuristic = (
        routing_enums_pb2.LocalSearchMetaheuristic.GUIDED_LOCAL_SEARCH
    )
    params.time_limit.FromMilliseconds(int(seconds * 1000))
    sol = routing.SolveWithParameters(params)
    routes: list[list[int]] = []
    if sol is None:
        return [[] for _ in range(m)]
    for v in range(m):
        idx = routing.Start(v)
        r = []
        while not routing.IsEnd(idx):
            node = manager.IndexToNode(idx)
            if node != 0:
                r.append(int(node))
            idx = sol.Value(routing.NextVar(idx))
        routes.append(r)
    return routes


def solve_pyvrp(inst: Instance, seconds: float, seed: int) -> list[list[int]]:
    from pyvrp import Model
    from pyvrp.stop import MaxRuntime

    n, m = inst.n, inst.m
    d = _int_dist(inst)
    cap = math.floor(inst.tmax * SCALE)
    unit = m * (cap + 1) + 1
    model = Model()
    locs = [model.add_location(float(inst.xy[i, 0]), float(inst.xy[i, 1])) for i in range(n)]
    start = model.add_depot(locs[0])
    end = model.add_depot(locs[n - 1])
    client_node: list[int] = []
    for i in range(1, n - 1):
        prize = round(float(inst.score[i])) * unit
        model.add_client(locs[i], prize=prize, required=False)
        client_node.append(i)
    model.add_vehicle_type(num_available=m, start_depot=start, end_depot=end, max_distance=cap)
    for i in range(n):
        for j in range(n):
            if i != j:
                model.add_edge(locs[i], locs[j], distance=int(d[i, j]))
    res = model.solve(stop=MaxRuntime(seconds), seed=seed, display=False, collect_stats=False)
    sol = res.best
    routes: list[list[int]] = []
    for r in sol.routes():
        # a client activity's idx is the client's index among the model's clients
        routes.append([client_node[int(a.idx)] for a in r if a.is_client()])
    return routes


SOLVERS = {"isr": solve_isr, "ortools": solve_ortools, "pyvrp": solve_pyvrp}


# --------------------------------------------------------------------------- workers
def _init_worker(solver: str) -> None:
    """Load the solver before the clock starts (imports, numba cache)."""
    if solver == "isr":
        from planner.team_search import warmup

        warmup()
    elif solver == "ortools":
        from ortools.constraint_solver import pywrapcp  # noqa: F401
    elif solver == "pyvrp":
        import pyvrp
        import pyvrp.stop  # noqa: F401


def run_one(path: str, solver: str, seconds: float, seed: int) -> dict:
    inst = read_instance(path)
    t0 = time.perf_counter()
    error = None
    try:
        routes = SOLVERS[solver](inst, seconds, seed)
    except Exception as exc:
        routes, error = [], f"{type(exc).__name__}: {exc}"
    el = time.perf_counter() - t0
    return {"instance": inst.name, "routes": routes, "seconds": el, "error": error}


# --------------------------------------------------------------------------- report
def set_of(name: str) -> str:
    return name.split(".")[0]


def summarise(rows: list[dict]) -> list[dict]:
    out = []
    sets = sorted({set_of(r["instance"]) for r in rows})
    for s in sets:
        rs = [r for r in rows if set_of(r["instance"]) == s]
        for label, sub in ((s, rs), (f"{s} (best>0)", [r for r in rs if r["best_known"] > 0])):
            if not sub:
                continue
            gaps = [r["gap_pct"] for r in sub]
            out.append(
                {
                    "set": label,
                    "n": len(sub),
                    "mean_gap": statistics.fmean(gaps),
                    "at_best": sum(1 for r in sub if r["score"] >= r["best_known"] - 1e-9),
                    "max_gap": max(gaps),
                    "median_s": statistics.median(r["seconds"] for r in sub),
                    "failures": sum(1 for r in sub if not r["feasible"]),
                    "above": sum(1 for r in sub if r["score"] > r["best_known"] + 1e-9),
                }
            )
    if len(sets) > 1:
        for label, sub in (
            ("all", rows),
            ("all (best>0)", [r for r in rows if r["best_known"] > 0]),
        ):
            gaps = [r["gap_pct"] for r in sub]
            out.append(
                {
                    "set": label,
                    "n": len(sub),
                    "mean_gap": statistics.fmean(gaps),
                    "at_best": sum(1 for r in sub if r["score"] >= r["best_known"] - 1e-9),
                    "max_gap": max(gaps),
                    "median_s": statistics.median(r["seconds"] for r in sub),
                    "failures": sum(1 for r in sub if not r["feasible"]),
                    "above": sum(1 for r in sub if r["score"] > r["best_known"] + 1e-9),
                }
            )
    return out


def print_table(console, solver: str, seconds: float, summary: list[dict]) -> None:
    from rich.table import Table

    t = Table(title=f"TOP benchmark: solver={solver}, {seconds:g} s per instance")
    for col in (
        "set",
        "instances",
        "mean gap %",
        "at best-known",
        "max gap %",
        "median s",
        "above best",
        "failures",
    ):
        t.add_column(col, justify="right" if col != "set" else "left")
    for s in summary:
        t.add_row(
            s["set"],
            str(s["n"]),
            f"{s['mean_gap']:.3f}",
            f"{s['at_best']}/{s['n']}",
            f"{s['max_gap']:.2f}",
            f"{s['median_s']:.2f}",
            str(s["above"]),
            str(s["failures"]),
            style="red" if s["failures"] else None,
        )
    console.print(t)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default=str(DATA), help="folder of instance files")
    ap.add_argument(
        "--best-known", default=str(DATA / "best_known.txt"), help="'instance total' lines"
    )
    ap.add_argument("--instances", default="p*.txt", help="glob inside --dir")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--solver", choices=sorted(SOLVERS), default="isr")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", dest="json_out", default=None)
    args = ap.parse_args(argv)

    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(width=110)
    best = read_best_known(args.best_known)
    paths = sorted(glob.glob(os.path.join(args.dir, args.instances)))
    paths = [p for p in paths if p.endswith(".txt") and Path(p).name in best]
    if not paths:
        console.print(f"[red]no instance matches {args.instances!r} in {args.dir}")
        return 2
    console.print(
        f"{len(paths)} instances, solver {args.solver}, {args.seconds:g} s each, "
        f"{args.jobs} job(s); {platform.node()} {platform.processor() or platform.machine()}"
        f", {os.cpu_count()} cpus, python {platform.python_version()}"
    )

    rows: list[dict] = []
    ctx = mp.get_context("spawn")
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
    ) as prog:
        task = prog.add_task(args.solver, total=len(paths))
        with cf.ProcessPoolExecutor(
            max_workers=args.jobs, mp_context=ctx, initializer=_init_worker, initargs=(args.solver,)
        ) as ex:
            futs = {ex.submit(run_one, p, args.solver, args.seconds, args.seed): p for p in paths}
            for fut in cf.as_completed(futs):
                res = fut.result()
                inst = read_instance(futs[fut])
                score, lengths, errs = verify(inst, res["routes"])
                if res["error"]:
                    errs.append(res["error"])
                bk = best[inst.name]
                feasible = not errs
                if not feasible:
                    prog.console.print(f"[bold red]FAILURE {inst.name}: " + "; ".join(errs))
                    score = 0.0
                gap = (
                    0.0
                    if bk == 0 and score == 0
                    else (100.0 if bk == 0 else 100.0 * (bk - score) / bk)
                )
                if not feasible:
                    gap = 100.0 if bk > 0 else 0.0 if score == 0 else 100.0
                row = {
                    "instance": inst.name,
                    "best_known": bk,
                    "score": score,
                    "gap_pct": gap,
                    "seconds": res["seconds"],
                    "routes": res["routes"],
                    "lengths": lengths,
                    "tmax": inst.tmax,
                    "feasible": feasible,
                    "errors": errs,
                }
                if feasible and score > bk + 1e-9:
                    prog.console.print(
                        f"[bold yellow]ABOVE BEST-KNOWN {inst.name}: {score:g} > {bk:g} "
                        f"(verified from coordinates; lengths "
                        f"{', '.join(f'{x:.6f}' for x in lengths)} <= tmax {inst.tmax})"
                    )
                rows.append(row)
                prog.advance(task)
    rows.sort(key=lambda r: r["instance"])
    summary = summarise(rows)
    print_table(console, args.solver, args.seconds, summary)
    above = [r for r in rows if r["feasible"] and r["score"] > r["best_known"] + 1e-9]
    for r in above:
        console.print(
            f"above best-known: {r['instance']} {r['score']:g} > {r['best_known']:g}"
            f", route lengths {[round(x, 6) for x in r['lengths']]} <= {r['tmax']}"
        )
    fails = [r for r in rows if not r["feasible"]]
    if fails:
        console.print(
            f"[bold red]{len(fails)} FAILURE(S): " + ", ".join(r["instance"] for r in fails)
        )
    if args.json_out:
        Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
        with open(args.json_out, "w") as f:
            json.dump(
                {
                    "solver": args.solver,
                    "seconds": args.seconds,
                    "jobs": args.jobs,
                    "seed": args.seed,
                    "command": " ".join(sys.argv),
                    "machine": {
                        "node": platform.node(),
                        "cpus": os.cpu_count(),
                        "processor": platform.processor() or platform.machine(),
                        "python": platform.python_version(),
                    },
                    "summary": summary,
                    "instances": rows,
                },
                f,
                indent=1,
            )
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
