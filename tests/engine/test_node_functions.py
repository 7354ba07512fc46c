"""The function picker for TypeScript and JavaScript sources: real files listed by the real Node,
compared with what the node runtime can actually call."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from studio.engine import node_functions
from studio.engine.node_binary import NODE_VARIABLE
from studio.engine.node_functions import FUNCTIONS_SCRIPT
from studio.engine.node_runtime import NodeRuntime
from studio.engine.runtimes import runtime_for

EVERY_FORM = """\
import { createHash } from 'crypto';
import * as path from 'path';
import util from 'util';

enum Mode { Off, On }
namespace Limits { export const max = 3; }
interface Req { messages: unknown[]; system?: string }
type Loop = 'main' | string;

export function transform(input: { request: Req }, loop?: Loop): Req {
  return input.request;
}

export default function policy({ request }: { request: Req }, ...rest: unknown[]) {
  return request;
}

export async function later(input: any = {}) { return input.request; }

const arrow = async (input: any): Promise<Req> => input.request;
let plain = function named(input: any, [first]: number[] = []) { return input.request; };
var legacy = (input) => input.request;
export const exported = <T,>(input: { request: T }): T => input.request;
export { arrow as renamed };

class Klass { constructor(private readonly x: number) {} }
const notAFunction = Mode.On + Limits.max;
function main(input: any) { return input.request; }
"""


def listing(tmp_path: Path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return NodeRuntime.functions(path)


def signatures(found) -> list[tuple[str, int, str]]:
    return [(f.name, f.line, f.signature) for f in found]


def test_every_binding_form_of_a_ts_file_with_types_enums_and_namespaces(tmp_path):
    found = listing(tmp_path, "policy.ts", EVERY_FORM)
    assert found.syntax_error is None
    assert signatures(found) == [
        ("transform", 10, "transform(input, loop)"),
        ("policy", 14, "policy({ request }, ...rest)"),
        ("later", 18, "async later(input=...)"),
        ("arrow", 20, "async arrow(input)"),
        ("plain", 21, "plain(input, [first]=...)"),
        ("legacy", 22, "legacy(input)"),
        ("exported", 23, "exported(input)"),
        ("main", 28, "main(input)"),
    ]


def test_positions_are_the_files_own_with_and_without_transform_mode(tmp_path):
    # Strip mode keeps every position; an enum needs transform mode, mapped back by its source map.
    body = "\n\nexport function hook(input: any): any {\n  return input;\n}\n"
    plain = listing(tmp_path, "plain.ts", "type A = string;" + body)
    with_enum = listing(tmp_path, "enum.ts", "enum A { X = 'x', Y = 'y' }" + body)
    assert signatures(plain) == signatures(with_enum) == [("hook", 3, "hook(input)")]


def test_the_listed_names_are_exactly_those_the_runtime_can_call(tmp_path, workspace, runner):
    (workspace.root / "lib" / "policy.ts").write_text(EVERY_FORM)
    listed = NodeRuntime.functions(workspace.root / "lib" / "policy.ts").names()
    for name in listed:
        outcome = runner.run(hook=f"lib/policy.ts:{name}")
        assert outcome.status == "ok", (name, outcome.turn_error)
    for name in ("Klass", "notAFunction", "renamed", "createHash", "Mode", "named"):
        assert name not in listed
    assert runner.run(hook="lib/policy.ts:notAFunction").turn_error.kind == "function_missing"
    assert runner.run(hook="lib/policy.ts:named").turn_error.kind == "function_missing"
    klass = runner.run(hook="lib/policy.ts:Klass").turn_error
    assert "without 'new'" in klass.message


def test_a_later_binding_of_the_same_name_wins(tmp_path):
    found = listing(
        tmp_path,
        "again.js",
        "function a() {}\nfunction b() {}\nvar a = 1;\nb = async (x) => x;\nfunction c() {}\n"
        "function c(d) {}\n",
    )
    assert signatures(found) == [("b", 4, "async b(x)"), ("c", 6, "c(d)")]


@pytest.mark.parametrize("name", ["hook.js", "hook.mjs", "hook.mts"])
def test_js_mjs_and_mts_files(tmp_path, name):
    found = listing(tmp_path, name, "export default async function main(input) {}\n")
    assert signatures(found) == [("main", 1, "async main(input)")]
    assert runtime_for(name) is NodeRuntime


def test_an_anonymous_default_export_is_the_syntax_error_adf_hits(tmp_path):
    # ADF's rewrite drops `export default`, leaving a function statement without a name.
    found = listing(
        tmp_path,
        "anonymous.ts",
        "function helper() {}\n\nexport default function (input: any) {\n  return input;\n}\n",
    )
    assert found.syntax_error is not None and found.syntax_error.line == 3
    assert "function name" in found.syntax_error.message
    assert found.names() == ["helper"]


def test_an_import_form_the_rewrite_leaves_is_a_problem(tmp_path):
    found = listing(tmp_path, "imports.js", "import a, { b } from 'util';\nfunction main() {}\n")
    assert found.syntax_error is not None and found.syntax_error.line == 1
    assert found.names() == ["main"]


def test_a_broken_js_file_names_the_line_and_keeps_the_functions_around_it(tmp_path):
    found = listing(
        tmp_path,
        "broken.js",
        "function first(a) {}\n"
        "const ok = () => 1;\n"
        "function broken( {\n"
        "  return 1;\n"
        "}\n"
        "const after = async (x, y = 2) => x;\n",
    )
    assert found.syntax_error is not None
    assert found.syntax_error.line in (3, 4)
    assert signatures(found) == [
        ("first", 1, "first(a)"),
        ("ok", 2, "ok()"),
        ("after", 6, "async after(x, y=...)"),
    ]


def test_a_ts_file_whose_types_do_not_parse(tmp_path):
    found = listing(
        tmp_path,
        "bad.ts",
        "export function good(input: any) {}\n\nfunction bad(input: ) {}\n",
    )
    assert found.syntax_error is not None and found.syntax_error.line == 3
    assert found.names() == ["good"]


def test_a_file_that_is_not_utf8_and_a_missing_file(tmp_path):
    path = tmp_path / "latin.js"
    path.write_bytes(b"function main() {}\n// caf\xe9\n")
    found = NodeRuntime.functions(path)
    assert found == [] and found.syntax_error is not None and found.syntax_error.line == 2
    with pytest.raises(OSError):
        NodeRuntime.functions(tmp_path / "nowhere.ts")


def test_the_listing_runs_nothing_in_the_file(tmp_path):
    marker = tmp_path / "ran"
    found = listing(
        tmp_path,
        "side.js",
        f"require('fs').writeFileSync({json.dumps(str(marker))}, 'x');\nfunction main() {{}}\n",
    )
    assert found.names() == ["main"] and not marker.exists()


def test_without_the_parser_installed_the_problem_says_to_run_make_setup(tmp_path, monkeypatch):
    alone = tmp_path / "scripts" / "functions.mjs"
    alone.parent.mkdir()
    shutil.copy(FUNCTIONS_SCRIPT, alone)
    shutil.copy(FUNCTIONS_SCRIPT.with_name("rewrite.mjs"), alone.with_name("rewrite.mjs"))
    monkeypatch.setattr(node_functions, "FUNCTIONS_SCRIPT", alone)
    found = listing(tmp_path, "hook.js", "function main() {}\n")
    assert found == [] and found.syntax_error is not None
    assert "acorn" in found.syntax_error.message and "make setup" in found.syntax_error.message


def test_without_a_usable_node_the_problem_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv(NODE_VARIABLE, str(tmp_path / "no-node"))
    found = listing(tmp_path, "hook.ts", "function main() {}\n")
    assert found == [] and found.syntax_error is not None
    assert found.syntax_error.message.startswith("the function list needs Node")
