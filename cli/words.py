"""``isr ask RUN "question"`` and ``isr memory add|list|lessons|rm``.

Same conventions as every ``isr`` command (``cli.common``): bad input (an
unknown run, a bad memory kind or id, an unknown id in the words, an unusable trace store)
is one line on stderr and exit code 2, never a traceback. Stored text (answers, memories,
agent runs) is printed as text: control characters as their escapes.

``isr ask`` answers from a stored run's state (``agents.words.state.replay_trace``: the
run re-executed from its inputs to its last telemetry row) through the coordinator and the
responder, and stores the agent runs behind the answer in the trace store under that run.
``--trace`` prints their tree (agent, engine, model, duration, tokens, applied, error),
read back from the store, as seed 004's debug CLI prints a request's chain. Every answer
ends with two or three suggested next questions (seed 004's follow-ups). ``--json``
prints one JSON object instead. The stored run is never changed: a command in words says
what it would do (a memory in words is stored, as ``isr memory add`` would).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agents.engines.spec import LIVE_ENGINES, choices_text
from cli.common import check_number, fail, shown, trace_url
from cli.engines import EngineUrlOption, check_engine_url

if TYPE_CHECKING:
    from agents.words.stages import Stage, StageReport

__all__ = ["ask", "memory_app"]

ASK_ENGINES = LIVE_ENGINES  # the registry's engines one role (the responder) may be given
MAX_QUESTION = 2000  # characters, as the dashboard's question box
MAX_TIMEOUT_S = 600.0


def _echo(text: object) -> None:
    """Print stored text line by line, each line as text (``cli.common.shown``)."""
    for line in str(text).split("\n"):
        typer.echo(shown(line))


memory_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Persistent memories and past runs' lessons, injected into every agent prompt.",
)

DbOption = Annotated[
    str | None,
    typer.Option(help="SQLAlchemy URL of the trace store (default sqlite:///runs/isr.db)"),
]


def _url(db: str | None, *, must_exist: bool) -> str:
    url = trace_url(db, must_exist=must_exist)
    if url is None:
        raise fail("--db none: this command needs a trace store")
    return url


def ask(
    run_id: Annotated[str, typer.Argument(help="the run id (or a unique prefix)")],
    question: Annotated[str, typer.Argument(help='e.g. "Which drone has the most fuel margin?"')],
    db: DbOption = None,
    engine: Annotated[
        str, typer.Option(help=f"responder engine: {choices_text(ASK_ENGINES)}")
    ] = "rules",
    model: Annotated[str | None, typer.Option(help="LLM model (anthropic, openai)")] = None,
    engine_url: EngineUrlOption = None,
    timeout: Annotated[float, typer.Option(help="seconds the responder may take", min=0.1)] = 30.0,
    trace: Annotated[
        bool, typer.Option("--trace", help="also print the chain of agent runs behind the answer")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
    url: Annotated[
        str | None, typer.Option(help="ask the live run at its dashboard (cli.live)")
    ] = None,
    mqtt: Annotated[
        str | None, typer.Option(help="ask the live run through its MQTT broker (cli.live)")
    ] = None,
    token: Annotated[str | None, typer.Option(help="the live run's control token")] = None,
    tools: Annotated[
        bool,
        typer.Option(
            "--tools",
            help="the responder may call its read-only tools (mission overview, drone state,"
            " distance, plan metrics) before answering; each call is traced under it",
        ),
    ] = False,
    stream: Annotated[
        bool,
        typer.Option(
            "--stream",
            help="print each stage of the answer as it happens (the decision, the steps, the"
            " answer as it grows); with --json, each stage as one JSON line first",
        ),
    ] = False,
) -> None:
    """Answer a question about a stored run, citing the numbers; with --url or --mqtt, the
    live run's coordinator answers."""
    from executive.errors import ExecutiveError

    if url is not None or mqtt is not None:  # a live run (cli.live)
        from cli.live import ask_live

        if stream:  # the dashboard's POST /api/ask/stream streams a live run's
            raise fail("--stream answers about a stored run; a live run's streams at its dashboard")
        if tools:  # a live run's responder has its tools when the run says so
            raise fail(
                "--tools applies to a stored run; a live run's responder has its tools when"
                " it was started with isr run --responder-tools"
            )
        if not question.strip() or len(question) > MAX_QUESTION:
            raise fail(f"the question must be 1 to {MAX_QUESTION} characters long")
        ask_live(
            run_id, question, url=url, mqtt=mqtt, token=token, timeout=timeout, as_json=as_json
        )
        return

    if engine not in ASK_ENGINES:
        raise fail(f"--engine {engine!r}: choose one of {', '.join(ASK_ENGINES)}")
    if not question.strip():
        raise fail("the question is empty")
    if len(question) > MAX_QUESTION:
        raise fail(f"the question is {len(question)} characters long, at most {MAX_QUESTION}")
    check_number(timeout, "--timeout", 0.1, MAX_TIMEOUT_S)
    check_engine_url(engine_url, engine)
    url = _url(db, must_exist=True)
    on_stage: StageReport | None = None
    printer = None
    if stream:
        on_stage = _json_stage if as_json else (printer := _StagePrinter())
    try:
        result, rows = asyncio.run(
            _ask(
                url,
                run_id,
                question,
                engine,
                model,
                timeout,
                base_url=engine_url,
                on_stage=on_stage,
                tools=tools,
            )
        )
    except ExecutiveError as exc:
        raise fail(str(exc)) from None
    if printer is not None and printer.answering:
        typer.echo("")  # the streamed answer's line ends
    if as_json:
        payload = dict(result)
        if trace:
            payload["trace"] = rows
        sys.stdout.write(json.dumps(payload, default=str) + "\n")
    elif not result["errors"]:
        if on_stage is None:  # streamed: the answer is printed already, as it came
            _echo(result["answer"])
        if result.get("follow_ups"):
            typer.echo("")
            typer.echo("You could ask next:")
            for text in result["follow_ups"]:
                _echo(f"  {text}")
        if trace:
            typer.echo("")
            _echo(f"agent runs behind the answer (run {result['run_id']}, tick {result['tick']}):")
            for line in tree_lines(rows):
                _echo(line)
    if result["errors"]:
        raise fail("; ".join(result["errors"]))


async def _ask(
    url: str,
    run_id: str,
    question: str,
    engine_name: str,
    model: str | None,
    timeout: float,
    *,
    base_url: str | None = None,
    on_stage: StageReport | None = None,
    tools: bool = False,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from agents.engines import make_engine
    from agents.words.ask import answer
    from agents.words.memory import MemoryStore
    from agents.words.state import replay_trace
    from executive.traces import TraceReader, TraceWriter

    reader = TraceReader(url)
    try:
        state, world = replay_trace(reader, run_id)  # read before anything is written
        engine = make_engine(engine_name, model=model, base_url=base_url)
        memories = MemoryStore(url)
        writer = TraceWriter(url)
        writer.start()
        try:
            result = await answer(
                question,
                state,
                engine=engine,
                sink=writer,
                memories=memories,
                world=world,
                timeout_s=timeout,
                on_stage=on_stage,
                responder_tools=tools,
            )
        finally:
            await asyncio.to_thread(writer.close)
            memories.close()
            close = getattr(engine, "aclose", None)
            if close is not None:
                await close()
        ids = set(result["agent_runs"])
        rows = [r for r in reader.agent_runs(state.run_id) if r["run_id"] in ids]
    finally:
        reader.close()
    order = {rid: i for i, rid in enumerate(result["agent_runs"])}
    rows.sort(key=lambda r: order.get(r["run_id"], len(order)))
    return result, rows


def _json_stage(stage: Stage) -> None:
    """``--stream --json``: one JSON line per stage, as it happens."""
    sys.stdout.write(json.dumps(stage.model_dump(mode="json")) + "\n")
    sys.stdout.flush()


class _StagePrinter:
    """``--stream``: each stage on a line of its own as it happens (dim), the answer's pieces
    on one line as they come."""

    def __init__(self) -> None:
        from rich.console import Console

        self.console = Console(highlight=False, soft_wrap=True)
        self.answering = False

    def __call__(self, stage: Stage) -> None:
        from rich.markup import escape

        from agents.words.stages import MessageDelta, stage_line

        if isinstance(stage, MessageDelta):
            piece = "\n".join(shown(part) for part in stage.delta.split("\n"))
            self.console.out(piece, end="")  # no newline: the answer grows
            self.answering = True
            return
        line = stage_line(stage)
        if line is not None:
            self.console.print(f"[dim]> {escape(shown(line))}[/dim]")


def tree_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The agent runs as a tree (children under their parent), one line each."""
    by_parent: dict[str | None, list[dict]] = {}
    ids = {r["run_id"] for r in rows}
    for r in rows:
        parent = r.get("parent_run_id") if r.get("parent_run_id") in ids else None
        by_parent.setdefault(parent, []).append(r)
    lines: list[str] = []

    def walk(parent: str | None, prefix: str) -> None:
        """Append ``parent``'s children, depth first, each under its branch prefix."""
        kids = by_parent.get(parent, [])
        for i, r in enumerate(kids):
            last = i == len(kids) - 1
            branch = "" if parent is None else ("└─ " if last else "├─ ")
            lines.append(prefix + branch + _describe(r))
            walk(r["run_id"], prefix + ("" if parent is None else ("   " if last else "│  ")))

    walk(None, "")
    return lines


def _describe(r: dict[str, Any]) -> str:
    tokens_in = "-" if r.get("tokens_in") is None else str(r["tokens_in"])
    tokens_out = "-" if r.get("tokens_out") is None else str(r["tokens_out"])
    text = (
        f"{r['agent']}  engine={r['engine']}  model={r.get('model') or '-'}"
        f"  {float(r.get('duration_ms') or 0.0):.1f} ms  tokens={tokens_in}/{tokens_out}"
        f"  {'applied' if r['applied'] else 'not applied'}  id={r['run_id']}"
    )
    if r.get("error"):
        text += f"  error={r['error']}"
    return shown(text)  # one line, whatever the stored error says


# ----------------------------------------------------------------------------- memories


@memory_app.command("add")
def memory_add(
    kind: Annotated[str, typer.Argument(help="instruction, note, preference or warning")],
    text: Annotated[str, typer.Argument(help="the memory, one line")],
    db: DbOption = None,
) -> None:
    """Store a memory; every agent prompt receives it from now on."""
    from agents.words.memory import MemoryStore, check_kind
    from executive.errors import ExecutiveError

    try:
        check_kind(kind)  # before touching the database
        store = MemoryStore(_url(db, must_exist=False))
        try:
            memory = store.add(kind, text)
        finally:
            store.close()
    except ExecutiveError as exc:
        raise fail(str(exc)) from None
    _echo(f"stored {memory.kind} #{memory.id}: {shown(memory.text)}")


@memory_app.command("list")
def memory_list(
    db: DbOption = None,
    all_: Annotated[bool, typer.Option("--all", help="include removed memories")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print a JSON array")] = False,
) -> None:
    """List the memories (active ones unless --all); the lessons are counted."""
    from agents.words.memory import MemoryStore
    from executive.errors import ExecutiveError

    try:
        url = _url(db, must_exist=False)
        store = MemoryStore(url)
        try:
            memories = store.list(include_removed=all_)
        finally:
            store.close()
        lessons = 0 if as_json else len(_lessons(url, None))
    except ExecutiveError as exc:
        raise fail(str(exc)) from None
    if as_json:
        sys.stdout.write(json.dumps([m.to_dict() for m in memories]) + "\n")
        return
    if not memories:
        typer.echo("no memories")
    for m in memories:
        flag = "" if m.active else "  (removed)"
        _echo(f"#{m.id}  [{m.kind.upper()}]  {shown(m.text)}{flag}")
    if lessons:
        typer.echo(f"and {lessons} lesson(s) from past runs: isr memory lessons")


@memory_app.command("lessons")
def memory_lessons(
    db: DbOption = None,
    limit: Annotated[
        int | None, typer.Option(min=1, help="at most this many, newest first")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print a JSON array")] = False,
) -> None:
    """List the lessons of past runs, newest first: what changed, what the executive did
    and how the run ended against its first plan. The most relevant go into agent prompts."""
    from executive.errors import ExecutiveError

    try:
        lessons = _lessons(_url(db, must_exist=False), limit)
    except ExecutiveError as exc:
        raise fail(str(exc)) from None
    if as_json:
        sys.stdout.write(json.dumps([lesson.to_dict() for lesson in lessons]) + "\n")
        return
    if not lessons:
        typer.echo("no lessons yet: a traced run that ends stores one")
        return
    for lesson in lessons:
        classes = ", ".join(lesson.classes) or "no disruption"
        _echo(f"#{lesson.id}  run {lesson.run_id}  [{classes}]  {shown(lesson.text)}")


def _lessons(url: str, limit: int | None) -> list[Any]:
    from agents.words.lessons import LessonStore

    store = LessonStore(url)
    try:
        return store.list(limit)
    finally:
        store.close()


@memory_app.command("rm")
def memory_rm(
    memory_id: Annotated[
        str, typer.Argument(metavar="ID", help="the memory's id (see isr memory list)")
    ],
    db: DbOption = None,
) -> None:
    """Remove a memory (it stops being injected; the row is kept for the record)."""
    from agents.words.memory import MemoryStore
    from executive.errors import ExecutiveError

    try:
        store = MemoryStore(_url(db, must_exist=False))
        try:
            memory = store.remove(memory_id)
        finally:
            store.close()
    except ExecutiveError as exc:
        raise fail(str(exc)) from None
    _echo(f"removed {memory.kind} #{memory.id}: {shown(memory.text)}")
