"""spec/adf.md §7 "Depth": an agent config nested a few thousand levels deep is read, checked,
shown and saved, from a folder's agent.json and from an ``.adf``, as the runtime reads it; only
past the studio's stated bound (``MAX_DEPTH``) is it refused, with a message saying so."""

from __future__ import annotations

import json

import pytest

from studio.core.json.deep import MAX_DEPTH, deep_json
from studio.core.json.files import JsonFileError, parse_json_text
from studio.core.pre_llm.config import check_agent_config
from studio.core.workspace.adf_file import AdfFile, AdfFileError
from studio.core.workspace.adf_workspace import AdfHookDocument
from studio.core.workspace.agent_document import AgentDocument
from tests.support.adf_files import AdfSpec, build_adf, default_config

DEPTH = 4_000


def deep_text(levels: int) -> str:
    return "[" * levels + "]" * levels


def config_text(levels: int, hook: str = '{"source": "lib/policy.ts:go"}') -> str:
    return (
        '{"pre_llm_hook": ' + hook + ', "limits": {"execution_timeout_ms": 5000}, '
        '"metadata": {"updated_at": "x", "deep": ' + deep_text(levels) + "}}"
    )


def test_a_deep_document_is_parsed_and_checked():
    check = check_agent_config(parse_json_text(config_text(DEPTH)))
    assert check.valid and check.runtime_errors == [] and check.applies_to("main")


@pytest.mark.parametrize("where", ["hook_key", "loops", "limit"])
def test_deep_values_where_the_hook_is_judged(where):
    deep = deep_text(DEPTH)
    hook = {
        "hook_key": '{"source": "a.js", "notes": ' + deep + "}",
        "loops": '{"source": "a.js", "scope": "loops", "loops": ' + deep + "}",
        "limit": '{"source": "a.js"}',
    }[where]
    document = parse_json_text(config_text(3, hook))
    if where == "limit":
        document["limits"]["execution_timeout_ms"] = parse_json_text(deep)
    check = check_agent_config(document)
    expected = {
        "hook_key": (True, ["/pre_llm_hook/notes"], []),
        "loops": (False, ["/pre_llm_hook/loops/0"], []),
        "limit": (True, [], ["/limits/execution_timeout_ms"]),
    }[where]
    found = (
        check.valid,
        [f.pointer for f in check.findings],
        [f.pointer for f in check.runtime_errors],
    )
    assert found == expected


def test_past_the_bound_the_refusal_says_why():
    with pytest.raises(JsonFileError, match=f"nested deeper than {MAX_DEPTH:,} levels"):
        parse_json_text(deep_text(2 * MAX_DEPTH))


def test_an_adf_with_a_deep_config_is_read_and_its_hook_saved(tmp_path):
    path = build_adf(tmp_path / "deep.adf", AdfSpec(config_text=config_text(DEPTH)))
    adf = AdfFile.open(path)
    check = check_agent_config(adf.config(), "adf")
    assert check.valid and check.hook is not None
    document = AdfHookDocument.load_adf(adf)
    document.save_config({"source": "lib/policy.ts:other", "scope": "main"})
    saved = adf.config()
    assert saved["pre_llm_hook"] == {"source": "lib/policy.ts:other", "scope": "main"}
    with deep_json():
        assert json.dumps(saved["metadata"]["deep"]).count("[") == DEPTH


def test_an_adf_config_past_the_bound_is_an_error_not_a_crash(tmp_path):
    path = build_adf(tmp_path / "too-deep.adf", AdfSpec(config_text=config_text(2 * MAX_DEPTH)))
    with pytest.raises(AdfFileError, match="nested deeper than"):
        AdfFile.open(path).config()


def test_a_folder_agent_json_with_a_deep_config_is_edited(tmp_path):
    agent = tmp_path / "agent.json"
    agent.write_text(config_text(DEPTH), encoding="utf-8")
    document = AgentDocument.load(agent)
    assert document.hook_config == {"source": "lib/policy.ts:go"}
    document.save_config({"source": "lib/p.js", "scope": None})
    saved = parse_json_text(agent.read_text(encoding="utf-8"))
    assert saved["pre_llm_hook"] == {"source": "lib/p.js", "scope": None}
    assert check_agent_config(saved).valid


def test_the_default_config_helper_is_unchanged():
    # The fixture's own config is shallow: the deep cases above are the only deep ones.
    assert "deep" not in json.dumps(default_config())
