"""Scenario files: reading and checking them, their forms, their JSON Schema, a template.

Loading sits above the mission model it builds (``planner.model``, ``planner.edits``, the
bounds in ``planner.limits``); the planning algorithms never import it (the import
contracts in ``pyproject.toml`` say so). One idea per module:

- ``io`` -- JSON text in, a checked ``Scenario`` out, or ``ScenarioError`` naming every
  problem by its JSON path;
- ``check`` -- every problem of a parsed file at once (form, schema, references);
- ``references`` -- what a schema cannot see (unknown or duplicate ids, a start inside a
  SAM, a broken frozen chain, the timeline's edits in order);
- ``limits`` -- a scenario's sizes and motion against the bounds of ``planner.limits``;
- ``paths`` -- naming a problem by its JSON path (pydantic's errors too);
- ``forms`` -- the forms a file may take beyond the model's own (notes, both positions);
- ``schema`` -- the published JSON Schema, generated from the model;
- ``template`` -- a starting mission explained in place (``isr scenario new``);
- ``generator`` -- random missions with disruptions where they matter (``isr scenario
  generate``). It plans each mission, so it loads the solvers: import it by its own name,
  ``planner.scenario.generator``; it is not re-exported here.
"""

from __future__ import annotations

from planner.scenario.check import check_scenario_data
from planner.scenario.forms import ANNOTATION_KEYS, COMMENT_KEY, SCHEMA_KEY, normal_form
from planner.scenario.io import (
    ScenarioError,
    load_scenario,
    parse_json,
    parse_scenario,
    read_json_file,
)
from planner.scenario.limits import motion_problems, size_problems
from planner.scenario.paths import json_path, schema_loc, schema_problems
from planner.scenario.references import scenario_problems
from planner.scenario.schema import SCHEMA_DIALECT, scenario_json_schema
from planner.scenario.template import (
    MAX_NEW_DRONES,
    MAX_NEW_SAMS,
    MAX_NEW_TARGETS,
    starter_scenario,
)

__all__ = [
    "ANNOTATION_KEYS",
    "COMMENT_KEY",
    "MAX_NEW_DRONES",
    "MAX_NEW_SAMS",
    "MAX_NEW_TARGETS",
    "SCHEMA_DIALECT",
    "SCHEMA_KEY",
    "ScenarioError",
    "check_scenario_data",
    "json_path",
    "load_scenario",
    "motion_problems",
    "normal_form",
    "parse_json",
    "parse_scenario",
    "read_json_file",
    "scenario_json_schema",
    "scenario_problems",
    "schema_loc",
    "schema_problems",
    "size_problems",
    "starter_scenario",
]
