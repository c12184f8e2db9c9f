"""``isr schema``: the scenario file's JSON Schema, generated from the model.

    isr schema [--out FILE]
    isr schema --bus DIR

``--bus DIR`` writes instead one schema per bus topic (``executive.bus.messages``) into
``DIR`` as ``<topic>.json``; the repository keeps them in ``docs/schemas/bus/`` (a test checks
that they are what this writes).

Prints the schema (``planner.scenario.schema``) on stdout, or writes it whole to ``FILE``.
The repository keeps a copy in ``scenarios/scenario.schema.json`` (a test checks that it is
what this prints); a scenario that names it in ``"$schema"`` is validated as you type by
editors that read JSON Schema (VS Code, JetBrains, and yaml/json language servers).
"""

from __future__ import annotations

import json
import sys
from functools import partial
from pathlib import Path
from typing import Annotated

import typer

from cli.common import EXIT_FAILED, check_writable, fail, shown, write_atomically
from planner.scenario import scenario_json_schema

__all__ = ["bus_schema_texts", "schema", "schema_text"]


def schema_text() -> str:
    """The schema as the file holds it: two-space indented JSON and a final newline."""
    return json.dumps(scenario_json_schema(), indent=2, ensure_ascii=False) + "\n"


def bus_schema_texts() -> dict[str, str]:
    """Each bus topic's schema as its file holds it, by file name."""
    from executive.bus.messages import bus_json_schemas  # only for --bus: isr stays light

    return {
        f"{name}.json": json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
        for name, schema in bus_json_schemas().items()
    }


def schema(
    out: Annotated[Path | None, typer.Option(help="write the schema to this file")] = None,
    bus: Annotated[
        Path | None,
        typer.Option(help="write the bus messages' schemas (one per topic) into this folder"),
    ] = None,
) -> None:
    """Print the JSON Schema of a scenario file (generated from the model)."""
    if bus is not None:
        try:
            bus.mkdir(parents=True, exist_ok=True)
            for name, body in bus_schema_texts().items():
                write_atomically(bus / name, partial(Path.write_text, data=body, encoding="utf-8"))
        except OSError as exc:
            raise fail(f"{shown(bus)}: cannot write ({exc.strerror or exc})", EXIT_FAILED) from None
        return
    text = schema_text()
    if out is None:
        sys.stdout.write(text)
        return
    check_writable(out, "--out", (".json",))
    try:
        write_atomically(out, lambda p: p.write_text(text, encoding="utf-8"))
    except OSError as exc:
        raise fail(f"{shown(out)}: cannot write ({exc.strerror or exc})", EXIT_FAILED) from None
