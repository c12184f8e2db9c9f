"""The one interface every agent engine speaks: an agent call in, a reply out.

An ``AgentCall`` carries the prompt (system text with the hard constraints and memories
injected, user text), the tool whose input is the agent's structured output, the
deterministic answer the rules policy gives for the same input, and the input hash that
traces and replays key on. ``Engine.complete`` answers it or raises an ``EngineError`` whose
``kind`` says what went wrong; it never blocks the event loop and honours ``timeout_s``.

Engines: ``rules`` (returns the deterministic answer, offline), ``anthropic`` (the official
SDK's async client, tool use), ``replay`` (answers recorded in a trace).

A tool is built from the pydantic model that parses its input (``ToolSpec.for_model``), so
the JSON Schema the engine is shown and the model that validates its answer never drift.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ValidationError

from executive.errors import ExecutiveError
from executive.traces.pieces import dumps

__all__ = [
    "AgentCall",
    "CallResult",
    "Engine",
    "EngineError",
    "EngineReply",
    "ToolSpec",
    "blocks_json",
    "call_validated",
    "canonical_json",
    "input_hash",
    "settle",
    "tool_input_from_blocks",
    "tool_schema",
    "validation_summary",
]

ErrorKind = Literal[
    "timeout", "rate_limited", "server_error", "malformed", "refused", "unavailable", "not_recorded"
]


class EngineError(ExecutiveError):
    """An engine could not answer: ``kind`` is one of ``ErrorKind``.

    ``raw`` is set when the engine did get a reply it could not use (``malformed``): the
    content blocks JSON, for the trace.
    """

    raw: str | None = None

    def __init__(self, kind: ErrorKind, message: str) -> None:
        """An error of ``kind``; its text is ``"kind: message"``."""
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


@dataclass(frozen=True)
class ToolSpec:
    """The tool an agent must call; its input is the agent's structured output."""

    name: str
    description: str
    input_schema: Mapping[str, Any]  # JSON Schema of the tool input

    @classmethod
    def for_model(cls, name: str, description: str, model: type[BaseModel]) -> ToolSpec:
        """The tool whose input is ``model``: its schema is ``tool_schema(model)``."""
        return cls(name=name, description=description, input_schema=tool_schema(model))


def tool_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON Schema (validation mode) as a tool's ``input_schema``.

    Adapted for the Messages API, which wants one self-contained object schema: every
    ``$ref`` is replaced by its definition (no ``$defs`` left) and pydantic's generated
    ``title`` keywords are dropped; descriptions come from the model's docstrings and its
    ``Field(description=...)``. Any answer valid for the result is valid for ``model``.
    """
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})
    out = _inline(schema, defs, ())
    if out.get("type") != "object":
        raise TypeError(f"{model.__name__}: a tool input must be a JSON object, not {out!r:.80}")
    return out


_DATA_KEYWORDS = frozenset({"default", "enum", "const", "examples"})


def _inline(node: Any, defs: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    # ``path``: the definitions being inlined above this node (a recursive model never ends)
    if isinstance(node, list):
        return [_inline(item, defs, path) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        if name in path:
            raise TypeError(f"recursive model {name!r} cannot be inlined into a tool schema")
        rest = {key: value for key, value in node.items() if key != "$ref"}
        return _inline({**defs[name], **rest}, defs, (*path, name))
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key in _DATA_KEYWORDS:  # values, not schemas: copied as they are
            out[key] = value
        elif key == "properties":  # names of fields, not keywords: a field may be called "title"
            out[key] = {field: _inline(sub, defs, path) for field, sub in value.items()}
        else:
            out[key] = _inline(value, defs, path)
    return out


@dataclass(frozen=True)
class AgentCall:
    """One question to an agent: the prompt, the tool to answer with, the rules answer."""

    agent: str  # strategist | allocator | critic | responder
    system: str  # role prompt + hard constraints + memories
    prompt: str  # the user turn: mission context, metrics, request
    tool: ToolSpec
    deterministic: Mapping[str, Any]  # the rules policy's answer (also the fallback)
    max_tokens: int = 1024
    # with tools (``agents.engines.tool_loop``): the calls the rules engine makes before it
    # answers, (tool name, arguments) in order, so the offline path runs the same tools
    tool_plan: tuple[tuple[str, Mapping[str, Any]], ...] = ()

    @property
    def input_hash(self) -> str:
        """The hash of the system prompt, the user prompt and the tool name."""
        return input_hash(self.system, self.prompt, self.tool.name)

    @property
    def input_size(self) -> int:
        """How many characters of prompt the call sends."""
        return len(self.system) + len(self.prompt)


@dataclass(frozen=True)
class EngineReply:
    """What an engine answered: the tool input (unvalidated), the raw reply and its cost."""

    tool_input: dict[str, Any] | None  # the structured output, unvalidated
    raw: str  # what the engine returned, as text (JSON of the content blocks for the SDK)
    model: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class Engine(Protocol):
    """An agent engine: ``complete`` answers a call or raises an ``EngineError``."""

    name: str  # rules | anthropic | replay

    @property
    def model(self) -> str | None:
        """The model the engine asks (``None`` when no model answers: rules, empty replay)."""
        ...

    async def complete(self, call: AgentCall, *, timeout_s: float) -> EngineReply:
        """The reply to ``call`` within ``timeout_s``, never blocking the event loop."""
        ...


def input_hash(*parts: str) -> str:
    """A short stable hash of ``parts`` (each one delimited), what traces and replays key on."""
    h = hashlib.blake2b(digest_size=12)
    for part in parts:
        h.update(part.encode())
        h.update(b"\x00")
    return h.hexdigest()


def canonical_json(value: Any) -> str:
    """``value`` as compact JSON with sorted keys, the same text for the same value:
    ``json.dumps``'s text, encoded in pieces (``executive.traces.pieces``): a round's
    remainder at 1,000 drones x 5,000 targets held the GIL 12.6 ms in one call, in a
    planning worker, while the tick waited for it."""
    return dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def blocks_json(blocks: list[dict[str, Any]]) -> str:
    """``EngineReply.raw`` for every engine: the JSON text of the reply's content blocks."""
    return json.dumps(blocks, separators=(",", ":"), default=str)


def tool_input_from_blocks(blocks: Any, tool_name: str) -> dict[str, Any]:
    """The input of the first ``tool_use`` block named ``tool_name``.

    Raises ``EngineError("malformed")`` when ``blocks`` is not a list of blocks, when no
    such block exists, or when its input is not a JSON object.
    """
    if not isinstance(blocks, list):
        raise EngineError("malformed", f"content is not a list of blocks: {type(blocks).__name__}")
    seen: list[str] = []
    for block in blocks:
        if not isinstance(block, Mapping):
            raise EngineError("malformed", f"content block is not an object: {block!r:.80}")
        kind = block.get("type")
        if kind == "tool_use" and block.get("name") == tool_name:
            tool_input = block.get("input")
            if tool_input is None and isinstance(block.get("input_text"), str):
                # the arguments came as text that does not parse (an OpenAI-style reply)
                raise EngineError(
                    "malformed",
                    f"tool {tool_name!r} arguments are not valid JSON:"
                    f" {_json_problem(block['input_text'])}",
                )
            if not isinstance(tool_input, dict):
                raise EngineError(
                    "malformed",
                    f"tool {tool_name!r} input is not an object: {type(tool_input).__name__}",
                )
            return tool_input
        seen.append(f"{kind}:{block.get('name')}" if kind == "tool_use" else str(kind))
    raise EngineError(
        "malformed", f"no tool_use block for {tool_name!r} (blocks: {', '.join(seen) or 'none'})"
    )


def _json_problem(text: str) -> str:
    """Why ``text`` is not JSON, with an excerpt: "Expecting ',' delimiter at char 17 in
    '{"a": 1 "b"...'"."""
    try:
        json.loads(text)
    except ValueError as exc:
        msg = getattr(exc, "msg", str(exc))
        at = getattr(exc, "pos", None)
        where = f" at char {at}" if at is not None else ""
        return f"{msg}{where} in {text[:60]!r}" + ("..." if len(text) > 60 else "")
    return f"{text[:60]!r}"


def validation_summary(exc: ValidationError, limit: int = 3) -> str:
    """A pydantic ``ValidationError`` as one short line: ``loc: msg; ...; and N more``."""
    parts = []
    for err in exc.errors()[:limit]:
        loc = ".".join(str(x) for x in err.get("loc", ())) or "input"
        parts.append(f"{loc}: {err.get('msg', '')}")
    more = exc.error_count() - limit
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)


@dataclass(frozen=True)
class CallResult:
    """What one agent call came to: the reply (if any), its validated output, or why not."""

    reply: EngineReply | None
    output: Any  # an instance of the output model, or None
    error: str | None  # "kind: message"
    raw: str | None  # what the engine said, for the trace (also when it was unusable)


async def call_validated(
    engine: Engine, call: AgentCall, output_model: type[BaseModel], timeout_s: float
) -> CallResult:
    """Ask ``engine``, race the deadline, parse the tool input with ``output_model``.

    Never raises an engine failure: a timeout, an ``EngineError``, any other exception or
    an output that does not validate becomes ``error`` (``"timeout: ..."``,
    ``"malformed: ..."``, ``"server_error: ..."``).
    """
    return await settle(engine.complete(call, timeout_s=timeout_s), output_model, timeout_s)


async def settle(
    request: Coroutine[Any, Any, EngineReply], output_model: type[BaseModel], timeout_s: float
) -> CallResult:
    """``request`` (an engine's answer) raced against ``timeout_s``, its tool input parsed
    with ``output_model``; what ``call_validated`` does with any engine's request."""
    reply: EngineReply | None = None
    output: BaseModel | None = None
    error: str | None = None
    raw: str | None = None
    try:
        reply = await asyncio.wait_for(request, timeout_s)
    except TimeoutError:
        error = f"timeout: no answer within {timeout_s:.2f} s"
    except EngineError as exc:
        error = f"{exc.kind}: {exc.message}"
        raw = exc.raw
    except Exception as exc:
        error = f"server_error: {type(exc).__name__}: {exc}"
    if reply is not None:
        raw = reply.raw
        if reply.tool_input is None:
            error = "malformed: no structured output"
        else:
            try:
                output = output_model.model_validate(reply.tool_input)
            except ValidationError as exc:
                error = f"malformed: {validation_summary(exc)}"
    return CallResult(reply, output, error, raw)
