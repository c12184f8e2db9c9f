"""``isr scenario new``: a starting point; ``isr scenario generate``: random missions with
disruptions where they matter.

    isr scenario new [--drones N] [--targets N] [--sams N] [--out FILE]

Writes a valid mission explained by ``"$comment"`` fields (``planner.scenario.template``), linked to
the published JSON Schema by ``"$schema"`` so that an editor checks it as you type; it
loads, validates and plans as it is. Without ``--out`` it is printed.

    isr scenario generate [--suite FILE] [--name N] [--seed S] [--count N] [--drones 3..8]
                          [--targets 20..80] [--sams 2..10] [--size KM] [--speed KM/S]
                          [--disruptions popup_sam,lost_drone,...] --out DIR

Writes ``DIR/NAME-0000.json`` ... (each a valid scenario) and ``DIR/suite.json`` (the spec
and, per mission, its file, the disruption placed, its edits and the first plan's points).
A suite file (YAML or JSON) holds the same fields as the options (``planner.scenario.generator.
SuiteSpec``); an option given on the command line wins over the file. Seeded: the same spec
gives the same missions. Bad input: one line per problem naming the field, exit 2; files are
written whole or not at all.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from cli.common import EXIT_FAILED, check_writable, fail, write_atomically
from planner.scenario import (
    MAX_NEW_DRONES,
    MAX_NEW_SAMS,
    MAX_NEW_TARGETS,
    ScenarioError,
    parse_json,
    parse_scenario,
    read_json_file,
    starter_scenario,
)
from planner.scenario.generator import DISRUPTIONS, SuiteSpec, generate_mission

__all__ = ["scenario_app"]

scenario_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Scenario files: a starting point to edit, or random missions.",
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


def _folder_name(folder: Path) -> str:
    """``out/My Suite`` -> ``My-Suite``: a suite name (SuiteSpec's pattern) from a folder."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", folder.resolve().name).strip("-.")[:64]
    return name or "suite"


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
    # A suite's runs are stored under its name: named after its folder unless told, so two
    # suites generated without --name do not share one ("suite").
    fields.setdefault("name", _folder_name(out))
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


_LINE = 100  # characters: a longer object is written one field a line

# The published schema, in a checkout (an installed package has no scenarios/ folder).
_SCHEMA_FILE = Path(__file__).resolve().parent.parent / "scenarios" / "scenario.schema.json"


def _schema_link(out: Path | None) -> str:
    """The ``$schema`` link of a new file: the checkout's schema, relative to the file."""
    if not _SCHEMA_FILE.is_file():
        return "scenario.schema.json"  # 'isr schema --out scenario.schema.json' writes it
    folder = (out.parent if out is not None else Path.cwd()).resolve()
    return Path(os.path.relpath(_SCHEMA_FILE, folder)).as_posix()


def _compact(value: Any, indent: str = "") -> str:
    """JSON indented by two, with each small object or array on one line (an airport, a
    target, a position), as the repository's scenarios are written."""
    flat = json.dumps(value, ensure_ascii=False)
    simple = not isinstance(value, dict | list) or all(
        not isinstance(v, dict | list) or (isinstance(v, list) and len(json.dumps(v)) < 40)
        for v in (value.values() if isinstance(value, dict) else value)
    )
    if (simple and len(indent) + len(flat) <= _LINE) or not isinstance(value, dict | list):
        return flat
    inner = indent + "  "
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(k)}: {_compact(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    items = [f"{inner}{_compact(v, inner)}" for v in value]
    return "[\n" + ",\n".join(items) + f"\n{indent}]"


@scenario_app.command("new")
def new(
    drones: Annotated[int, typer.Option(help="how many drones", min=1, max=MAX_NEW_DRONES)] = 2,
    targets: Annotated[int, typer.Option(help="how many targets", min=0, max=MAX_NEW_TARGETS)] = 8,
    sams: Annotated[int, typer.Option(help="how many SAMs", min=0, max=MAX_NEW_SAMS)] = 1,
    out: Annotated[
        Path | None, typer.Option(help="write the mission here (default: print it)")
    ] = None,
    force: Annotated[bool, typer.Option(help="overwrite an existing --out file")] = False,
) -> None:
    """Write a commented starting point: a valid mission to edit."""
    check_writable(out, "--out", (".json",))
    if out is not None and out.exists() and not force:
        raise fail(f"--out {out}: exists already (--force to overwrite)")
    data = starter_scenario(drones, targets, sams, schema=_schema_link(out))
    parse_scenario(data, source="isr scenario new")  # it must load as it is written
    text = _compact(data) + "\n"
    if out is None:
        sys.stdout.write(text)
        return
    try:
        _write(out, text)
    except OSError as exc:
        raise fail(f"{out}: cannot write ({exc.strerror or exc})", EXIT_FAILED) from None
    Console(stderr=True, highlight=False).print(
        f"wrote {out}: {drones} drone(s), {targets} target(s), {sams} SAM(s);"
        f" next: isr validate {out}",
        markup=False,
    )
