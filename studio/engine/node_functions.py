"""The functions a TypeScript or JavaScript hook source offers, for the editor's function picker.

ADF calls any top-level binding of the file that holds a function, so the list is what a parse
of the file as ADF compiles it finds (``node/functions.mjs``: types stripped, the reference's
import/export rewrite, V8's own syntax check, acorn's syntax tree). A broken file never raises
here: what can still be read is listed, with the first problem and where it is.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from studio.core.file_reads import read_bytes
from studio.engine.node_binary import NodeUnavailable, find_node
from studio.engine.python_functions import FunctionInfo, FunctionList, SourceProblem

FUNCTIONS_SCRIPT = Path(__file__).with_name("node") / "functions.mjs"
_TIMEOUT_S = 20.0


def functions_in_js_file(path: str | Path, *, module: bool = False) -> FunctionList:
    """The top-level functions of a ``.ts``/``.mts``/``.js``/``.mjs`` file as ADF calls them,
    or with ``module`` the exports of the ES module a step or chain hook is. A file that cannot
    be read raises ``OSError``, as for Python sources; anything else is a problem in the list."""
    path = Path(path)
    data = read_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        return FunctionList([], SourceProblem("the file is not valid utf-8", line, column))
    try:
        node = find_node()
    except NodeUnavailable as exc:
        return FunctionList(
            [], SourceProblem(f"the function list needs Node: {exc}", 1), listed=False
        )
    try:
        done = subprocess.run(
            [
                node.path,
                "--no-warnings",
                str(FUNCTIONS_SCRIPT),
                path.name,
                *(["--module"] if module else []),
            ],
            input=text.encode("utf-8"),
            capture_output=True,
            timeout=_TIMEOUT_S,
            env={"PATH": os.environ.get("PATH", os.defpath)},
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return FunctionList(
            [], SourceProblem(f"Node could not list the functions: {exc}", 1), listed=False
        )
    return _read_answer(done)


def _read_answer(done: subprocess.CompletedProcess[bytes]) -> FunctionList:
    stderr = done.stderr.decode("utf-8", errors="replace")
    if done.returncode != 0:
        if "ERR_MODULE_NOT_FOUND" in stderr and "'acorn'" in stderr:
            message = "the studio's JavaScript parser (acorn) is not installed; run `make setup`"
        else:
            tail = stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
            message = f"Node could not list the functions: {tail[0]}"
        return FunctionList([], SourceProblem(message, 1), listed=False)
    try:
        answer = json.loads(done.stdout)
        functions = [
            FunctionInfo(
                str(f["name"]), int(f["line"]), bool(f["is_async"]), tuple(map(str, f["params"]))
            )
            for f in answer["functions"]
        ]
        raw = answer.get("problem")
        problem = (
            SourceProblem(str(raw["message"]), int(raw["line"]), raw.get("column") or None)
            if raw
            else None
        )
        unchecked = tuple(str(name) for name in answer.get("unchecked", ()))
        open_ended = bool(answer.get("open_ended"))
    except (ValueError, KeyError, TypeError) as exc:
        problem = SourceProblem(f"Node gave an unreadable function list: {exc}", 1)
        return FunctionList([], problem, listed=False)
    return FunctionList(functions, problem, unchecked=unchecked, open_ended=open_ended)
