"""``isr scenario generate``: random missions with disruptions where they matter.

    isr scenario generate [--suite FILE] [--name N] [--seed S] [--count N] [--drones 3..8]
                          [--targets 20..80] [--sams 2..10] [--size KM] [--speed KM/S]
                          [--disruptions popup_sam,lost_drone,...] --out DIR

Writes ``DIR/NAME-0000.json`` ... (each a valid scenario) and ``DIR/suite.json`` (the spec
and, per mission, its file, the disruption placed, its edits and the first plan's points).
A suite file (YAML or JSON) holds the same fields as the options (``planner.generator.
SuiteSpec``); an option given on the command line wins over the file. Seeded: the same spec
gives the same missions. Bad input: one line per problem naming the field, exit 2; files are
written whole or not at all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from cli.common import fail, write_atomically
from planner.generator import DISRUPTIONS, SuiteSpec, generate_mission
from planner.scenario_io import ScenarioError, parse_json, read_json_file

__all__ = ["scenario_app"]

scenario_app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="Scenario files: generate random missions."
)


def _span(text: str | None, option: str) -> list[int] | None:
    """'3..8' (or '5') as [low, high]."""
    if text is None:
        return None
    low, _, high = text.partition("..")
    try:
        return [int(low), int(high or low)]
    except ValueError:
        raise fail(f"{option} {text!r}: a range like 3..8 (or one number)") from None


def _suite_file(path: Path) -> dict[str, Any]:
    """The suite file's fields (YAML or JSON), or one line naming what is wrong."""
    try:
        text = read_json_file(path)
    except ScenarioError as exc:
        raise fail(f"{exc.source}: {p}" for p in exc.problems) from None
    if path.suffix.lower() in (".yaml", ".yml"):
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 1})" if mark is not None else ""
            raise fail(f"{path}: not valid YAML{where}") from None
    else:
        try:
            data = parse_json(text, str(path))
        except ScenarioError as exc:
            raise fail(f"{exc.source}: {p}" for p in exc.problems) from None
    if not isinstance(data, dict):
        raise fail(f"{path}: $: a suite file is a mapping of SuiteSpec fields")
    return data


def _write(path: Path, text: str) -> None:
    """``text`` into ``path``, whole or not at all."""

    def put(tmp: Path) -> None:
        tmp.write_text(text, encoding="utf-8")

    write_atomically(path, put)


@scenario_app.command("generate")
def generate(
    out: Annotated[Path, typer.Option(help="the folder to write the missions to")],
    suite: Annotated[
        Path | None, typer.Option(help="a suite file (YAML or JSON) with the fields below")
    ] = None,
    name: Annotated[str | None, typer.Option(help="the suite's name (file prefix)")] = None,
    seed: Annotated[int | None, typer.Option(help="random seed")] = None,
    count: Annotated[int | None, typer.Option(help="how many missions")] = None,
    drones: Annotated[str | None, typer.Option(help="drones per mission, e.g. 3..8")] = None,
    targets: Annotated[str | None, typer.Option(help="targets per mission, e.g. 20..80")] = None,
    sams: Annotated[str | None, typer.Option(help="SAMs per mission, e.g. 2..10")] = None,
    size: Annotated[float | None, typer.Option(help="side of the square area, km")] = None,
    speed: Annotated[float | None, typer.Option(help="drone speed, km/s")] = None,
    disruptions: Annotated[
        str | None,
        typer.Option(help=f"comma-separated, cycled through the missions: {','.join(DISRUPTIONS)}"),
    ] = None,
) -> None:
    """Generate a suite of random missions, each with a disruption where it matters."""
    fields: dict[str, Any] = _suite_file(suite) if suite is not None else {}
    given = {
        "name": name,
        "seed": seed,
        "count": count,
        "drones": _span(drones, "--drones"),
        "targets": _span(targets, "--targets"),
        "sams": _span(sams, "--sams"),
        "size": size,
        "speed": speed,
        "disruptions": [d.strip() for d in disruptions.split(",")] if disruptions else None,
    }
    fields |= {k: v for k, v in given.items() if v is not None}
    for key in ("drones", "targets", "sams"):  # JSON and YAML have lists, not tuples
        if isinstance(fields.get(key), list):
            fields[key] = tuple(fields[key])
    try:
        spec = SuiteSpec.model_validate(fields)
    except ValidationError as exc:
        source = str(suite) if suite is not None else "options"
        raise fail(
            f"{source}: {'.'.join(str(p) for p in e['loc']) or '$'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        ) from None
    if out.exists() and not out.is_dir():
        raise fail(f"--out {out}: is a file, not a folder")
    out.mkdir(parents=True, exist_ok=True)
    missions = []
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
    ) as progress:
        task = progress.add_task(f"generating {spec.name}", total=spec.count)
        for index in range(spec.count):
            made = generate_mission(spec, index)
            file = out / f"{spec.name}-{index:04d}.json"
            text = json.dumps(made.scenario, indent=1)
            _write(file, text)
            env = made.scenario["environment"]
            missions.append(
                {
                    "file": file.name,
                    "index": index,
                    "disruption": made.disruption,
                    "edits": made.placed,
                    "planned_points": made.planned_points,
                    "drones": len(made.scenario["drone_configs"]),
                    "targets": len(env["targets"]),
                    "sams": len(env["sams"]),
                }
            )
            progress.advance(task)
    manifest = json.dumps({"spec": spec.model_dump(mode="json"), "missions": missions}, indent=1)
    _write(out / "suite.json", manifest)
    kinds: dict[str, int] = {}
    for m in missions:
        kinds[str(m["disruption"])] = kinds.get(str(m["disruption"]), 0) + 1
    Console(stderr=True, highlight=False).print(
        f"wrote {len(missions)} missions to {out} ("
        + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
        + ")",
        markup=False,
    )
