"""What the Node host needs for a hook's ``adf`` calls: the sample's ``adf.replies``, the agent
config's ``tools`` and ``code_execution``, and the studio's ``adf.authorized`` setting, each
malformed part a finding at its exact path."""

from __future__ import annotations

import jsonschema
import pytest

from studio.core.pre_llm.host_calls import (
    AdfSettings,
    code_execution_gates,
    host_options,
    parse_adf_settings,
    tool_gates,
)
from studio.core.pre_llm.outline import pre_llm_outline
from studio.core.pre_llm.sample import PreLlmSample, parse_pre_llm_sample
from studio.core.pre_llm.schemas import schemas
from studio.core.source_ref import SourceRef
from studio.core.workspace.folder import Workspace, WorkspaceFileError
from tests.support.workspaces import REQUEST, write_json


def sample(adf: object) -> dict:
    return {"loop": "main", "request": REQUEST, "adf": adf}


def pointers(found) -> list[tuple[str, str]]:
    return [(f.pointer, f.severity) for f in found]


# ---- the sample's replies ------------------------------------------------------------------

GOOD_REPLIES = {
    "fs_read": {"result": "text"},
    "model_invoke": [
        {"result": "first"},
        {"args": {"messages": []}, "error": {"code": "RATE_LIMITED", "message": "slow down"}},
    ],
}


def test_declared_replies_reach_the_parsed_sample():
    parsed = parse_pre_llm_sample(sample({"replies": GOOD_REPLIES}))
    assert isinstance(parsed, PreLlmSample)
    assert parsed.replies == GOOD_REPLIES
    assert parsed.warnings == ()
    jsonschema.Draft202012Validator(schemas()["pre_llm_sample"]).validate(
        sample({"replies": GOOD_REPLIES})
    )


def test_a_sample_without_adf_has_no_replies():
    parsed = parse_pre_llm_sample({"request": REQUEST})
    assert isinstance(parsed, PreLlmSample)
    assert parsed.replies == {}


@pytest.mark.parametrize(
    ("adf", "expected"),
    [
        ([], [("/adf", "error")]),
        ({"replies": []}, [("/adf/replies", "error")]),
        ({"replies": {"fs_read": "text"}}, [("/adf/replies/fs_read", "error")]),
        ({"replies": {"fs_read": {}}}, [("/adf/replies/fs_read", "error")]),
        (
            {"replies": {"fs_read": {"result": 1, "error": {"code": "X", "message": "m"}}}},
            [("/adf/replies/fs_read", "error")],
        ),
        (
            {"replies": {"fs_read": [{"result": 1}, {"error": {"code": "", "message": 3}}]}},
            [
                ("/adf/replies/fs_read/1/error/code", "error"),
                ("/adf/replies/fs_read/1/error/message", "error"),
            ],
        ),
        (
            {"replies": {"fs_read": [{"result": 1, "reslt": 2}]}},
            [("/adf/replies/fs_read/0/reslt", "error")],
        ),
        ({"replies": {}, "recorded": True}, [("/adf/recorded", "warning")]),
    ],
)
def test_malformed_replies_are_findings_at_their_paths(adf, expected):
    parsed = parse_pre_llm_sample(sample(adf))
    found = parsed.warnings if isinstance(parsed, PreLlmSample) else parsed
    assert pointers(found) == expected


def test_a_reply_schema_agrees_with_the_validator_on_a_reply_with_both_parts():
    document = sample({"replies": {"x": {"result": 1, "error": {"code": "C", "message": "m"}}}})
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schemas()["pre_llm_sample"]).validate(document)


# ---- the agent config ----------------------------------------------------------------------


def test_tools_are_read_by_name_with_flags_false_unless_set():
    tools, found = tool_gates(
        {"tools": [{"name": "fs_read", "enabled": True}, {"name": "vault", "restricted": True}]}
    )
    assert found == []
    assert tools == {
        "fs_read": {"enabled": True, "restricted": False},
        "vault": {"enabled": False, "restricted": True},
    }


@pytest.mark.parametrize(
    ("tools", "expected"),
    [
        ({"fs_read": True}, ["/tools"]),
        (["fs_read"], ["/tools/0"]),
        ([{"enabled": True}], ["/tools/0/name"]),
        (
            [{"name": "a", "enabled": 1, "restricted": "no"}],
            ["/tools/0/enabled", "/tools/0/restricted"],
        ),
    ],
)
def test_a_malformed_tools_entry_is_a_finding_at_its_path(tools, expected):
    _, found = tool_gates({"tools": tools})
    assert [f.pointer for f in found] == expected
    assert all(f.severity == "error" for f in found)


def test_code_execution_switches_and_restricted_methods():
    switches, restricted, found = code_execution_gates({})
    assert (switches, restricted, found) == ({}, ["attestation_issue"], [])
    switches, restricted, found = code_execution_gates(
        {"code_execution": {"network": True, "sys_lambda": False, "restricted_methods": ["x"]}}
    )
    assert switches == {"network": True, "sys_lambda": False}
    assert restricted == ["x"]
    assert found == []
    _, _, found = code_execution_gates({"code_execution": {"restricted_methods": "x"}})
    assert [f.pointer for f in found] == ["/code_execution/restricted_methods"]
    _, _, found = code_execution_gates({"code_execution": []})
    assert [f.pointer for f in found] == ["/code_execution"]


def test_the_hook_runs_with_its_source_files_authorization():
    ref = SourceRef("lib/hook.ts", "main")
    options, found = host_options({}, {}, AdfSettings(authorized=("lib/hook.ts",)), ref)
    assert found == []
    assert options["authorized"] is True
    assert options["chain"] == ["lib/hook.ts:main"]
    options, _ = host_options({}, {}, AdfSettings(authorized=("lib/other.ts",)), ref)
    assert options["authorized"] is False
    options, _ = host_options({}, {}, None, ref)
    assert options["authorized"] is False
    assert options["authorized_sources"] == []


# ---- the studio's setting ------------------------------------------------------------------


def test_the_authorized_setting_is_read_through_the_workspace_settings(tmp_path):
    write_json(tmp_path / "hookstudio.json", {"version": 1, "adf": {"authorized": ["lib/a.ts"]}})
    settings = Workspace.open(tmp_path).settings()
    assert settings.section("adf") == AdfSettings(authorized=("lib/a.ts",))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([], ["/adf"]),
        ({"authorized": "lib/a.ts"}, ["/adf/authorized"]),
        ({"authorized": ["lib/a.ts", 3, ""]}, ["/adf/authorized/1", "/adf/authorized/2"]),
        ({"authorised": []}, ["/adf/authorised"]),
    ],
)
def test_a_malformed_authorized_setting_names_its_path(tmp_path, value, expected):
    write_json(tmp_path / "hookstudio.json", {"version": 1, "adf": value})
    with pytest.raises(WorkspaceFileError) as caught:
        Workspace.open(tmp_path).settings()
    assert [f.pointer for f in caught.value.findings] == expected
    assert isinstance(parse_adf_settings(value), list)


def test_the_outline_shows_the_declared_replies():
    rows = pre_llm_outline(sample({"replies": GOOD_REPLIES}))
    (row,) = [r for r in rows if r.pointer == "/adf/replies"]
    assert row.label == "ADF replies"
    assert row.detail == "fs_read, model_invoke"
    assert row.children is not None
    assert [c.pointer for c in row.children()] == [
        "/adf/replies/fs_read",
        "/adf/replies/model_invoke",
    ]
    assert not [r for r in pre_llm_outline({"request": REQUEST}) if r.pointer == "/adf/replies"]
