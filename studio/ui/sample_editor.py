"""The samples of a workspace: a list, a JSON editor with live checks, and a structured view.

The list is a model over the workspace's sample files. The editor checks the text as the user
types (debounced, off the GUI thread): a JSON syntax error is marked at its line and column, and
every finding of the sample's contract is listed with its JSON path; activating one moves the
cursor to the value (:mod:`studio.core.json.locate` finds it in the text). A second tab shows the
request as a tree: messages with their roles and blocks, tools, options (for step and chain
samples, what those contracts hold).

Speed. Reading, parsing and checking happen in a worker thread (``EngineBridge.call``; the parse
goes in pieces, so the worker never holds the interpreter for long). The GUI thread only moves
the text into the editor's document, in slices of a few hundred kilobytes between which the event
loop runs, with painting off until the last one. A large document is coloured only where it is
on screen, its parsed value is not kept unless its structure is on screen, and the tree is filled
only as its branches are opened.

Each open sample has its own editor, so switching samples never lays a text out again, and
unsaved edits (with their undo history) stay while the user looks at another sample; the list
marks those samples. A save is atomic and only happens when
the text is JSON; contract findings do not stop it, but the status line says that they remain.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRect,
    QRegularExpression,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QAction,
    QColor,
    QFont,
    QFontDatabase,
    QKeyEvent,
    QKeySequence,
    QPainter,
    QPaintEvent,
    QPalette,
    QRegularExpressionValidator,
    QResizeEvent,
    QStandardItem,
    QStandardItemModel,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QMessageBox,
    QPlainTextEdit,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTabWidget,
    QTextEdit,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from studio.core.chain.sample import (
    ChainSample,
    parse_chain_sample,
)
from studio.core.findings import Finding, pointer
from studio.core.json.locate import (
    JsonTextError,
    line_columns,
    locate,
    locate_all,
    parse_json_in_pieces,
)
from studio.core.pre_llm.config import MAIN
from studio.core.pre_llm.sample import pre_llm_sample_findings
from studio.core.step.sample import StepSample, parse_step_sample
from studio.core.workspace.atomic_write import write_atomically
from studio.core.workspace.folder import SAMPLES_DIR, Workspace
from studio.ui.engine_bridge import EngineBridge
from studio.ui.json_highlighter import JsonHighlighter, JsonTheme, VisibleHighlighter, json_theme

AnyIndex = QModelIndex | QPersistentModelIndex
Stamp = tuple[int, int, int]

# A document with more lines or characters than this is coloured only where it is on screen.
LARGE_LINES = 4_000
LARGE_CHARS = 400_000
# Text goes into a document in slices of this many characters, the event loop running between.
FILL_SLICE = 256 * 1024
# At most this many problems are listed and marked.
MAX_PROBLEMS = 500
MAX_MARKS = 200
CHECK_DELAY_MS = 250
CHECK_DELAY_LARGE_MS = 700

CONTRACT_LABELS = {"pre_llm": "pre-LLM request", "step": "step preparation", "chain": "chain"}
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,63}")
NAME_RULE = "letters, digits, '.', '_' and '-', starting with a letter, digit or '_' (at most 64)"
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


# =============================================================================================
# Pure helpers: templates, names, checks, file I/O. They run in worker threads and touch no Qt.


TEMPLATES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "pre_llm": (
        "Pre-LLM request",
        "new-request",
        {
            "description": "A new pre-LLM sample: the request the hook receives.",
            "loop": MAIN,
            "request": {
                "system": "You are a helpful assistant.",
                "messages": [{"role": "user", "content": "Hello!"}],
                "tools": [
                    {
                        "name": "search",
                        "description": "Search the knowledge base",
                        "input_schema": {
                            "type": "object",
                            "properties": {"query": {"type": "string"}},
                        },
                    }
                ],
                "options": {"maxTokens": 1024},
            },
        },
    ),
    "step": (
        "Step preparation",
        "new-step",
        {
            "contract": "step",
            "description": "A new step-preparation sample: the first step of a run.",
            "baseline": {
                "contributors": ["persona"],
                "tools": ["search"],
                "activeTools": ["search"],
                "model": "standard-model",
            },
            "step": {
                "index": 0,
                "reason": "initial",
                "input": {},
                "messages": [{"role": "user", "content": "Hello!"}],
            },
            "resources": [],
        },
    ),
    "chain": (
        "Chain",
        "new-chain",
        {
            "contract": "chain",
            "description": "A new chain sample: the pre-model context and the model's answers.",
            "context": {
                "messages": [{"role": "user", "content": "Hello!"}],
                "model": "default-model",
                "modelProfile": None,
                "tools": [],
                "systemPrompt": "You are a helpful assistant.",
                "state": {},
            },
            "responses": [{"role": "assistant", "content": "Hello! How can I help?"}],
        },
    ),
}


def template_text(contract: str) -> str:
    """A minimal valid sample of ``contract`` as the text of a new file."""
    return json.dumps(TEMPLATES[contract][2], indent=2, ensure_ascii=False) + "\n"


def clean_sample_name(name: str) -> str:
    name = name.strip()
    return name[: -len(".json")] if name.lower().endswith(".json") else name


def sample_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a sample file, or None."""
    if not name:
        return "a sample needs a name"
    if _NAME.fullmatch(name) is None:
        return f"a sample name may hold {NAME_RULE}"
    return None


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a sample's text, with where it is (1-based lines and columns)."""

    severity: str
    message: str
    pointer: str | None  # None for a JSON syntax error
    line: int
    column: int
    end_line: int
    end_column: int
    exact: bool = True
    rule: str = ""


@dataclass(frozen=True)
class SampleCheck:
    contract: str | None
    document: Any  # the parsed value; None when the text is not JSON
    valid_json: bool
    problems: tuple[Problem, ...]
    total: int  # how many problems there are (more than listed when over MAX_PROBLEMS)

    @property
    def errors(self) -> int:
        return sum(1 for p in self.problems if p.severity == "error")


def contract_findings(document: Any) -> tuple[str | None, list[Finding]]:
    """The sample's contract and every finding of it, as the runner would see the sample."""
    rule = "workspace.sample"
    if not isinstance(document, dict):
        return None, [Finding((), "a sample must be a JSON object", rule)]
    contract = document.get("contract", "pre_llm")
    if contract == "pre_llm":
        return contract, pre_llm_sample_findings(document)
    if contract == "step":
        step = parse_step_sample(document)
        return contract, list(step.warnings) if isinstance(step, StepSample) else step
    if contract == "chain":
        chain = parse_chain_sample(document)
        return contract, list(chain.warnings) if isinstance(chain, ChainSample) else chain
    shown = json.dumps(contract)[:40] if isinstance(contract, str) else type(contract).__name__
    return None, [
        Finding(("contract",), f'contract must be "pre_llm", "step" or "chain", got {shown}', rule)
    ]


def check_sample_text(text: str, keep_document: bool = True) -> SampleCheck:
    """Parse and check a sample's text; every problem comes with its place in the text.

    Without ``keep_document`` the parsed value is dropped here: a large document that nobody
    looks at should not live on in the GUI's heap (where every full garbage collection walks it).
    """
    try:
        document = parse_json_in_pieces(text)
    except JsonTextError as exc:
        message = exc.message
        before = text[: exc.offset].rstrip()
        if message.startswith("Expecting ',' delimiter") and "\n" in text[len(before) : exc.offset]:
            # The parser stops at the next line; the comma is missing at the end of the one before.
            message += f": is a ',' missing at the end of line {before.count(chr(10)) + 1}?"
        problem = Problem(
            "error", message, None, exc.line, exc.column, exc.line, exc.column + 1, rule="json"
        )
        return SampleCheck(None, None, False, (problem,), 1)
    contract, findings = contract_findings(document)
    shown = findings[:MAX_PROBLEMS]
    places = locate_all(text, [f.path for f in shown])
    positions = line_columns(text, [p.start for p in places] + [p.end for p in places])
    problems = []
    for k, (finding, place) in enumerate(zip(shown, places, strict=True)):
        (line, column), (end_line, end_column) = positions[k], positions[len(shown) + k]
        problems.append(
            Problem(
                finding.severity,
                finding.message,
                finding.pointer,
                line,
                column,
                end_line,
                end_column,
                place.exact,
                finding.rule,
            )
        )
    kept = document if keep_document else None
    del document
    return SampleCheck(contract, kept, True, tuple(problems), len(findings))


def locate_pointer(text: str, where: str) -> tuple[int, int, int, int, bool]:
    """Where the value at a JSON pointer is: ``(line, col, end_line, end_col, exact)``."""
    place = locate(text, where)
    (line, column), (end_line, end_column) = line_columns(text, [place.start, place.end])
    return line, column, end_line, end_column, place.exact


def _let_go(_values: Any) -> None:
    """Hold the values a moment, so that this thread, not the GUI thread, lets go of them last
    and frees them."""
    time.sleep(0.25)


def file_stamp(path: Path) -> Stamp | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)


@dataclass(frozen=True)
class LoadedSample:
    text: str
    crlf: bool
    stamp: Stamp | None
    digest: str
    lines: int
    check: SampleCheck


class SampleReadError(Exception):
    pass


def is_large(text: str, lines: int) -> bool:
    return lines > LARGE_LINES or len(text) > LARGE_CHARS


def load_sample_file(path: Path, keep_document: bool = False) -> LoadedSample:
    """Read, decode and check a sample file (in a worker thread). The parsed value is kept for
    a document of ordinary size, or when ``keep_document``."""
    stamp = file_stamp(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SampleReadError(f"{SAMPLES_DIR}/{path.name} no longer exists") from None
    except OSError as exc:
        raise SampleReadError(
            f"{SAMPLES_DIR}/{path.name} cannot be read ({exc.strerror or exc})"
        ) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SampleReadError(
            f"{SAMPLES_DIR}/{path.name} is not UTF-8 text (byte {exc.start} cannot be decoded)"
        ) from None
    crlf = "\r\n" in text
    if crlf:
        text = text.replace("\r\n", "\n")
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    lines = text.count("\n") + 1
    keep = keep_document or not is_large(text, lines)
    return LoadedSample(text, crlf, stamp, digest, lines, check_sample_text(text, keep))


def disk_state(path: Path) -> tuple[Stamp | None, str]:
    """The file's stamp and the digest of its bytes (in a worker thread); raises when it is gone."""
    stamp = file_stamp(path)
    data = path.read_bytes()
    return stamp, hashlib.blake2b(data, digest_size=16).hexdigest()


@dataclass(frozen=True)
class SavedSample:
    stamp: Stamp | None
    digest: str
    check: SampleCheck


def save_sample_text(path: Path, text: str, crlf: bool, keep_document: bool = True) -> SavedSample:
    """Check the text and, when it is JSON, replace the file with it atomically."""
    check = check_sample_text(text, keep_document)
    if not check.valid_json:
        return SavedSample(None, "", check)
    data = (text.replace("\n", "\r\n") if crlf else text).encode("utf-8")
    write_atomically(path, data)
    return SavedSample(file_stamp(path), hashlib.blake2b(data, digest_size=16).hexdigest(), check)


def create_sample_file(path: Path, data: bytes) -> None:
    """A new file at ``path`` holding ``data``; never replaces an existing file."""
    with open(path, "xb"):
        pass  # claims the name: a second creator gets FileExistsError
    try:
        write_atomically(path, data)
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def rename_sample_file(old: Path, new: Path) -> None:
    """Move ``old`` to ``new``; never replaces an existing file."""
    try:
        os.link(old, new)  # fails with FileExistsError when the name is taken
    except FileExistsError:
        raise
    except OSError:
        if new.exists():
            raise FileExistsError(new) from None
        os.rename(old, new)
        return
    os.unlink(old)


# ---- the structured view, as plain data --------------------------------------------------


@dataclass
class Entry:
    """A row of the structured view; ``children`` is computed when the row is opened."""

    label: str
    detail: str = ""
    pointer: str | None = None
    children: Callable[[], list[Entry]] | None = None


def short(value: Any, limit: int = 90) -> str:
    """A one-line glimpse of a value that never reads more of it than it shows."""
    if isinstance(value, str):
        head = value[: limit * 2]
        text = " ".join(head.split())
        if len(text) > limit or len(value) > len(head):
            return json.dumps(text[:limit], ensure_ascii=False)[:-1] + '…"'
        return json.dumps(text, ensure_ascii=False)
    if isinstance(value, dict):
        keys = list(itertools.islice(value, 6))
        more = ", …" if len(value) > len(keys) else ""
        return "{" + ", ".join(keys) + more + "}" if keys else "{}"
    if isinstance(value, list):
        return f"[{len(value)} item{'s' if len(value) != 1 else ''}]"
    return json.dumps(value)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _at(base: str, *parts: str | int) -> str:
    return base + pointer(parts)


def json_entries(value: Any, at: str) -> list[Entry]:
    """Any JSON value as a generic tree."""
    if isinstance(value, dict):
        items: Iterable[tuple[str | int, Any]] = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return []
    out = []
    for key, item in items:
        here = _at(at, key)
        opens = isinstance(item, dict | list) and bool(item)
        out.append(
            Entry(
                str(key),
                short(item),
                here,
                (lambda v=item, h=here: json_entries(v, h)) if opens else None,
            )
        )
    return out


def _block_detail(block: Any) -> tuple[str, str]:
    if not isinstance(block, dict):
        return "?", short(block)
    kind = block.get("type")
    label = kind if isinstance(kind, str) else "?"
    if kind == "text":
        return label, short(block.get("text"))
    if kind == "thinking":
        return label, short(block.get("thinking"))
    if kind == "tool_use":
        return label, f"{block.get('name')} {short(block.get('input'), 60)}  id {block.get('id')}"
    if kind == "tool_result":
        flag = "  (error)" if block.get("is_error") else ""
        return label, f"for {block.get('tool_use_id')}: {short(block.get('content'), 60)}{flag}"
    for key in ("image_url", "input_audio", "video_url"):
        if key in block:
            return label, short(block[key], 60)
    return label, short(block)


def _content_detail(content: Any) -> str:
    if isinstance(content, list):
        kinds = [b.get("type", "?") if isinstance(b, dict) else "?" for b in content[:6]]
        more = ", …" if len(content) > len(kinds) else ""
        return f"{_plural(len(content), 'block')}: {', '.join(map(str, kinds))}{more}"
    return short(content)


def _message_entries(messages: Any, at: str) -> list[Entry]:
    if not isinstance(messages, list):
        return []
    out = []
    for i, message in enumerate(messages):
        here = _at(at, i)
        if not isinstance(message, dict):
            out.append(Entry(f"{i}", short(message), here))
            continue
        role = message.get("role")
        content = message.get("content")
        detail = _content_detail(content)
        calls = message.get("toolCalls") or (message.get("metadata") or {}).get("toolCalls")
        if isinstance(calls, list) and calls:
            names = ", ".join(str(c.get("name")) for c in calls[:4] if isinstance(c, dict))
            detail += f"  · calls {names}"
        children = None
        if isinstance(content, list) and content:
            children = partial(_block_entries, content, _at(here, "content"))
        out.append(Entry(f"{i}  {role}", detail, here, children))
    return out


def _block_entries(blocks: list[Any], at: str) -> list[Entry]:
    out = []
    for j, block in enumerate(blocks):
        label, detail = _block_detail(block)
        here = _at(at, j)
        opens = isinstance(block, dict) and bool(block)
        out.append(
            Entry(
                label, detail, here, (lambda b=block, h=here: json_entries(b, h)) if opens else None
            )
        )
    return out


def _tool_entries(tools: Any, at: str) -> list[Entry]:
    if not isinstance(tools, list):
        return []
    out = []
    for i, tool in enumerate(tools):
        here = _at(at, i)
        if isinstance(tool, dict):
            schema = tool.get("input_schema")
            opens = isinstance(schema, dict) and bool(schema)
            out.append(
                Entry(
                    str(tool.get("name")),
                    short(tool.get("description"), 70),
                    here,
                    (lambda s=schema, h=here: json_entries(s, _at(h, "input_schema")))
                    if opens
                    else None,
                )
            )
        else:
            out.append(Entry(short(tool, 40), "", here))
    return out


def _list_entry(
    label: str, value: Any, at: str, word: str, make: Callable[[], list[Entry]]
) -> Entry:
    if not isinstance(value, list):
        return Entry(label, short(value), at)
    return Entry(label, _plural(len(value), word), at, make if value else None)


def _pre_llm_entries(document: dict[str, Any]) -> list[Entry]:
    out = []
    if "description" in document:
        out.append(Entry("Description", short(document["description"]), "/description"))
    out.append(Entry("Loop", str(document.get("loop", f"{MAIN} (default)")), "/loop"))
    request = document.get("request")
    if not isinstance(request, dict):
        out.append(Entry("Request", short(request) if "request" in document else "missing"))
        return out
    if "system" in request:
        out.append(Entry("System", short(request["system"]), "/request/system"))
    messages = request.get("messages")
    out.append(
        _list_entry(
            "Messages",
            messages,
            "/request/messages",
            "message",
            lambda: _message_entries(messages, "/request/messages"),
        )
    )
    tools = request.get("tools")
    out.append(
        _list_entry(
            "Tools", tools, "/request/tools", "tool", lambda: _tool_entries(tools, "/request/tools")
        )
    )
    options = request.get("options")
    if isinstance(options, dict):
        out.append(
            Entry(
                "Options",
                ", ".join(f"{k} {short(v, 20)}" for k, v in itertools.islice(options.items(), 4))
                or "none",
                "/request/options",
                (lambda: json_entries(options, "/request/options")) if options else None,
            )
        )
    elif "options" in request:
        out.append(Entry("Options", short(options), "/request/options"))
    return out


def _contributor_entries(contributors: Any, at: str) -> list[Entry]:
    if not isinstance(contributors, list):
        return []
    out = []
    for i, item in enumerate(contributors):
        here = _at(at, i)
        if isinstance(item, str):
            out.append(Entry(item, "context", here))
            continue
        if not isinstance(item, dict):
            out.append(Entry(short(item, 40), "", here))
            continue
        bits = [str(item.get("kind", "context"))]
        if item.get("protected"):
            bits.append("protected")
        tools = item.get("tools")
        if isinstance(tools, list) and tools:
            bits.append("tools " + ", ".join(map(str, tools[:5])))
        children = item.get("children")
        out.append(
            Entry(
                str(item.get("id")),
                " · ".join(bits),
                here,
                (lambda c=children, h=here: _contributor_entries(c, _at(h, "children")))
                if isinstance(children, list) and children
                else None,
            )
        )
    return out


def _names(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(map(str, value[:12])) + (", …" if len(value) > 12 else "") or "none"
    return short(value)


def _step_entries(document: dict[str, Any]) -> list[Entry]:
    out = []
    if "description" in document:
        out.append(Entry("Description", short(document["description"]), "/description"))
    baseline = document.get("baseline")
    if isinstance(baseline, dict):
        contributors = baseline.get("contributors")

        def baseline_entries() -> list[Entry]:
            rows = [
                _list_entry(
                    "Contributors",
                    contributors,
                    "/baseline/contributors",
                    "contributor",
                    lambda: _contributor_entries(contributors, "/baseline/contributors"),
                ),
                Entry("Tools", _names(baseline.get("tools")), "/baseline/tools"),
                Entry("Active tools", _names(baseline.get("activeTools")), "/baseline/activeTools"),
                Entry("Model", short(baseline.get("model")), "/baseline/model"),
            ]
            if "inputBudget" in baseline:
                rows.append(
                    Entry("Input budget", short(baseline["inputBudget"]), "/baseline/inputBudget")
                )
            return rows

        count = len(contributors) if isinstance(contributors, list) else 0
        out.append(
            Entry(
                "Baseline",
                f"{_plural(count, 'contributor')}, tools {_names(baseline.get('tools'))}",
                "/baseline",
                baseline_entries,
            )
        )
    else:
        out.append(Entry("Baseline", short(baseline) if "baseline" in document else "missing"))
    step = document.get("step")
    if isinstance(step, dict):
        messages = step.get("messages", [])

        def step_entries() -> list[Entry]:
            rows = [
                Entry("Index", short(step.get("index")), "/step/index"),
                Entry("Reason", short(step.get("reason")), "/step/reason"),
                Entry("Input", short(step.get("input", {})), "/step/input"),
                _list_entry(
                    "Messages",
                    messages,
                    "/step/messages",
                    "message",
                    lambda: _message_entries(messages, "/step/messages"),
                ),
            ]
            rows.append(Entry("Stats", "given" if "stats" in step else "derived from the index"))
            return rows

        out.append(
            Entry(
                "Step",
                f"index {step.get('index')} · {step.get('reason')} · "
                f"{_plural(len(messages) if isinstance(messages, list) else 0, 'message')}",
                "/step",
                step_entries,
            )
        )
    else:
        out.append(Entry("Step", short(step) if "step" in document else "missing"))
    resources = document.get("resources", [])
    if isinstance(resources, list):

        def resource_entries() -> list[Entry]:
            rows = []
            for i, item in enumerate(resources):
                here = _at("/resources", i)
                if isinstance(item, dict):
                    detail = (
                        f"fails: {item['failure']}"
                        if "failure" in item
                        else short(item.get("value"))
                    )
                    rows.append(Entry(str(item.get("identity")), detail, here))
                else:
                    rows.append(Entry(short(item, 40), "", here))
            return rows

        out.append(
            Entry(
                "Resources",
                _plural(len(resources), "resource"),
                "/resources",
                resource_entries if resources else None,
            )
        )
    return out


def _chain_entries(document: dict[str, Any]) -> list[Entry]:
    out = []
    if "description" in document:
        out.append(Entry("Description", short(document["description"]), "/description"))
    context = document.get("context")
    if isinstance(context, dict):
        messages = context.get("messages")
        tools = context.get("tools")

        def context_entries() -> list[Entry]:
            rows = [
                Entry("Model", short(context.get("model")), "/context/model"),
                Entry("System prompt", short(context.get("systemPrompt")), "/context/systemPrompt"),
                _list_entry(
                    "Messages",
                    messages,
                    "/context/messages",
                    "message",
                    lambda: _message_entries(messages, "/context/messages"),
                ),
                _list_entry(
                    "Tools",
                    tools,
                    "/context/tools",
                    "tool",
                    lambda: _tool_entries(tools, "/context/tools"),
                ),
            ]
            profile = context.get("modelProfile")
            rows.append(
                Entry(
                    "Model profile",
                    short(profile),
                    "/context/modelProfile",
                    (lambda: json_entries(profile, "/context/modelProfile"))
                    if isinstance(profile, dict) and profile
                    else None,
                )
            )
            state = context.get("state")
            rows.append(
                Entry(
                    "State",
                    short(state),
                    "/context/state",
                    (lambda: json_entries(state, "/context/state"))
                    if isinstance(state, dict) and state
                    else None,
                )
            )
            return rows

        count = len(messages) if isinstance(messages, list) else 0
        out.append(
            Entry(
                "Context",
                f"model {context.get('model')} · {_plural(count, 'message')}",
                "/context",
                context_entries,
            )
        )
    else:
        out.append(Entry("Context", short(context) if "context" in document else "missing"))
    responses = document.get("responses")
    out.append(
        _list_entry(
            "Responses",
            responses,
            "/responses",
            "scripted response",
            lambda: _message_entries(responses, "/responses"),
        )
    )
    return out


def structure_entries(contract: str | None, document: Any) -> list[Entry]:
    """The top rows of the structured view of a sample; deeper rows come when opened."""
    if not isinstance(document, dict):
        return [Entry("(not an object)", short(document), "")]
    if contract == "pre_llm":
        return _pre_llm_entries(document)
    if contract == "step":
        return _step_entries(document)
    if contract == "chain":
        return _chain_entries(document)
    return json_entries(document, "")


# =============================================================================================
# Models


class SampleListModel(QAbstractListModel):
    """The workspace's sample files by name; unsaved samples marked. Renaming in place goes
    through ``rename(old, new) -> bool``, which does the work on disk."""

    NAME_ROLE = Qt.ItemDataRole.UserRole + 1

    def __init__(self, rename: Callable[[str, str], bool], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._names: list[str] = []
        self._modified: set[str] = set()
        self._rename = rename

    @property
    def names(self) -> list[str]:
        return list(self._names)

    def row_of(self, name: str) -> int:
        try:
            return self._names.index(name)
        except ValueError:
            return -1

    def set_names(self, names: Sequence[str]) -> None:
        """Change the rows to ``names`` (in the same order as before), row by row."""
        wanted = list(names)
        keep = set(wanted)
        for row in range(len(self._names) - 1, -1, -1):
            if self._names[row] not in keep:
                self.beginRemoveRows(QModelIndex(), row, row)
                del self._names[row]
                self.endRemoveRows()
        have = set(self._names)
        for row, name in enumerate(wanted):
            if name not in have:
                self.beginInsertRows(QModelIndex(), row, row)
                self._names.insert(row, name)
                self.endInsertRows()
        if self._names != wanted:  # a different order: not expected, but never show a wrong list
            self.beginResetModel()
            self._names = wanted
            self.endResetModel()

    def set_modified(self, names: Iterable[str]) -> None:
        new = set(names)
        changed = new ^ self._modified
        self._modified = new
        for name in changed:
            row = self.row_of(name)
            if row >= 0:
                index = self.index(row)
                self.dataChanged.emit(index, index)

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._names)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._names):
            return None
        name = self._names[index.row()]
        modified = name in self._modified
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{name}  ●" if modified else name
        if role in (Qt.ItemDataRole.EditRole, self.NAME_ROLE):
            return name
        if role == Qt.ItemDataRole.ToolTipRole:
            note = " (unsaved changes)" if modified else ""
            return f"{SAMPLES_DIR}/{name}.json{note}\nF2 renames, Delete deletes"
        if role == Qt.ItemDataRole.FontRole and modified:
            font = QFont()
            font.setItalic(True)
            return font
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEditable

    def setData(self, index: AnyIndex, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        old = self._names[index.row()]
        new = clean_sample_name(str(value))
        if new == old:
            return False
        return self._rename(old, new)


class _NameDelegate(QStyledItemDelegate):
    """Edits a sample name with a line edit that only accepts what a name may hold."""

    def createEditor(
        self, parent: QWidget, option: QStyleOptionViewItem, index: AnyIndex
    ) -> QWidget:
        editor = QLineEdit(parent)
        editor.setValidator(
            QRegularExpressionValidator(
                QRegularExpression(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,63}"), editor
            )
        )
        editor.setToolTip(f"A sample name: {NAME_RULE}")
        return editor


class StructureModel(QStandardItemModel):
    """The structured view: a read-only tree whose branches are filled when opened, a batch of
    rows at a time, so a request with thousands of messages costs nothing until it is looked at."""

    POINTER_ROLE = Qt.ItemDataRole.UserRole + 1
    LAZY_ROLE = Qt.ItemDataRole.UserRole + 2
    BATCH = 200

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lazy: dict[int, Callable[[], list[Entry]] | list[Entry]] = {}
        self._keys = itertools.count(1)
        self.setHorizontalHeaderLabels(["Item", "Detail"])

    def set_entries(self, entries: list[Entry]) -> None:
        self.removeRows(0, self.rowCount())
        self._lazy.clear()
        self._append(self.invisibleRootItem(), entries)

    def _append(self, parent: QStandardItem, entries: list[Entry]) -> None:
        for entry in entries:
            label = QStandardItem(entry.label)
            detail = QStandardItem(entry.detail)
            for item in (label, detail):
                item.setEditable(False)
                item.setData(entry.pointer, self.POINTER_ROLE)
                item.setToolTip(entry.detail if len(entry.detail) > 40 else (entry.pointer or ""))
            if entry.children is not None:
                key = next(self._keys)
                label.setData(key, self.LAZY_ROLE)
                self._lazy[key] = entry.children
            parent.appendRow([label, detail])

    def _key(self, parent: AnyIndex) -> int | None:
        if not parent.isValid() or parent.column() != 0:
            return None
        key = self.itemFromIndex(parent).data(self.LAZY_ROLE)
        return key if key in self._lazy else None

    def hasChildren(self, parent: AnyIndex = QModelIndex()) -> bool:  # noqa: B008
        return self._key(parent) is not None or super().hasChildren(parent)

    def canFetchMore(self, parent: AnyIndex) -> bool:
        return self._key(parent) is not None

    def fetchMore(self, parent: AnyIndex) -> None:
        key = self._key(parent)
        if key is None:
            return
        source = self._lazy[key]
        rows = source() if callable(source) else source
        batch, rest = rows[: self.BATCH], rows[self.BATCH :]
        if rest:
            self._lazy[key] = rest
        else:
            del self._lazy[key]
        self._append(self.itemFromIndex(parent), batch)


# =============================================================================================
# The JSON editor


class _Gutter(QWidget):
    def __init__(self, editor: JsonTextEdit) -> None:
        super().__init__(editor)
        self._editor = editor

    def sizeHint(self) -> QSize:
        return QSize(self._editor.gutter_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:
        self._editor.paint_gutter(self, event)


class JsonTextEdit(QPlainTextEdit):
    """A monospace plain-text editor with line numbers; Ctrl+S asks for a save while it has the
    focus (ahead of any window-wide Save shortcut)."""

    save_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setTabStopDistance(self.fontMetrics().horizontalAdvance(" ") * 2)
        self.error_lines: dict[int, str] = {}  # 0-based line -> "error" | "warning"
        self.theme: JsonTheme = json_theme(self.palette())
        self.visible_highlighter = VisibleHighlighter(self, self.theme)
        self._reserved_lines = 1
        self._gutter = _Gutter(self)
        self.blockCountChanged.connect(self._on_block_count_changed)
        self.updateRequest.connect(self._on_update_request)
        self._on_block_count_changed(1)

    # ---- keys ----------------------------------------------------------------------------------
    def event(self, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and event.matches(QKeySequence.StandardKey.Save)
        ):
            event.accept()
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.matches(QKeySequence.StandardKey.Save):
            event.accept()
            self.save_requested.emit()
            return
        super().keyPressEvent(event)

    # ---- line numbers ------------------------------------------------------------------------
    def reserve_lines(self, lines: int) -> None:
        """Size the line numbers for ``lines`` from the start: a gutter that widens while a
        large text streams in would make the editor lay out everything again each time."""
        self._reserved_lines = lines
        self._on_block_count_changed(self.blockCount())

    def gutter_width(self) -> int:
        digits = max(3, len(str(max(self._reserved_lines, self.blockCount()))))
        return 10 + self.fontMetrics().horizontalAdvance("9") * digits

    def refresh_gutter(self) -> None:
        self._gutter.update()

    def _on_block_count_changed(self, _count: int) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _on_update_request(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        area = self.contentsRect()
        self._gutter.setGeometry(QRect(area.left(), area.top(), self.gutter_width(), area.height()))

    def paint_gutter(self, gutter: QWidget, event: QPaintEvent) -> None:
        painter = QPainter(gutter)
        palette = self.palette()
        base = palette.color(QPalette.ColorRole.Base)
        text = palette.color(QPalette.ColorRole.Text)
        painter.fillRect(event.rect(), palette.color(QPalette.ColorRole.AlternateBase))
        dim = QColor(
            (text.red() + base.red() * 2) // 3,
            (text.green() + base.green() * 2) // 3,
            (text.blue() + base.blue() * 2) // 3,
        )
        current = self.textCursor().blockNumber()
        block = self.firstVisibleBlock()
        number = block.blockNumber()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        bottom = top + round(self.blockBoundingRect(block).height())
        height = self.fontMetrics().height()
        width = gutter.width() - 5
        while block.isValid() and top <= event.rect().bottom():
            if block.isVisible() and bottom >= event.rect().top():
                mark = self.error_lines.get(number)
                if mark:
                    colour = self.theme.error if mark == "error" else self.theme.warning
                    painter.fillRect(0, top, 3, height, colour)
                    painter.setPen(colour)
                else:
                    painter.setPen(text if number == current else dim)
                painter.drawText(
                    0, top, width, height, Qt.AlignmentFlag.AlignRight, str(number + 1)
                )
            block = block.next()
            top = bottom
            bottom = top + round(self.blockBoundingRect(block).height())
            number += 1
        painter.end()


# =============================================================================================
# The widget


@dataclass(eq=False)
class _Open:
    """A sample shown in the editor, or kept because it has unsaved edits."""

    name: str
    path: Path
    view: JsonTextEdit | None = None  # its own editor, kept with its undo history
    highlighter: JsonHighlighter | None = None
    large: bool = False
    crlf: bool = False
    stamp: Stamp | None = None
    digest: str = ""
    check: SampleCheck | None = None
    checked_revision: int = -1
    shown_document: Any = None  # what the structured view shows: the last text that was JSON
    shown_contract: str | None = None
    notice: str | None = None  # "changed" | "deleted": the file changed while edits are unsaved
    failed: str | None = None  # why it could not be opened
    saving: bool = False
    loading: bool = False  # its text is still going into the editor

    @property
    def document(self) -> QTextDocument | None:
        """The text, once it is all in the editor."""
        return None if self.view is None or self.loading else self.view.document()


@dataclass
class _Fill:
    opened: _Open
    loaded: LoadedSample
    view: JsonTextEdit
    at: int = 0
    keep_view: tuple[int, int] | None = None


class SampleEditor(QWidget):
    """Lists, creates, edits, checks and saves the samples of a workspace."""

    sample_selected = Signal(str)
    samples_changed = Signal()
    sample_saved = Signal(str)
    sample_opened = Signal(str)  # the sample's text is in the editor (after a load or reload)
    checked = Signal()  # the problems list shows the check of the current text

    def __init__(self, bridge: EngineBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self.workspace: Workspace | None = None
        self._tag = object()
        self._current: _Open | None = None
        self._drafts: dict[str, _Open] = {}
        self._load_serial = 0
        self._serials = itertools.count(1)
        self._fill: _Fill | None = None
        self._showing = False
        self._announcing = False
        self._structure_dirty = True
        self._theme = json_theme(self.palette())
        self._jump_marks: list[QTextEdit.ExtraSelection] = []
        self._problem_marks: list[QTextEdit.ExtraSelection] = []

        self._check_timer = QTimer(self)
        self._check_timer.setSingleShot(True)
        self._check_timer.timeout.connect(self._start_check)
        self._fill_timer = QTimer(self)
        self._fill_timer.setSingleShot(True)
        self._fill_timer.setInterval(0)
        self._fill_timer.timeout.connect(self._fill_step)

        self._build()
        self._show_nothing("Choose a sample, or create one with New.")

        bridge.work_finished.connect(self._on_work_finished)

    # ---- construction ------------------------------------------------------------------------
    def _build(self) -> None:
        self.list_model = SampleListModel(self._rename_from_list, self)
        self.list_view = QListView()
        self.list_view.setObjectName("sampleList")
        self.list_view.setModel(self.list_model)
        self.list_view.setItemDelegate(_NameDelegate(self.list_view))
        self.list_view.setEditTriggers(QAbstractItemView.EditTrigger.EditKeyPressed)
        self.list_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list_view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list_view.setMinimumWidth(120)

        self.new_menu = QMenu("New", self)
        self.new_actions: dict[str, QAction] = {}
        for contract, (label, _base, _document) in TEMPLATES.items():
            action = self.new_menu.addAction(f"{label} sample")
            action.setStatusTip(f"Create a sample from the {label.lower()} template")
            action.triggered.connect(lambda _=False, c=contract: self._on_new(c))
            self.new_actions[contract] = action
        self.new_action = QAction("New", self)
        self.new_action.setShortcut(QKeySequence.StandardKey.New)
        self.new_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.new_action.triggered.connect(self._on_new_menu)
        self.duplicate_action = self._list_action("Duplicate", "Ctrl+D", self._on_duplicate)
        self.rename_action = self._list_action("Rename", "F2", self._on_rename)
        self.delete_action = self._list_action(
            "Delete", QKeySequence.StandardKey.Delete, self._on_delete
        )
        # Ctrl+S is taken by the editor itself while it has the focus (JsonTextEdit); here it is
        # only shown, so it never competes with the window's own Save shortcut.
        save_keys = QKeySequence(QKeySequence.StandardKey.Save).toString(
            QKeySequence.SequenceFormat.NativeText
        )
        self.save_action = QAction(f"Save\t{save_keys}", self)
        self.save_action.setToolTip(f"Save the sample ({save_keys} in the editor)")
        self.save_action.triggered.connect(self.save)
        self.addAction(self.new_action)

        # Two rows of two, so the list can be narrow next to the editor.
        buttons = QGridLayout()
        buttons.setSpacing(2)
        self.new_button = QToolButton()
        self.new_button.setObjectName("newSample")
        self.new_button.setText("New")
        self.new_button.setMenu(self.new_menu)
        self.new_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.new_button.setToolTip(
            f"Create a sample from a template ({self._keys(self.new_action)})"
        )
        tool_buttons = [self.new_button]
        for action in (self.duplicate_action, self.rename_action, self.delete_action):
            button = QToolButton()
            button.setDefaultAction(action)
            tool_buttons.append(button)
        for k, button in enumerate(tool_buttons):
            button.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
            buttons.addWidget(button, k // 2, k % 2)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        title = QLabel("Samples")
        title.setBuddy(self.list_view)
        left_layout.addWidget(title)
        left_layout.addWidget(self.list_view, 1)
        left_layout.addLayout(buttons)

        self.title = QLabel()
        self.title.setObjectName("sampleTitle")
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        bold = self.title.font()
        bold.setBold(True)
        self.title.setFont(bold)
        self.contract_label = QLabel()
        self.contract_label.setObjectName("sampleContract")
        self.save_button = QToolButton()
        self.save_button.setObjectName("saveSample")
        self.save_button.setText("Save")
        self.save_button.setToolTip(self.save_action.toolTip())
        self.save_button.clicked.connect(self.save)
        header = QHBoxLayout()
        header.addWidget(self.title)
        header.addWidget(self.contract_label)
        header.addStretch(1)
        header.addWidget(self.save_button)

        self.notice = QFrame()
        self.notice.setObjectName("sampleNotice")
        self.notice.setFrameShape(QFrame.Shape.StyledPanel)
        self.notice.setAutoFillBackground(True)
        self.notice_label = QLabel()
        self.notice_label.setWordWrap(True)
        self.reload_button = QToolButton()
        self.reload_button.setText("Reload from disk")
        self.reload_button.setToolTip("Discard your edits and show the file as it is now")
        self.keep_button = QToolButton()
        self.keep_button.setText("Keep my edits")
        self.keep_button.setToolTip("Keep editing; saving replaces the file on disk")
        notice_layout = QHBoxLayout(self.notice)
        notice_layout.setContentsMargins(8, 4, 4, 4)
        notice_layout.addWidget(self.notice_label, 1)
        notice_layout.addWidget(self.reload_button)
        notice_layout.addWidget(self.keep_button)
        self.notice.hide()

        # One editor per open sample: switching samples shows another editor instead of swapping
        # documents, which would lay a large text out again on the GUI thread.
        self.editor_stack = QStackedWidget()
        self.editor_stack.setObjectName("sampleEditors")
        self._blank = self._new_view()
        self._blank.setReadOnly(True)

        self.structure_model = StructureModel(self)
        self.structure = QTreeView()
        self.structure.setObjectName("sampleStructure")
        self.structure.setModel(self.structure_model)
        self.structure.setUniformRowHeights(True)
        self.structure.setAlternatingRowColors(True)
        self.structure.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.structure.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        self.structure.header().resizeSection(0, 200)
        self.structure.header().setStretchLastSection(True)
        self.structure_note = QLabel()
        self.structure_note.setObjectName("structureNote")
        self.structure_note.setWordWrap(True)
        self.structure_note.hide()
        structure_page = QWidget()
        structure_layout = QVBoxLayout(structure_page)
        structure_layout.setContentsMargins(0, 0, 0, 0)
        structure_layout.addWidget(self.structure_note)
        structure_layout.addWidget(self.structure, 1)

        self.tabs = QTabWidget()
        self.tabs.setObjectName("sampleTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.editor_stack, "JSON")
        self.tabs.addTab(structure_page, "Structure")

        self.problems_model = QStandardItemModel(self)
        self.problems_model.setHorizontalHeaderLabels(["Line", "Path", "Problem"])
        self.problems = QTreeView()
        self.problems.setObjectName("sampleProblems")
        self.problems.setModel(self.problems_model)
        self.problems.setRootIsDecorated(False)
        self.problems.setUniformRowHeights(True)
        self.problems.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.problems.setAlternatingRowColors(True)
        self.problems.header().setStretchLastSection(True)
        self.problems_title = QLabel("Problems")
        self.problems_title.setBuddy(self.problems)
        problems_page = QWidget()
        problems_layout = QVBoxLayout(problems_page)
        problems_layout.setContentsMargins(0, 2, 0, 0)
        problems_layout.addWidget(self.problems_title)
        problems_layout.addWidget(self.problems, 1)

        self.status = QLabel()
        self.status.setObjectName("sampleStatus")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.position = QLabel()
        self.position.setObjectName("cursorPosition")
        status_row = QHBoxLayout()
        status_row.addWidget(self.status, 1)
        status_row.addWidget(self.position)

        self.vertical = QSplitter(Qt.Orientation.Vertical)
        self.vertical.addWidget(self.tabs)
        self.vertical.addWidget(problems_page)
        self.vertical.setStretchFactor(0, 4)
        self.vertical.setStretchFactor(1, 1)
        self.vertical.setSizes([520, 110])

        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addLayout(header)
        right_layout.addWidget(self.notice)
        right_layout.addWidget(self.vertical, 1)
        right_layout.addLayout(status_row)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(left)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setSizes([170, 800])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.splitter)
        self._apply_theme_to_widgets()

        # The selection, not the current row: focusing the list makes a row current without
        # anyone having picked it.
        self.list_view.selectionModel().selectionChanged.connect(self._on_list_selection_changed)
        self.list_view.activated.connect(self._on_list_activated)
        self.list_view.customContextMenuRequested.connect(self._on_list_menu)
        self.problems.clicked.connect(self._on_problem_activated)
        self.problems.activated.connect(self._on_problem_activated)
        self.structure.activated.connect(self._on_structure_activated)
        self.structure.doubleClicked.connect(self._on_structure_activated)
        self.structure.expanded.connect(self._fit_structure)
        self.tabs.currentChanged.connect(self._on_tab_changed)
        self.reload_button.clicked.connect(self._on_reload_clicked)
        self.keep_button.clicked.connect(self._on_keep_clicked)
        self._update_actions()

    def _list_action(self, text: str, keys: Any, handler: Callable[[], None]) -> QAction:
        action = QAction(text, self)
        action.setShortcut(QKeySequence(keys))
        action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        action.setToolTip(f"{text} the selected sample ({self._keys(action)})")
        action.triggered.connect(handler)
        self.list_view.addAction(action)
        return action

    @staticmethod
    def _keys(action: QAction) -> str:
        return action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)

    def _new_view(self) -> JsonTextEdit:
        view = JsonTextEdit()
        view.setObjectName("sampleText")
        view.theme = self._theme
        view.visible_highlighter.set_theme(self._theme)
        view.textChanged.connect(self._on_text_changed)
        view.modificationChanged.connect(self._on_modification_changed)
        view.cursorPositionChanged.connect(self._on_cursor_moved)
        view.save_requested.connect(self.save)
        self.editor_stack.addWidget(view)
        return view

    def _drop_view(self, view: JsonTextEdit) -> None:
        if view is self._blank:
            return
        if self.editor_stack.currentWidget() is view:
            self.editor_stack.setCurrentWidget(self._blank)
        self.editor_stack.removeWidget(view)
        view.deleteLater()

    @property
    def editor(self) -> JsonTextEdit:
        """The editor on screen: the current sample's, or an empty one."""
        view = self.editor_stack.currentWidget()
        assert isinstance(view, JsonTextEdit)
        return view

    def _from_current(self) -> bool:
        """Whether the signal being handled comes from the editor on screen."""
        return self.sender() is self.editor_stack.currentWidget()

    # ---- the interface ----------------------------------------------------------------------
    def set_workspace(self, workspace: Workspace) -> None:
        """Show ``workspace``'s samples; unsaved edits of the previous workspace are dropped."""
        self._close_current()
        for draft in self._drafts.values():
            self._discard(draft)
        self._drafts.clear()
        self.workspace = workspace
        self.list_model.set_names([])
        self._refresh_list()
        self._show_nothing("Choose a sample, or create one with New.")

    def select_sample(self, name: str) -> None:
        """Open ``name`` (no signal: the caller chose it). Ignored while this editor is itself
        announcing a change of the samples, so an echo cannot switch away from the new one."""
        if self._announcing or self.workspace is None or not name:
            return
        self._select_row(name)
        self._open(name)

    def current_sample(self) -> str | None:
        return self._current.name if self._current is not None else None

    def is_modified(self) -> bool:
        """Whether any sample has unsaved edits (the one shown or one kept in the background)."""
        return bool(self.modified_samples())

    def modified_samples(self) -> list[str]:
        opened = list(self._drafts.values())
        if self._current is not None and self._current.name not in self._drafts:
            opened.append(self._current)
        return sorted(o.name for o in opened if o.document is not None and o.document.isModified())

    def on_files_changed(self, paths: set[str]) -> None:
        """Files changed outside the studio: the list follows the folder; the sample shown is
        reloaded when it has no unsaved edits, else a notice offers to reload it."""
        if self.workspace is None:
            return
        self._refresh_list()
        folder = self.workspace.root / SAMPLES_DIR
        touched = {os.path.realpath(p) for p in paths}
        everything = str(folder) in touched or str(self.workspace.root) in touched
        opened_ones = [*self._drafts.values(), self._current]
        for opened in {id(o): o for o in opened_ones if o is not None}.values():
            if opened.document is None:
                continue
            if not everything and os.path.realpath(opened.path) not in touched:
                continue
            self._check_disk(opened)

    # ---- list --------------------------------------------------------------------------------
    def _refresh_list(self) -> None:
        """The list follows the folder; a sample with unsaved edits stays even when its file is
        gone, so the edits can still be saved."""
        if self.workspace is None:
            return
        names = {s.name for s in self.workspace.samples()} | set(self.modified_samples())
        self._showing = True  # a row that goes away must not open its neighbour
        try:
            self.list_model.set_names(sorted(names, key=lambda n: f"{n}.json"))
        finally:
            self._showing = False
        self._update_markers()
        if self._current is not None:
            self._select_row(self._current.name)
        self._update_actions()

    def _select_row(self, name: str) -> None:
        row = self.list_model.row_of(name)
        selection = self.list_view.selectionModel()
        if row < 0:
            return
        index = self.list_model.index(row)
        if selection.currentIndex() != index:
            self._showing = True
            try:
                selection.setCurrentIndex(index, QItemSelectionModel.SelectionFlag.ClearAndSelect)
            finally:
                self._showing = False
        self.list_view.scrollTo(index)

    def _selected_name(self) -> str | None:
        rows = self.list_view.selectionModel().selectedRows()
        return self.list_model.data(rows[0], SampleListModel.NAME_ROLE) if rows else None

    def _on_list_selection_changed(self, *_: Any) -> None:
        self._update_actions()
        if self._showing:
            return
        name = self._selected_name()
        if name and name != self.current_sample():
            self._open(name)
            self.sample_selected.emit(name)

    def _on_list_activated(self, _index: QModelIndex) -> None:
        self.tabs.setCurrentIndex(0)
        self.editor.setFocus()

    def _on_list_menu(self, point: Any) -> None:
        menu = QMenu(self)
        menu.addMenu(self.new_menu)
        menu.addSeparator()
        for action in (self.duplicate_action, self.rename_action, self.delete_action):
            menu.addAction(action)
        menu.addSeparator()
        menu.addAction(self.save_action)
        menu.exec(self.list_view.viewport().mapToGlobal(point))

    def _on_new_menu(self) -> None:
        self.new_button.showMenu()

    def _update_actions(self) -> None:
        has = self._selected_name() is not None
        for action in (self.duplicate_action, self.rename_action, self.delete_action):
            action.setEnabled(has)
        self.new_button.setEnabled(self.workspace is not None)
        opened = self._current
        can_save = opened is not None and opened.document is not None and self._fill is None
        self.save_action.setEnabled(can_save)
        self.save_button.setEnabled(can_save)

    def _update_markers(self) -> None:
        self.list_model.set_modified(self.modified_samples())

    def _announce(self, selected: str | None) -> None:
        """Tell the window the samples changed and which one is selected now; ignore the
        ``select_sample`` echoes that come back while doing so."""
        self._announcing = True
        try:
            self.samples_changed.emit()
        finally:
            self._announcing = False
        if selected:
            self.sample_selected.emit(selected)

    def _sample_path(self, name: str) -> Path:
        assert self.workspace is not None
        return self.workspace.root / SAMPLES_DIR / f"{name}.json"

    def _free_name(self, base: str) -> str:
        taken = {n.lower() for n in self.list_model.names}
        if base.lower() not in taken and not self._sample_path(base).exists():
            return base
        for k in itertools.count(2):
            name = f"{base}-{k}"
            if name.lower() not in taken and not self._sample_path(name).exists():
                return name
        raise AssertionError("unreachable")

    # ---- create, duplicate, rename, delete ---------------------------------------------------
    def new_sample(self, contract: str, name: str | None = None) -> str | None:
        """Create a sample from ``contract``'s template; its name, or None when it failed."""
        if self.workspace is None:
            return None
        base = TEMPLATES[contract][1]
        name = clean_sample_name(name) if name else self._free_name(base)
        return self._create(name, template_text(contract).encode("utf-8"), "Created")

    def duplicate_sample(self, name: str | None = None) -> str | None:
        """Copy the saved file of ``name`` (the selected sample by default) to a new name."""
        name = name or self._selected_name()
        if self.workspace is None or not name:
            return None
        try:
            data = self._sample_path(name).read_bytes()
        except OSError as exc:
            self._say(f"{name} cannot be duplicated: {exc.strerror or exc}", error=True)
            return None
        copy = self._free_name(f"{name}-copy")
        note = ""
        if name in self.modified_samples():
            note = f" (the saved version; the unsaved edits stay in {name})"
        return self._create(copy, data, "Duplicated", note)

    def _create(self, name: str, data: bytes, verb: str, note: str = "") -> str | None:
        problem = sample_name_problem(name)
        if problem:
            self._say(problem, error=True)
            return None
        folder = self._sample_path(name).parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
            create_sample_file(self._sample_path(name), data)
        except FileExistsError:
            self._say(f"A sample named {name} exists already", error=True)
            return None
        except OSError as exc:
            self._say(f"{name} cannot be created: {exc.strerror or exc}", error=True)
            return None
        self._refresh_list()
        self._select_row(name)
        self._open(name)
        self._say(f"{verb} {SAMPLES_DIR}/{name}.json{note}")
        self._announce(name)
        return name

    def rename_sample(self, old: str, new: str) -> bool:
        """Rename ``old`` to ``new``; refuses a bad name and never replaces another sample."""
        if not self._rename_file(old, new):
            return False
        self._after_rename(old, clean_sample_name(new))
        return True

    def _rename_from_list(self, old: str, new: str) -> bool:
        """A rename typed in the list: the rows change once the list's editor has closed."""
        if not self._rename_file(old, new):
            return False
        QTimer.singleShot(0, self, lambda: self._after_rename(old, clean_sample_name(new)))
        return True

    def _rename_file(self, old: str, new: str) -> bool:
        if self.workspace is None:
            return False
        new = clean_sample_name(new)
        if new == old:
            return False
        problem = sample_name_problem(new)
        if problem:
            self._say(f"Not renamed: {problem}", error=True)
            return False
        same = new.lower() == old.lower()  # only the case changes
        taken = any(n.lower() == new.lower() for n in self.list_model.names)
        if not same and (taken or self._sample_path(new).exists()):
            self._say(f"Not renamed: a sample named {new} exists already", error=True)
            return False
        try:
            rename_sample_file(self._sample_path(old), self._sample_path(new))
        except FileExistsError:
            self._say(f"Not renamed: a sample named {new} exists already", error=True)
            return False
        except OSError as exc:
            self._say(f"Not renamed: {exc.strerror or exc}", error=True)
            return False
        return True

    def _after_rename(self, old: str, new: str) -> None:
        opened_ones = [*self._drafts.values(), self._current]
        for opened in {id(o): o for o in opened_ones if o is not None}.values():
            if opened.name == old:
                opened.name = new
                opened.path = self._sample_path(new)
                opened.stamp = file_stamp(opened.path)
        draft = self._drafts.pop(old, None)
        if draft is not None:
            self._drafts[new] = draft
        self._refresh_list()
        self._select_row(new)
        if self.current_sample() != new:
            self._open(new)
        self._show_title()
        self._say(f"Renamed {old} to {new}")
        self._announce(new)

    def delete_sample(self, name: str | None = None, confirm: bool = True) -> bool:
        name = name or self._selected_name()
        if self.workspace is None or not name:
            return False
        if confirm:
            unsaved = (
                " It has unsaved edits, which are lost too."
                if name in self.modified_samples()
                else ""
            )
            answer = QMessageBox.question(
                self,
                "Delete sample",
                f"Delete {SAMPLES_DIR}/{name}.json?{unsaved}\nThis cannot be undone.",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
                QMessageBox.StandardButton.Cancel,
            )
            if answer != QMessageBox.StandardButton.Yes:
                return False
        row = self.list_model.row_of(name)
        try:
            self._sample_path(name).unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            self._say(f"{name} cannot be deleted: {exc.strerror or exc}", error=True)
            return False
        draft = self._drafts.pop(name, None)
        if self._current is not None and self._current.name == name:
            self._close_current(keep_draft=False)
        elif draft is not None:
            self._discard(draft)
        self._refresh_list()
        names = self.list_model.names
        neighbour = names[min(row, len(names) - 1)] if names and row >= 0 else None
        if neighbour:
            self._select_row(neighbour)
            self._open(neighbour)
        else:
            self._show_nothing("No samples yet: create one with New.")
        self._say(f"Deleted {SAMPLES_DIR}/{name}.json")
        self._announce(neighbour)
        return True

    def _on_new(self, contract: str) -> None:
        name = self.new_sample(contract)
        if name:
            self._on_rename()  # let the user name it right away

    def _on_duplicate(self) -> None:
        if self.duplicate_sample():
            self._on_rename()

    def _on_rename(self) -> None:
        index = self.list_view.currentIndex()
        if index.isValid():
            self.list_view.setFocus()
            self.list_view.edit(index)

    def _on_delete(self) -> None:
        self.delete_sample()

    # ---- opening -------------------------------------------------------------------------------
    def _open(self, name: str) -> None:
        if self.workspace is None:
            return
        current = self._current
        if current is not None and current.name == name and current.failed is None:
            return
        self._close_current()
        draft = self._drafts.get(name)
        if draft is not None:
            self._current = draft
            self._show(draft)
            if draft.stamp != file_stamp(draft.path):
                self._check_disk(draft)
            # Its text is in the editor already: say so, as a sample read from disk does.
            self.sample_opened.emit(name)
            return
        opened = _Open(name, self._sample_path(name))
        self._current = opened
        self._load(opened)

    def _load(
        self, opened: _Open, keep_view: tuple[int, int] | None = None, discard: bool = False
    ) -> None:
        """Read ``opened`` from disk in the background, then show it. On a reload the old text
        stays on screen until the new one is read; edits made meanwhile win unless ``discard``."""
        self._load_serial = next(self._serials)
        self._cancel_fill()
        if keep_view is None:
            self._show_nothing(f"Opening {opened.name}…", keep_current=True)
        self._show_title()
        tag = (self._tag, "load", self._load_serial, opened, keep_view, discard)
        self.bridge.call(tag, load_sample_file, opened.path, self._structure_shown())

    def _on_loaded(
        self,
        serial: int,
        opened: _Open,
        keep_view: tuple[int, int] | None,
        discard: bool,
        loaded: LoadedSample | None,
        error: Any,
    ) -> None:
        if serial != self._load_serial or opened is not self._current:
            return
        if error is not None or loaded is None:
            opened.failed = str(error) if isinstance(error, SampleReadError) else repr(error)
            if opened.view is None:
                self._show_nothing(opened.failed, keep_current=True)
            self._say(opened.failed, error=True)
            return
        old = opened.document
        if old is not None and old.isModified() and not discard:
            # Edited while the new version was being read: the edits win, and the user is told.
            opened.notice = "changed"
            self._show_notice(opened)
            return
        opened.failed = None
        if opened.view is not None:
            self._drop_view(opened.view)
        # The new editor is on screen from the start and the text streams into it, a slice per
        # turn of the event loop: each slice is laid out as it arrives, never the whole at once.
        view = self._new_view()
        view.setReadOnly(True)
        view.reserve_lines(loaded.lines)
        document = view.document()
        document.setUndoRedoEnabled(False)
        opened.view = view
        opened.loading = True
        opened.large = is_large(loaded.text, loaded.lines)
        opened.highlighter = None if opened.large else JsonHighlighter(document, self._theme)
        self._display(view)
        view.visible_highlighter.set_active(opened.large)
        fill = _Fill(opened, loaded, view, 0, keep_view)
        self._fill = fill
        self._update_actions()
        if len(loaded.text) <= FILL_SLICE:
            self._fill_step()
        else:
            # Painting each slice as it arrives would cost more than the slices themselves.
            view.setUpdatesEnabled(False)
            self._say(f"Opening {opened.name} ({len(loaded.text) / 1e6:.1f} MB)…")
            self._fill_timer.start()

    def _fill_step(self) -> None:
        fill = self._fill
        if fill is None:
            return
        text = fill.loaded.text
        end = min(len(text), fill.at + FILL_SLICE)
        cursor = QTextCursor(fill.view.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text[fill.at : end])
        fill.at = end
        if end >= len(text):
            self._finish_fill(fill)
        else:
            self._fill_timer.start()

    def _cancel_fill(self) -> None:
        self._fill_timer.stop()
        fill, self._fill = self._fill, None
        if fill is not None:
            fill.opened.loading = False
            if fill.opened.view is fill.view:
                fill.opened.view = None
                fill.opened.highlighter = None
            self._drop_view(fill.view)

    def _finish_fill(self, fill: _Fill) -> None:
        self._fill = None
        opened, loaded, view = fill.opened, fill.loaded, fill.view
        view.setUpdatesEnabled(True)
        document = view.document()
        document.setUndoRedoEnabled(True)
        document.setModified(False)
        opened.loading = False
        opened.crlf = loaded.crlf
        opened.stamp = loaded.stamp
        opened.digest = loaded.digest
        self._set_check(opened, loaded.check, document.revision())
        opened.notice = None
        cursor = QTextCursor(document)
        if fill.keep_view is not None:
            cursor.setPosition(min(fill.keep_view[0], max(0, document.characterCount() - 1)))
        view.setTextCursor(cursor)
        if fill.keep_view is not None:
            view.verticalScrollBar().setValue(fill.keep_view[1])
        self._structure_dirty = True
        self._show(opened)
        self._say(self._check_summary(loaded.check))
        self.sample_opened.emit(opened.name)

    def _display(self, view: JsonTextEdit) -> None:
        self._showing = True
        try:
            self.editor_stack.setCurrentWidget(view)
        finally:
            self._showing = False

    def _close_current(self, keep_draft: bool = True) -> None:
        """Stop showing the current sample; keep it when it has unsaved edits."""
        self._cancel_fill()
        self._check_timer.stop()
        opened = self._current
        self._current = None
        if opened is None:
            return
        self._display(self._blank)
        if keep_draft and opened.document is not None and opened.document.isModified():
            self._drafts[opened.name] = opened
        else:
            self._drafts.pop(opened.name, None)
            self._discard(opened)
        self._update_markers()

    def _discard(self, opened: _Open) -> None:
        if opened.view is not None:
            self._drop_view(opened.view)
            opened.view = None
            opened.highlighter = None
        self._release(opened.check, opened.shown_document)
        opened.check = opened.shown_document = None

    def _set_check(self, opened: _Open, check: SampleCheck, revision: int) -> None:
        """Keep ``check`` as the sample's latest; what it replaces is let go off this thread."""
        old = [opened.check]
        opened.check = check
        opened.checked_revision = revision
        if check.valid_json:
            # A large document's value comes only while its structure is on screen; without it
            # the structure is read again when it is next shown.
            old.append(opened.shown_document)
            opened.shown_document = check.document
            opened.shown_contract = check.contract
            self._structure_dirty = True
        self._release(*old)

    def _release(self, *values: Any) -> None:
        """Free a large parsed document in a worker thread: freeing hundreds of thousands of
        objects takes tens of milliseconds that the GUI thread should not spend."""
        if any(v is not None for v in values):
            self.bridge.call((self._tag, "release"), _let_go, values)

    def _show_nothing(self, message: str, keep_current: bool = False) -> None:
        if not keep_current:
            self._close_current()
        self._display(self._blank)
        self._blank.setPlaceholderText(message)
        self.problems_model.removeRows(0, self.problems_model.rowCount())
        self.problems_title.setText("Problems")
        self.structure_model.set_entries([])
        self.structure_note.hide()
        self.notice.hide()
        self.position.setText("")
        self._show_title()
        self._update_actions()

    def _show(self, opened: _Open) -> None:
        """Put ``opened``'s editor on screen, with its marks, problems and structure."""
        assert opened.view is not None
        self._display(opened.view)
        opened.view.setReadOnly(False)
        self._jump_marks = []
        self._show_check(opened)
        if opened.document is not None and opened.checked_revision != opened.document.revision():
            # Its last check came back while another sample was on screen: check it again.
            self._check_timer.start(0)
        self._structure_dirty = True
        if self.tabs.currentIndex() == 1:
            self._build_structure()
        self._show_notice(opened)
        self._show_title()
        self._update_markers()
        self._update_actions()
        self._show_position()

    def _show_title(self) -> None:
        opened = self._current
        if opened is None:
            self.title.setText("No sample")
            self.contract_label.setText("")
            return
        modified = opened.document is not None and opened.document.isModified()
        self.title.setText(f"{opened.name}{' ●' if modified else ''}")
        self.title.setToolTip(str(opened.path))
        contract = (opened.check.contract if opened.check else None) or opened.shown_contract
        self.contract_label.setText(f"· {CONTRACT_LABELS[contract]}" if contract else "")

    # ---- files changed on disk -----------------------------------------------------------------
    def _check_disk(self, opened: _Open) -> None:
        if opened.saving:
            return  # our own write; the save's result records the new stamp
        stamp = file_stamp(opened.path)
        if stamp == opened.stamp and stamp is not None:
            return
        if stamp is None:
            self._on_disk_gone(opened)
            return
        self.bridge.call((self._tag, "disk", opened), disk_state, opened.path)

    def _on_disk_gone(self, opened: _Open) -> None:
        if opened.document is None or (opened.stamp is None and opened.notice is None):
            return  # already told, and the user chose to keep the edits
        if not opened.document.isModified():
            if opened is self._current:
                self._close_current(keep_draft=False)
                self._show_nothing(f"{opened.name} was deleted on disk.")
            else:
                self._drafts.pop(opened.name, None)
                self._discard(opened)
            return
        opened.notice = "deleted"
        if opened is self._current:
            self._show_notice(opened)

    def _on_disk_read(
        self, opened: _Open, state: tuple[Stamp | None, str] | None, error: Any
    ) -> None:
        if opened.document is None:
            return
        if state is None:
            if isinstance(error, FileNotFoundError):
                self._on_disk_gone(opened)
            return
        stamp, digest = state
        if digest == opened.digest:
            opened.stamp = stamp  # touched, or our own save: the same bytes
            return
        if not opened.document.isModified():
            if opened is self._current:
                view = (
                    self.editor.textCursor().position(),
                    self.editor.verticalScrollBar().value(),
                )
                self._load(opened, keep_view=view)
                self._say(f"{opened.name} changed on disk and was reloaded")
            else:
                self._drafts.pop(opened.name, None)
                self._discard(opened)
            return
        opened.notice = "changed"
        if opened is self._current:
            self._show_notice(opened)

    def _show_notice(self, opened: _Open) -> None:
        if opened.notice is None:
            self.notice.hide()
            return
        where = f"{SAMPLES_DIR}/{opened.name}.json"
        if opened.notice == "deleted":
            self.notice_label.setText(
                f"{where} was deleted outside the studio. Your edits are kept; "
                "Save writes the file again."
            )
            self.reload_button.hide()
            self.keep_button.setText("OK")
        else:
            self.notice_label.setText(
                f"{where} changed outside the studio while you have unsaved edits."
            )
            self.reload_button.show()
            self.keep_button.setText("Keep my edits")
        self.notice.show()

    def _on_reload_clicked(self) -> None:
        opened = self._current
        if opened is None:
            return
        opened.notice = None
        self.notice.hide()
        view = (self.editor.textCursor().position(), self.editor.verticalScrollBar().value())
        self._load(opened, keep_view=view, discard=True)

    def _on_keep_clicked(self) -> None:
        if self._current is not None:
            self._current.notice = None
            self._current.stamp = file_stamp(self._current.path)
        self.notice.hide()

    # ---- checking as the user types ------------------------------------------------------------
    def _on_text_changed(self) -> None:
        opened = self._current
        if self._showing or opened is None or opened.document is None:
            return
        if not self._from_current():
            return
        self._check_timer.start(CHECK_DELAY_LARGE_MS if opened.large else CHECK_DELAY_MS)
        if self._jump_marks:
            self._jump_marks = []
            self._apply_marks()

    def _start_check(self) -> None:
        opened = self._current
        if opened is None or opened.document is None:
            return
        revision = opened.document.revision()
        if revision == opened.checked_revision:
            return
        text = self._text_of(opened.document)
        keep = not opened.large or self._structure_shown()
        self.bridge.call((self._tag, "check", opened, revision), check_sample_text, text, keep)

    def _on_checked(
        self, opened: _Open, revision: int, check: SampleCheck | None, error: Any
    ) -> None:
        if check is None:
            self._say(f"The sample could not be checked: {error!r}", error=True)
            return
        if opened is not self._current or opened.document is None:
            return
        if opened.document.revision() != revision:
            return  # the text moved on; a newer check is coming
        self._set_check(opened, check, revision)
        self._show_check(opened)
        if self.tabs.currentIndex() == 1:
            self._build_structure()
        self._show_title()
        self._say(self._check_summary(check))

    @staticmethod
    def _text_of(document: QTextDocument) -> str:
        # toPlainText would turn non-breaking spaces into spaces; the raw text keeps them.
        return document.toRawText().replace("\u2029", "\n")

    def _check_summary(self, check: SampleCheck) -> str:
        if not check.valid_json:
            p = check.problems[0]
            return f"✗ Not JSON: {p.message} at line {p.line}, column {p.column}"
        kind = CONTRACT_LABELS.get(check.contract or "", "sample")
        errors = sum(1 for p in check.problems if p.severity == "error")
        warnings = len(check.problems) - errors
        if not check.problems:
            return f"✓ Valid {kind}"
        parts = []
        if errors:
            parts.append(f"{errors} contract problem{'s' if errors != 1 else ''}")
        if warnings:
            parts.append(f"{warnings} warning{'s' if warnings != 1 else ''}")
        return f"JSON is valid · {kind}: {', '.join(parts)}"

    def _show_check(self, opened: _Open) -> None:
        check = opened.check
        model = self.problems_model
        model.removeRows(0, model.rowCount())
        view = opened.view
        assert view is not None
        view.error_lines = {}
        self._problem_marks = []
        if check is None:
            self._apply_marks()
            return
        style = self.style()
        icons = {
            "error": style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxCritical),
            "warning": style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning),
        }
        document = opened.document
        assert document is not None
        rows = []
        for k, problem in enumerate(check.problems):
            where = QStandardItem(
                icons.get(problem.severity, icons["warning"]), f"{problem.line}:{problem.column}"
            )
            path = QStandardItem(problem.pointer if problem.pointer is not None else "JSON syntax")
            if problem.pointer == "":
                path.setText("/")
            text = problem.message
            if not problem.exact:
                text += " (missing here)"
            message = QStandardItem(text)
            tip = f"{problem.severity}: {problem.message}"
            if problem.rule:
                tip += f"\nrule {problem.rule}"
            for item in (where, path, message):
                item.setData(k, Qt.ItemDataRole.UserRole)
                item.setToolTip(tip)
            rows.append([where, path, message])
            line = problem.line - 1
            if view.error_lines.get(line) != "error":
                view.error_lines[line] = problem.severity
            if k < MAX_MARKS:
                self._problem_marks.extend(self._marks_for(document, problem))
        for row in rows:
            model.appendRow(row)
        if check.total > len(check.problems):
            more = QStandardItem("")
            model.appendRow(
                [
                    more,
                    QStandardItem(""),
                    QStandardItem(f"… and {check.total - len(check.problems)} more"),
                ]
            )
        count = check.total
        self.problems_title.setText(f"Problems ({count})" if count else "Problems: none")
        self.problems.resizeColumnToContents(0)
        self.problems.setColumnWidth(1, min(max(self.problems.sizeHintForColumn(1), 90), 260))
        self._apply_marks()
        view.refresh_gutter()
        self.checked.emit()

    def _position(self, document: QTextDocument, line: int, column: int) -> int:
        """A 1-based line and column (in code points) as a position in ``document``."""
        block = document.findBlockByNumber(max(0, line - 1))
        if not block.isValid():
            return max(0, document.characterCount() - 1)
        text = block.text()
        prefix = text[: max(0, column - 1)]
        units = len(prefix) + (0 if prefix.isascii() else len(_ASTRAL.findall(prefix)))
        return block.position() + min(units, block.length() - 1)

    def _span(self, document: QTextDocument, problem: Problem) -> tuple[int, int]:
        start = self._position(document, problem.line, problem.column)
        if problem.end_line == problem.line:
            end = self._position(document, problem.end_line, problem.end_column)
        else:
            block = document.findBlock(start)
            end = block.position() + block.length() - 1
        if problem.pointer is None or end <= start:  # a syntax error: mark one character
            end = min(start + 1, max(0, document.characterCount() - 1))
            if end <= start and start > 0:
                start -= 1
        return start, end

    def _marks_for(
        self, document: QTextDocument, problem: Problem
    ) -> list[QTextEdit.ExtraSelection]:
        theme = self._theme
        colour = theme.error if problem.severity == "error" else theme.warning
        start, end = self._span(document, problem)
        marks = []
        if problem.pointer is None:
            line = QTextEdit.ExtraSelection()
            line.format.setBackground(theme.error_line)
            line.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            line.cursor = QTextCursor(document.findBlock(start))
            marks.append(line)
        underline = QTextEdit.ExtraSelection()
        underline.format.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
        underline.format.setUnderlineColor(colour)
        cursor = QTextCursor(document)
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        underline.cursor = cursor
        marks.append(underline)
        return marks

    def _apply_marks(self) -> None:
        self.editor.setExtraSelections(self._problem_marks + self._jump_marks)

    # ---- jumping to a value ----------------------------------------------------------------------
    def _on_problem_activated(self, index: QModelIndex) -> None:
        opened = self._current
        k = index.data(Qt.ItemDataRole.UserRole)
        if opened is None or opened.check is None or opened.document is None or k is None:
            return
        problem = opened.check.problems[k]
        if opened.checked_revision != opened.document.revision() and problem.pointer is not None:
            self.jump_to(problem.pointer)  # the text moved on: find the value again
            return
        self._jump(opened.document, problem)

    def _on_structure_activated(self, index: QModelIndex) -> None:
        where = index.data(StructureModel.POINTER_ROLE)
        if where is not None:
            self.jump_to(where)

    def jump_to(self, where: str) -> None:
        """Move the cursor to the value at JSON pointer ``where`` in the sample's text."""
        opened = self._current
        if opened is None or opened.document is None:
            return
        text = self._text_of(opened.document)
        if len(text) <= FILL_SLICE:
            self._on_located(opened, opened.document.revision(), locate_pointer(text, where), where)
        else:
            revision = opened.document.revision()
            self.bridge.call(
                (self._tag, "locate", opened, revision, where), locate_pointer, text, where
            )

    def _on_located(
        self,
        opened: _Open,
        revision: int,
        place: tuple[int, int, int, int, bool] | None,
        where: str,
    ) -> None:
        if place is None or opened is not self._current or opened.document is None:
            return
        if opened.document.revision() != revision:
            return
        line, column, end_line, end_column, exact = place
        problem = Problem("info", "", where, line, column, end_line, end_column, exact)
        self._jump(opened.document, problem)
        if not exact:
            self._say(f"{where} is not in the sample; the cursor is at the nearest value that is")

    def _jump(self, document: QTextDocument, problem: Problem) -> None:
        start, end = self._span(document, problem)
        self.tabs.setCurrentIndex(0)
        cursor = QTextCursor(document)
        cursor.setPosition(start)
        self.editor.setTextCursor(cursor)
        self.editor.centerCursor()
        self.editor.setFocus()
        mark = QTextEdit.ExtraSelection()
        mark.format.setBackground(self._theme.jump)
        span = QTextCursor(document)
        span.setPosition(start)
        span.setPosition(max(end, start), QTextCursor.MoveMode.KeepAnchor)
        mark.cursor = span
        self._jump_marks = [mark]
        self._apply_marks()

    # ---- structure -------------------------------------------------------------------------------
    def _structure_shown(self) -> bool:
        return self.tabs.currentIndex() == 1

    def _on_tab_changed(self, index: int) -> None:
        opened = self._current
        if index == 1 and self._structure_dirty:
            self._build_structure()
        elif index != 1 and opened is not None and opened.large:
            # Let a large document's parsed value go while nobody looks at its structure.
            self.structure_model.set_entries([])
            self._release(opened.shown_document)
            opened.shown_document = None
            self._structure_dirty = True

    def _build_structure(self) -> None:
        self._structure_dirty = False
        opened = self._current
        document = opened.document if opened is not None else None
        if (
            opened is not None
            and document is not None
            and opened.shown_document is None
            and opened.check is not None
            and opened.check.valid_json
        ):
            # A large document's structure is read again when it is shown (see _set_check).
            tag = (self._tag, "parse", opened, document.revision())
            self.bridge.call(tag, parse_json_in_pieces, self._text_of(document))
            self.structure_model.set_entries([])
            self.structure_note.setText("Reading the structure…")
            self.structure_note.show()
            return
        if opened is None or opened.shown_document is None:
            self.structure_model.set_entries([])
            self.structure_note.setText("Nothing to show until the sample is JSON.")
            self.structure_note.setVisible(opened is not None)
            return
        expanded = self._expanded_pointers()
        self.structure_model.set_entries(
            structure_entries(opened.shown_contract, opened.shown_document)
        )
        stale = opened.check is not None and not opened.check.valid_json
        self.structure_note.setText(
            "The text is not JSON right now: this is its last valid version."
        )
        self.structure_note.setVisible(stale)
        self._restore_expanded(QModelIndex(), expanded, depth=0)
        self._fit_structure()

    def _on_parsed(self, opened: _Open, document: Any) -> None:
        if document is None or opened is not self._current or not self._structure_shown():
            self._release(document)
            return
        if opened.shown_document is None:
            opened.shown_document = document
        self._build_structure()

    def _fit_structure(self, *_: Any) -> None:
        width = max(self.structure.sizeHintForColumn(0), 160)
        self.structure.setColumnWidth(0, min(width + 12, max(240, self.structure.width() // 2)))

    def _expanded_pointers(self) -> set[str]:
        found: set[str] = set()
        model = self.structure_model

        def walk(parent: QModelIndex) -> None:
            for row in range(model.rowCount(parent)):
                index = model.index(row, 0, parent)
                if self.structure.isExpanded(index):
                    where = index.data(StructureModel.POINTER_ROLE)
                    found.add(where if where is not None else f"#{index.data()}")
                    walk(index)

        walk(QModelIndex())
        return found

    def _restore_expanded(self, parent: QModelIndex, expanded: set[str], depth: int) -> None:
        if not expanded or depth > 6:
            return
        model = self.structure_model
        for row in range(model.rowCount(parent)):
            index = model.index(row, 0, parent)
            where = index.data(StructureModel.POINTER_ROLE)
            if (where if where is not None else f"#{index.data()}") in expanded:
                self.structure.expand(index)
                if model.canFetchMore(index):
                    model.fetchMore(index)
                self._restore_expanded(index, expanded, depth + 1)

    # ---- saving ----------------------------------------------------------------------------------
    def save(self) -> bool:
        """Save the shown sample (atomically, in the background) when its text is JSON. False when
        it cannot start; ``sample_saved`` follows when the file is written."""
        opened = self._current
        if opened is None or opened.document is None or self._fill is not None:
            return False
        document = opened.document
        check = opened.check
        if (
            check is not None
            and opened.checked_revision == document.revision()
            and not check.valid_json
        ):
            self._say(self._not_saved(check), error=True)
            return False
        if opened.saving:
            return False
        opened.saving = True
        revision = document.revision()
        text = self._text_of(document)
        keep = not opened.large or self._structure_shown()
        tag = (self._tag, "save", opened, revision)
        self.bridge.call(tag, save_sample_text, opened.path, text, opened.crlf, keep)
        return True

    @staticmethod
    def _not_saved(check: SampleCheck) -> str:
        p = check.problems[0]
        return f"Not saved: the text is not JSON ({p.message} at line {p.line}, column {p.column})"

    def _on_saved(
        self, opened: _Open, revision: int, saved: SavedSample | None, error: Any
    ) -> None:
        opened.saving = False
        if saved is None:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else error
            self._say(f"Not saved: {reason}", error=True)
            return
        check = saved.check
        if not check.valid_json:
            self._say(self._not_saved(check), error=True)
            return
        opened.stamp = saved.stamp
        opened.digest = saved.digest
        opened.notice = None
        document = opened.document
        if document is not None and document.revision() == revision:
            document.setModified(False)
            self._set_check(opened, check, revision)
        if opened is self._current:
            self.notice.hide()
            if opened.checked_revision == revision:
                self._show_check(opened)
        if opened is not self._current and document is not None and not document.isModified():
            self._drafts.pop(opened.name, None)
            self._discard(opened)
        self._update_markers()
        self._show_title()
        errors = check.errors
        where = f"{SAMPLES_DIR}/{opened.name}.json"
        if errors:
            self._say(
                f"Saved {where}, with {errors} contract problem{'s' if errors != 1 else ''} "
                "left (see Problems)",
                error=True,
            )
        else:
            self._say(f"Saved {where}")
        self.sample_saved.emit(opened.name)

    # ---- results from the worker -------------------------------------------------------------
    def _on_work_finished(self, tag: object, result: Any, error: Any) -> None:
        if not (isinstance(tag, tuple) and tag and tag[0] is self._tag):
            return
        kind = tag[1]
        if kind == "load":
            self._on_loaded(tag[2], tag[3], tag[4], tag[5], result, error)
        elif kind == "check":
            self._on_checked(tag[2], tag[3], result, error)
        elif kind == "save":
            self._on_saved(tag[2], tag[3], result, error)
        elif kind == "disk":
            self._on_disk_read(tag[2], result, error)
        elif kind == "locate":
            self._on_located(tag[2], tag[3], result, tag[4])
        elif kind == "parse":
            self._on_parsed(tag[2], result)

    # ---- small things ------------------------------------------------------------------------
    def _on_modification_changed(self, _modified: bool) -> None:
        if self._showing or self._fill is not None or not self._from_current():
            return
        self._update_markers()
        self._show_title()

    def _on_cursor_moved(self) -> None:
        if self._from_current():
            self._show_position()

    def _show_position(self) -> None:
        cursor = self.editor.textCursor()
        if self._current is None or self._current.document is None:
            self.position.setText("")
            return
        block = cursor.block()
        column = cursor.positionInBlock()
        text = block.text()
        if not text.isascii():  # Qt counts UTF-16 units; show characters
            column = len(text.encode("utf-16-le")[: column * 2].decode("utf-16-le", "ignore"))
        self.position.setText(f"Ln {block.blockNumber() + 1}, Col {column + 1}")

    def _say(self, message: str, error: bool = False) -> None:
        self.status.setText(message)
        self.status.setToolTip(message)
        palette = self.status.palette()
        colour = self._theme.error if error else self.palette().color(QPalette.ColorRole.WindowText)
        palette.setColor(QPalette.ColorRole.WindowText, colour)
        self.status.setPalette(palette)

    def _apply_theme_to_widgets(self) -> None:
        palette = self.notice.palette()
        base = self.palette().color(QPalette.ColorRole.Window)
        warn = self._theme.warning
        mixed = QColor(
            (base.red() * 4 + warn.red()) // 5,
            (base.green() * 4 + warn.green()) // 5,
            (base.blue() * 4 + warn.blue()) // 5,
        )
        palette.setColor(QPalette.ColorRole.Window, mixed)
        self.notice.setPalette(palette)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if not hasattr(self, "editor_stack"):
            return  # still being built
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            theme = json_theme(self.palette())
            if theme == self._theme:
                return
            self._theme = theme
            for k in range(self.editor_stack.count()):
                view = self.editor_stack.widget(k)
                if isinstance(view, JsonTextEdit):
                    view.theme = theme
                    view.visible_highlighter.set_theme(theme)
            for opened in [self._current, *self._drafts.values()]:
                if opened is not None and opened.highlighter is not None:
                    opened.highlighter.set_theme(theme)
            self._apply_theme_to_widgets()
            if self._current is not None and self._current.document is not None:
                self._show_check(self._current)
