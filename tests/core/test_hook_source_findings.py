"""Findings about a hook source before it runs: the file, the function in it, the language.

The listings here are made by the studio's real listers (Python's ``ast`` and the Node script
the function picker uses), from real files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from studio.core.chain.source_findings import chain_source_findings
from studio.core.findings import errors
from studio.core.hook_source_findings import (
    FUNCTION_MISSING,
    FUNCTION_UNCHECKED,
    RUNTIME,
    SOURCE_BROKEN,
    SOURCE_MISSING,
    SourceFile,
    source_file_in,
    source_findings,
)
from studio.core.pre_llm.config_warnings import config_warnings
from studio.core.pre_llm.targets import (
    HookDraft,
    TargetRow,
    draft_from_config,
)
from studio.core.source_ref import SourceRef, parse_source_ref
from studio.core.step.source_findings import step_source_findings
from studio.core.workspace.folder import Workspace
from studio.engine.node_functions import functions_in_js_file
from studio.engine.python_functions import functions_in_file
from studio.engine.runtimes import language_problem
from tests.support.adf_files import build_adf

AT = ("step", "source")


def lookup_of(files: dict[str, SourceFile]):
    return lambda path: files.get(path, SourceFile(False))


def rules(found) -> list[tuple[str, str]]:
    return [(f.severity, f.rule) for f in found]


# ---- the rules, over what is known about a file -------------------------------------------------


def test_a_missing_file_is_an_error_at_the_configured_path():
    found = source_findings(SourceRef("lib/gone.py", "main"), AT, lookup_of({}))
    assert rules(found) == [("error", SOURCE_MISSING)]
    assert found[0].pointer == "/step/source"
    assert found[0].message == (
        "lib/gone.py does not exist; every call of the hook fails until it exists"
    )


def test_a_missing_function_is_an_error_that_lists_the_file_and_suggests_a_name():
    files = {"lib/policy.ts": SourceFile(True, ("transform", "audit"))}
    found = source_findings(SourceRef("lib/policy.ts", "transfrom"), AT, lookup_of(files))
    assert rules(found) == [("error", FUNCTION_MISSING)]
    assert found[0].message == (
        "lib/policy.ts has no function `transfrom`; it has: transform, audit "
        "(did you mean `transform`?)"
    )
    assert source_findings(SourceRef("lib/policy.ts", "audit"), AT, lookup_of(files)) == []


def test_a_module_export_is_named_as_an_export_and_an_empty_file_says_so():
    files = {"lib/chain.ts": SourceFile(True, ())}
    found = source_findings(SourceRef("lib/chain.ts", "default"), AT, lookup_of(files), export=True)
    assert found[0].message == "lib/chain.ts has no export `default`; it has no exports at all"


def test_the_function_finding_can_sit_at_its_own_path():
    files = {"lib/a.py": SourceFile(True, ("main",))}
    found = source_findings(
        SourceRef("lib/a.py", "other"), AT, lookup_of(files), function_at=("step", "function")
    )
    assert [f.pointer for f in found] == ["/step/function"]


def test_what_may_be_a_function_at_run_time_never_blocks():
    files = {
        "lib/a.py": SourceFile(True, ("main",), unchecked=("hook",)),
        "lib/star.py": SourceFile(True, ("main",), open_ended=True),
        "lib/broken.ts": SourceFile(True, ("helper",), "Unexpected token (line 3)"),
    }
    lookup = lookup_of(files)
    found = source_findings(SourceRef("lib/a.py", "hook"), AT, lookup)
    assert rules(found) == [("warning", FUNCTION_UNCHECKED)]
    assert "must hold one when the hook runs" in found[0].message
    assert rules(source_findings(SourceRef("lib/star.py", "x"), AT, lookup)) == [
        ("warning", FUNCTION_UNCHECKED)
    ]
    found = source_findings(SourceRef("lib/broken.ts", "main"), AT, lookup)
    assert rules(found) == [("warning", SOURCE_BROKEN), ("warning", FUNCTION_UNCHECKED)]
    assert "Unexpected token (line 3)" in found[0].message


def test_nothing_is_said_of_what_is_not_known():
    # No workspace, or functions still being listed: only the language is judged.
    assert source_findings(SourceRef("lib/a.ts", "x"), AT, None) == []
    pending = lookup_of({"lib/a.ts": SourceFile(True)})
    assert source_findings(SourceRef("lib/a.ts", "x"), AT, pending) == []
    # A path that leaves the workspace is the config's own rule, never looked up.
    asked: list[str] = []
    source_findings(SourceRef("../x.py", "main"), AT, lambda p: asked.append(p))
    assert asked == []


def test_a_language_the_studio_cannot_run_is_a_warning():
    found = source_findings(
        SourceRef("lib/hook.rb", "main"),
        AT,
        lookup_of({"lib/hook.rb": SourceFile(True)}),
        language_problem=lambda path: language_problem(path, None),
    )
    assert rules(found) == [("warning", RUNTIME)]
    assert "'.rb' files" in found[0].message


def test_a_typescript_source_without_a_usable_node_is_a_warning_naming_why():
    problem = language_problem("lib/a.ts", "Node (/nowhere/node) does not exist")
    assert problem == "the studio runs lib/a.ts with Node, and Node (/nowhere/node) does not exist"
    assert language_problem("lib/a.py", "Node (/nowhere/node) does not exist") is None
    assert language_problem("lib/a.ts", None) is None


# ---- real files, as a workspace resolves them ----------------------------------------------------


def write(root: Path, path: str, text: str) -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text)


PYTHON_HOOK = """\
import json
from functools import partial

def transform(argument):
    return argument["request"]

shortened = partial(transform)
class Hook:
    pass
"""


def test_a_python_source_is_judged_from_its_parsed_top_level(tmp_path):
    write(tmp_path, "lib/hook.py", PYTHON_HOOK)
    workspace = Workspace.open(tmp_path)
    path = "lib/hook.py"
    at = source_file_in(workspace, path, functions_in_file(tmp_path / path))
    assert at.exists and at.functions == ("transform",)
    lookup = lookup_of({path: at})

    def found(source: str):
        return rules(source_findings(parse_source_ref(source), AT, lookup))

    assert found("lib/hook.py:transform") == []
    assert found("lib/hook.py:transfrom") == [("error", FUNCTION_MISSING)]
    # Bound to values that may be callable (a partial, a class, an import): not refused.
    for name in ("shortened", "Hook", "json", "partial"):
        assert found(f"lib/hook.py:{name}") == [("warning", FUNCTION_UNCHECKED)], name
    assert not source_file_in(workspace, "lib/none.py", None).exists


def test_a_star_import_leaves_any_name_possible(tmp_path):
    write(tmp_path, "lib/star.py", "from os.path import *\n\ndef main(x):\n    return x\n")
    listing = functions_in_file(tmp_path / "lib/star.py")
    assert listing.open_ended
    at = source_file_in(Workspace.open(tmp_path), "lib/star.py", listing)
    found = source_findings(SourceRef("lib/star.py", "join"), AT, lookup_of({"lib/star.py": at}))
    assert errors(found) == []


CHAIN_TS = """\
const suffix = (text: string) => text + '.';
function hidden() {}
export function policySuffix(ctx: unknown) { return ctx; }
export { suffix as addSuffix };
export const made = hidden.bind(null);
export default function (ctx: unknown) { return ctx; }
"""


def test_a_module_hook_is_judged_by_its_exports(tmp_path):
    write(tmp_path, "lib/chain.ts", CHAIN_TS)
    workspace = Workspace.open(tmp_path)
    module = source_file_in(
        workspace, "lib/chain.ts", functions_in_js_file(tmp_path / "lib/chain.ts", module=True)
    )
    assert set(module.functions or ()) == {"policySuffix", "addSuffix", "default"}
    assert module.unchecked == ("made",)
    lookup = lookup_of({"lib/chain.ts": module})

    def found(name: str):
        return rules(source_findings(SourceRef("lib/chain.ts", name), AT, lookup, export=True))

    assert found("policySuffix") == found("addSuffix") == found("default") == []
    # Declared but not exported: the module's importer cannot reach it.
    assert found("hidden") == [("error", FUNCTION_MISSING)]
    assert found("made") == [("warning", FUNCTION_UNCHECKED)]


def test_an_adf_source_must_be_a_file_of_the_agent(tmp_path):
    workspace = Workspace.open(build_adf(tmp_path / "agent.adf"))
    workspace.sync_sources()
    assert source_file_in(workspace, "lib/policy.ts", None).exists
    missing = source_file_in(workspace, "./lib/policy.ts", None)
    assert not missing.exists
    found = source_findings(SourceRef("./lib/policy.ts", "transform"), AT, lambda p: missing)
    assert rules(found) == [("error", SOURCE_MISSING)]
    assert found[0].message.startswith("The hook source './lib/policy.ts' is not a file of the")
    assert "(ADF names its files exactly: 'lib/policy.ts')" in found[0].message


# ---- check-config's warnings for the hook being edited -----------------------------------------


HOOK = {"source": "lib/policy.ts:transform", "scope": None, "retries": 2}


def test_an_unchanged_hook_has_exactly_the_warnings_check_config_gives():
    document = {"pre_llm_hook": dict(HOOK), "limits": {"execution_timeout_ms": 1000}}
    draft = draft_from_config(document["pre_llm_hook"])
    found = config_warnings(draft, document)
    assert [(f.pointer, f.rule) for f in found] == [
        ("/pre_llm_hook/scope", "adf.scope.null"),
        ("/pre_llm_hook/retries", "adf.unknown_key"),
    ]
    assert all(f.severity == "warning" for f in found)
    assert "'retries' is not a pre_llm_hook setting; the runtime ignores it" in found[1].message


def test_an_edited_hook_has_the_warnings_of_what_save_would_write():
    document = {"pre_llm_hook": dict(HOOK)}
    draft = draft_from_config(document["pre_llm_hook"])
    edited = draft.with_rows((TargetRow.main(),))
    # Save writes the scope, so its null is gone; the unknown key is kept, and so is its warning.
    assert [f.rule for f in config_warnings(edited, document)] == ["adf.unknown_key"]
    # A draft with errors is not saved; the keys it would keep are still judged.
    broken = edited.with_rows(())
    assert [f.rule for f in config_warnings(broken, document)] == ["adf.unknown_key"]


def test_a_falsy_hook_is_the_warning_that_there_is_none():
    document = {"pre_llm_hook": False}
    assert [f.rule for f in config_warnings(HookDraft(), document)] == ["adf.no_hook"]


@pytest.mark.parametrize("home, severity", [("adf", "warning"), ("folder", None)])
def test_a_source_leaving_the_folder_is_judged_by_where_sources_live(home, severity):
    document = {"pre_llm_hook": {"source": "../x.ts"}}
    draft = draft_from_config(document["pre_llm_hook"])
    found = [f for f in config_warnings(draft, document, home) if f.rule == "studio.source.path"]
    assert [f.severity for f in found] == ([severity] if severity else [])


# ---- the step-preparation and chain sources of hookstudio.json -----------------------------------


def real_lookup(workspace: Workspace, *, module: bool):
    """What is at a path, with the listing the window would make (exports for a module)."""

    def lookup(path: str) -> SourceFile:
        target = workspace.source_root / path
        listing = None
        if target.is_file():
            listing = (
                functions_in_file(target)
                if path.endswith(".py")
                else functions_in_js_file(target, module=module)
            )
        return source_file_in(workspace, path, listing)

    return lookup


def test_the_bundled_step_and_chain_sources_have_no_findings(sample_workspace):
    workspace = Workspace.open(sample_workspace)
    settings = json.loads((sample_workspace / "hookstudio.json").read_text())
    lookup = real_lookup(workspace, module=True)
    assert step_source_findings(settings["step"], lookup) == []
    assert chain_source_findings(settings["chain"], lookup) == []


def test_a_step_source_names_an_export_of_its_module(sample_workspace):
    workspace = Workspace.open(sample_workspace)
    lookup = real_lookup(workspace, module=True)
    found = step_source_findings({"source": "lib/prepare.ts:prepareStpe"}, lookup)
    assert [(f.pointer, f.severity, f.rule) for f in found] == [
        ("/step/source", "error", FUNCTION_MISSING)
    ]
    assert found[0].message.startswith("lib/prepare.ts has no export `prepareStpe`; it has: ")
    assert "(did you mean `prepareStep`?)" in found[0].message
    # Without a name, a module's step hook is its `prepareStep` export, a Python one `main`.
    assert step_source_findings({"source": "lib/prepare.ts"}, lookup) == []
    found = step_source_findings({"source": "lib/prepare.py"}, lookup)
    assert [f.rule for f in found] == [FUNCTION_MISSING]
    assert "has no function `main`" in found[0].message
    # What the settings rules refuse is theirs to say.
    assert step_source_findings({"source": "../x.ts"}, lookup) == []
    assert step_source_findings(None, lookup) == []


def test_each_chain_hook_source_is_found_at_its_entry(sample_workspace):
    workspace = Workspace.open(sample_workspace)
    lookup = real_lookup(workspace, module=True)
    section = {
        "pre": [
            "historyTrimmerHook",
            {"source": "lib/chain_hooks.ts:routeSmallTalk"},
            {"source": "lib/gone.ts:x", "timeout_ms": 2000},
        ],
        "post": [{"source": "lib/chain_hooks.ts"}, {"source": "lib/chain_hooks.py:nope"}],
    }
    found = chain_source_findings(section, lookup)
    assert [(f.pointer, f.severity, f.rule) for f in found] == [
        ("/chain/pre/2/source", "error", SOURCE_MISSING),
        # Named without a function, a module's chain hook is its default export.
        ("/chain/post/0/source", "error", FUNCTION_MISSING),
        ("/chain/post/1/source", "error", FUNCTION_MISSING),
    ]
    assert "lib/chain_hooks.ts has no export `default`" in found[1].message
    assert "lib/chain_hooks.py has no function `nope`" in found[2].message
