"""The README and the pages of docs/ point at things that exist.

Each page is parsed as CommonMark with GitHub's tables (markdown-it-py). Every relative link
(inline, reference-style, images, ``href``/``src`` in HTML) must name a file or folder of the
repository, and an anchor a heading of the page it names, slugged as GitHub slugs headings.
Every source path and every module named in code (``planner/edits.py``,
``executive.session.run_mission``), in code spans and code blocks alike, must exist too.
When a package moves, these tests name each page and line that still points at the old place.

The README stays short (the manual lives in docs/), every page of docs/ is reachable from
its table of contents, a page longer than about a hundred lines lists its sections, and the
numbers of the README's figures table are ones its linked bench outputs hold.
"""

from __future__ import annotations

import ast
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from urllib.parse import unquote

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]

README_MAX_LINES = 200
TOC_OVER_LINES = 100  # a page longer than this lists its sections at the top

_MARKDOWN = MarkdownIt("commonmark").enable("table")  # GitHub's Markdown, as far as links go
_HTML_ATTR = re.compile(r"""<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*["']([^"']+)["']""", re.I)
_HTML_ANCHOR = re.compile(r"""<a\b[^>]*?\b(?:id|name)\s*=\s*["']([^"']+)["']""", re.I)
_EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.I)  # http:, mailto:, //host

PACKAGES = ("planner", "sim", "executive", "dashboard", "cli")
# A repository path in code: a top-level folder of the project, then a path; globs allowed,
# placeholders (<run_id>, {id}) and shell syntax are not paths.
_TOP = "|".join(re.escape(d) for d in (".ci", "bench", "docs", "scenarios", "tests", *PACKAGES))
_REPO_PATH = re.compile(rf"^(?:{_TOP})/[\w.*/-]*$")
_MODULE = re.compile(rf"^(?:{'|'.join(PACKAGES)})(?:\.[A-Za-z_]\w*)+$")


# ----- GitHub's heading slugs ---------------------------------------------------------------


def slug(text: str) -> str:
    """GitHub's anchor for a heading's text (github-slugger): lower case; letters, marks,
    decimal and letter numbers, ``_``-like connectors, spaces and hyphens kept, every other
    character dropped; each space a hyphen. Not trimmed, not collapsed."""
    kept = []
    for ch in text.lower():
        category = unicodedata.category(ch)
        if ch in " -" or category[0] in "LM" or category in ("Nd", "Nl", "Pc"):
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def heading_text(inline: Token) -> str:
    """A heading's rendered text, what GitHub slugs: its text and code, without images or
    HTML tags."""
    return "".join(
        c.content for c in inline.children or () if c.type in ("text", "code_inline")
    ).strip()


class Slugger:
    """Unique anchors in document order: a repeated slug gets -1, -2 ... (github-slugger)."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def __call__(self, text: str) -> str:
        base = result = slug(text)
        while result in self.seen:
            self.seen[base] += 1
            result = f"{base}-{self.seen[base]}"
        self.seen[result] = 0
        return result


# ----- reading a page -----------------------------------------------------------------------


@dataclass(frozen=True)
class Page:
    """A Markdown page: its lines, its links, what its code names, its headings, anchors."""

    path: Path
    lines: tuple[str, ...]
    links: tuple[tuple[int, str], ...]  # (line, target) of each link and image
    code: tuple[tuple[int, str], ...]  # (line, a code span's text or a code block's word)
    headings: tuple[tuple[int, str], ...]  # (level, anchor), in order
    anchors: frozenset[str]

    @property
    def name(self) -> str:
        return self.path.relative_to(ROOT).as_posix()


def _inline(token: Token, line: int) -> Iterator[tuple[int, str, str]]:
    """(line, kind, value) of an inline token's links, images, HTML and code spans, kind
    being ``link``, ``anchor`` (an HTML id or name) or ``code``."""
    for child in token.children or ():
        if child.type == "link_open":
            yield line, "link", str(child.attrGet("href") or "")
        elif child.type == "image":
            yield line, "link", str(child.attrGet("src") or "")
            line += child.content.count("\n")
        elif child.type == "html_inline":
            yield from ((line, "link", h) for h in _HTML_ATTR.findall(child.content))
            yield from ((line, "anchor", a) for a in _HTML_ANCHOR.findall(child.content))
        elif child.type == "code_inline":
            yield line, "code", child.content.strip()
        elif child.type in ("softbreak", "hardbreak"):
            line += 1


def parse(path: Path, text: str) -> Page:
    """``text`` (the Markdown of ``path``) as a ``Page``."""
    tokens = _MARKDOWN.parse(text)
    links: list[tuple[int, str]] = []
    code: list[tuple[int, str]] = []
    headings: list[tuple[int, str]] = []
    anchors: set[str] = set()
    slugger = Slugger()
    for i, token in enumerate(tokens):
        first = token.map[0] + 1 if token.map else 0
        if token.type == "heading_open":
            anchor = slugger(heading_text(tokens[i + 1]))
            headings.append((int(token.tag[1:]), anchor))
            anchors.add(anchor)
        elif token.type == "inline":
            for line, kind, value in _inline(token, first):
                if kind == "link":
                    links.append((line, unquote(value)))
                elif kind == "anchor":
                    anchors.add(value)
                else:
                    code.append((line, value))
        elif token.type in ("fence", "code_block"):
            for n, line_text in enumerate(token.content.splitlines(), first + 1):
                code += [(n, w) for w in re.split(r"[\s'\"=(),;|<>\[\]]+", line_text) if w]
        elif token.type == "html_block":
            links += [(first, unquote(h)) for h in _HTML_ATTR.findall(token.content)]
            anchors |= set(_HTML_ANCHOR.findall(token.content))
    lines = tuple(text.splitlines())
    return Page(path, lines, tuple(links), tuple(code), tuple(headings), frozenset(anchors))


@cache
def read_page(path: Path) -> Page:
    return parse(path, path.read_text(encoding="utf-8"))


# ----- what a link or a mention must resolve to ----------------------------------------------


def link_problem(page: Page, target: str) -> str | None:
    """Why ``target`` (a link of ``page``) leads nowhere, or None."""
    if not target or _EXTERNAL.match(target):
        return None
    path_part, _, anchor = target.partition("#")
    if path_part.startswith("/"):
        return "an absolute path: link relative to the page"
    dest = (page.path.parent / path_part).resolve() if path_part else page.path
    try:
        dest.relative_to(ROOT)
    except ValueError:
        return "leads outside the repository"
    if not dest.exists():
        return f"no such file or folder: {dest.relative_to(ROOT).as_posix()}"
    if anchor:
        if dest.suffix != ".md" or not dest.is_file():
            return f"an anchor into {dest.relative_to(ROOT).as_posix()}, which is not a page"
        if anchor not in read_page(dest).anchors:
            return f"no heading #{anchor} in {dest.relative_to(ROOT).as_posix()}"
    return None


def path_problem(text: str) -> str | None:
    """Why ``text`` (a repository path named in code) names nothing, or None."""
    if "*" in text:
        return None if any(ROOT.glob(text)) else f"nothing matches {text}"
    found = ROOT / text.rstrip("/")
    if not found.exists():
        return f"no such file or folder: {text}"
    if text.endswith("/") and not found.is_dir():
        return f"not a folder: {text}"
    return None


@cache
def defined_names(module: Path) -> frozenset[str]:
    """The names a module defines at its top level, imports and ``__all__`` included."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                value = node.value
                if isinstance(value, ast.List | ast.Tuple):
                    names |= {e.value for e in value.elts if isinstance(e, ast.Constant)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return frozenset(names)


def module_problem(dotted: str) -> str | None:
    """Why ``dotted`` (``package.module[.name]``) names no module or name, or None."""
    parts = dotted.split(".")
    folder = ROOT / parts[0]
    for i, part in enumerate(parts[1:], 1):
        if (folder / part / "__init__.py").is_file():
            folder = folder / part
            continue
        if (folder / f"{part}.py").is_file():
            rest = parts[i + 1 :]
            module = folder / f"{part}.py"
            if rest and rest[0] not in defined_names(module):
                return f"{'.'.join(parts[: i + 1])} defines no {rest[0]}"
            return None
        if part in defined_names(folder / "__init__.py"):
            return None
        return f"no module or name {'.'.join(parts[: i + 1])}"
    return None


# ----- the tests ----------------------------------------------------------------------------


def _ids(paths: list[Path]) -> list[str]:
    return [p.relative_to(ROOT).as_posix() for p in paths]


@pytest.mark.parametrize("path", PAGES, ids=_ids(PAGES))
def test_every_link_leads_to_a_file_and_heading_that_exist(path: Path) -> None:
    page = read_page(path)
    found = list(page.links)
    problems = [
        f"{page.name}:{line}: ({target}) {why}"
        for line, target in found
        if (why := link_problem(page, target)) is not None
    ]
    assert found or path.stat().st_size < 2000, f"{page.name}: no links found: is the parser blind?"
    assert not problems, "links that lead nowhere:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", PAGES, ids=_ids(PAGES))
def test_every_source_path_and_module_named_in_code_exists(path: Path) -> None:
    page = read_page(path)
    problems = []
    for line, text in page.code:
        if _REPO_PATH.match(text):
            why = path_problem(text)
        elif _MODULE.match(text):
            why = module_problem(text)
        else:
            continue
        if why is not None:
            problems.append(f"{page.name}:{line}: `{text}`: {why}")
    assert not problems, "code that names what is not there:\n" + "\n".join(problems)


def test_the_readme_is_short_and_the_manual_lives_in_docs() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"
    assert any(t.startswith("docs/") for _, t in read_page(README).links)


def test_every_page_of_docs_is_in_its_table_of_contents() -> None:
    index = read_page(DOCS / "README.md")
    listed = {
        (DOCS / t.partition("#")[0]).resolve()
        for _, t in index.links
        if not _EXTERNAL.match(t) and t.partition("#")[0]
    }
    missing = [p.name for p in DOCS.glob("*.md") if p.name != "README.md" and p not in listed]
    assert not missing, f"docs/README.md does not list {missing}"


LONG_PAGES = [
    p
    for p in sorted(DOCS.glob("*.md"))
    if len(p.read_text(encoding="utf-8").splitlines()) > TOC_OVER_LINES
]


@pytest.mark.parametrize("path", LONG_PAGES, ids=_ids(LONG_PAGES))
def test_a_long_page_lists_its_sections(path: Path) -> None:
    page = read_page(path)
    own = {t.partition("#")[2] for _, t in page.links if t.startswith("#")}
    unlisted = [anchor for level, anchor in page.headings if level == 2 and anchor not in own]
    assert not unlisted, f"{page.name} ({len(page.lines)} lines) does not list #{unlisted}"


# ----- the README's figures -------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?![\w])")


def _numbers(text: str) -> list[str]:
    return [n.replace(",", "") for n in _NUMBER.findall(text)]


def _holds(quoted: str, measured: list[float]) -> bool:
    """``quoted`` is some measured number rounded to the quoted precision."""
    decimals = len(quoted.partition(".")[2])
    q = float(quoted)
    return any(abs(round(m, decimals) - q) < 10 ** (-decimals) / 2 for m in measured)


def test_the_readme_figures_are_in_the_bench_outputs_they_link() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.partition("\n## Figures\n")[2].partition("\n## ")[0]
    rows = [r for r in section.splitlines() if r.startswith("| ") and not r.startswith("| what")]
    assert len(rows) >= 5, "the README's figures table is gone"
    problems = []
    for row in rows:
        results = [
            ROOT / t
            for t in re.findall(r"\]\((bench/results/[^)#]+)\)", row)
            if (ROOT / t).is_file()
        ]
        assert results, f"a figure with no bench output linked: {row[:60]}"
        measured = [float(n) for f in results for n in _numbers(f.read_text(encoding="utf-8"))]
        claims = re.sub(r"\[[^\]]*\]\([^)]*\)", "", row)  # the link texts name files, not figures
        for quoted in _numbers(claims):
            if not _holds(quoted, measured):
                problems.append(f"{quoted} in: {row[:70]}...")
    assert not problems, "README figures its bench outputs do not hold:\n" + "\n".join(problems)


# ----- the slugs against GitHub's own examples ------------------------------------------------


def anchors(markdown: str) -> list[str]:
    """The heading anchors of a Markdown snippet, in order."""
    return [anchor for _, anchor in parse(ROOT / "snippet.md", markdown).headings]


def test_slugs_follow_github() -> None:
    # GitHub's documentation ("Section links") and github-slugger's fixtures.
    assert slug("This'll be a Helpful Section About the Greek Letter Θ!") == (
        "thisll-be-a-helpful-section-about-the-greek-letter-θ"
    )
    assert anchors("## This'll be a _Helpful_ Section About the Greek Letter Θ!") == [
        "thisll-be-a-helpful-section-about-the-greek-letter-θ"
    ]
    assert slug("heading with a - dash") == "heading-with-a---dash"
    assert slug("heading with an _ underscore") == "heading-with-an-_-underscore"
    assert slug("heading with a period.txt") == "heading-with-a-periodtxt"
    assert slug("exchange.bind_headers(exchange, routing [, bindCallback])") == (
        "exchangebind_headersexchange-routing--bindcallback"
    )
    assert slug("apostrophe’s should be trimmed") == "apostrophes-should-be-trimmed"
    assert slug("I ♥ unicode") == "i--unicode"
    assert slug("en–dash") == "endash"
    assert slug("😄 unicode emoji") == "-unicode-emoji"
    assert slug("Привет non-latin 你好") == "привет-non-latin-你好"
    assert slug("a² ½ b") == "a--b"  # other numbers go, the spaces stay
    assert anchors("### The live websocket `/ws/live`") == ["the-live-websocket-wslive"]
    assert anchors("# [Linked](x.md) **bold** ![img](i.png) <b>tag</b>") == ["linked-bold--tag"]
    unique = Slugger()
    assert [unique(t) for t in ("echo", "echo", "echo 1", "echo-1", "echo")] == [
        "echo",
        "echo-1",
        "echo-1-1",
        "echo-1-2",
        "echo-2",
    ]


def test_the_checks_catch_what_they_are_for(tmp_path: Path) -> None:
    page_path = DOCS / "planning.md"
    page = read_page(page_path)
    assert link_problem(page, "../planner/edits.py") is None
    assert link_problem(page, "../planner/no_such_module.py") is not None
    assert link_problem(page, "simulation.md#simulating-a-mission") is None
    assert "no heading" in (link_problem(page, "simulation.md#no-such-section") or "")
    assert "no heading" in (link_problem(page, "#no-such-section") or "")
    assert link_problem(page, "https://example.org/x") is None
    assert path_problem("planner/edits.py") is None
    assert path_problem("planner/scenario_nowhere.py") is not None
    assert path_problem("bench/results/top_*.json") is None
    assert module_problem("executive.session.run_mission") is None
    assert module_problem("planner.team_search") is None
    assert module_problem("executive.engines.make_engine") is None
    assert module_problem("executive.session.no_such_function") is not None
    assert module_problem("executive.nowhere.thing") is not None
    # links inside code are not links; a multi-line image is one link
    sample = parse(
        tmp_path / "sample.md",
        "# T\n\n```sh\n[x](nowhere.md)\n```\n\n`[y](nowhere.md)`\n\n"
        "![a long\nalt](img.png) [ref][r]\n\n| a | [in a table](t.md#x) |\n|---|---|\n\n"
        '<a id="here"></a>\n\n[r]: r.md\n',
    )
    assert [t for _, t in sample.links] == ["img.png", "r.md", "t.md#x"]
    assert [line for line, _ in sample.links] == [9, 10, 12]
    assert "here" in sample.anchors and "t" in sample.anchors
    assert (4, "nowhere.md") in sample.code and (7, "[y](nowhere.md)") in sample.code
