"""The JSON Schemas are valid draft 2020-12 and agree with the validators they document."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from studio import cli
from studio.core.chain.builtins import BUILTIN_HOOKS
from studio.core.chain.config import (
    CONFIG_KEYS,
    MAX_HOOK_TIMEOUT_MS,
    ChainConfig,
    parse_chain_config,
)
from studio.core.chain.sample import (
    ChainSample,
    parse_chain_sample,
)
from studio.core.pre_llm.config import check_agent_config, validate_hook_config
from studio.core.registry import CONTRACTS
from studio.core.schemas import all_schemas
from studio.core.step.check import AmendmentDocumentError, parse_document
from studio.core.step.sample import StepSample, parse_step_sample
from studio.core.workspace.folder import STUDIO_FILE, StudioSettings, Workspace, WorkspaceFileError
from tests.support.paths import BUNDLED_WORKSPACE as WORKSPACE

SCHEMAS = all_schemas()


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_each_schema_is_a_valid_draft_2020_12_schema(name):
    jsonschema.Draft202012Validator.check_schema(SCHEMAS[name])


def schema_accepts(name: str, value: object) -> bool:
    return jsonschema.Draft202012Validator(SCHEMAS[name]).is_valid(value)


# Loop names without a newline: Python's ``re`` lets ``$`` match before a final newline, which
# the schema's ECMA-262 pattern does not, so the python-jsonschema library would disagree there.
names = st.sampled_from(["a", "main", "Researcher", "r-2", "x_y", "", "a" * 33, "é", 3])
values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 400000),
    st.sampled_from([999, 1000, 1000.0, 1000.5, 300000, 300001]),
    st.sampled_from(["all", "main", "loops", "ALL", "", "  "]),
    st.lists(names, max_size=4),
    st.text(max_size=3),
)
hooks = st.dictionaries(
    st.sampled_from(["source", "scope", "loops", "include_main", "timeout_ms"]), values
) | st.fixed_dictionaries(
    {"source": st.sampled_from(["a.py", " b.py:go ", "", "\u3000"])},
    optional={
        "scope": st.sampled_from(["all", "main", "loops", None]),
        "loops": st.lists(names, max_size=3),
        "include_main": st.sampled_from([True, False, 1, None]),
        "timeout_ms": st.sampled_from([1000, 1000.0, 999, 5000, True, "5000", None]),
    },
)


def _refused_by_adf_tools(findings) -> bool:
    """A null scope: the runtime takes it, ADF's editor and sys_update_config (and the schema)
    do not, so the validator only warns."""
    return any(f.rule == "adf.scope.null" for f in findings)


@given(hooks)
def test_the_hook_schema_and_validator_agree(hook):
    found = validate_hook_config(hook)
    errors = [f for f in found if f.severity == "error"]
    assert schema_accepts("pre_llm_hook", hook) == (not errors and not _refused_by_adf_tools(found))


@given(hooks, st.sampled_from([None, 1, 0, 1.5, 60000.0, True, 10**400]))
def test_the_agent_config_schema_and_validator_agree(hook, limit):
    document: dict = {"pre_llm_hook": hook}
    if limit is not None:
        document["limits"] = {"execution_timeout_ms": limit}
    check = check_agent_config(document)
    works = check.valid and not check.runtime_errors and not _refused_by_adf_tools(check.findings)
    assert schema_accepts("agent_config", document) == works


# ---------------------------------------------------------------------------------------------
# The studio's own files: hookstudio.json, step and chain samples, the check-amendment document

NEW_SCHEMAS = ("studio_settings", "step_sample", "chain_sample", "amendment_check")

SAMPLE_SCHEMAS = {contract.name: contract.sample_schema for contract in CONTRACTS.values()}


def chain_config_accepts(value: object) -> bool:
    schema = {"$ref": "#/$defs/chain_config", "$defs": SCHEMAS["studio_settings"]["$defs"]}
    return jsonschema.Draft202012Validator(schema).is_valid(value)


@pytest.mark.parametrize("name", NEW_SCHEMAS)
def test_each_new_schema_is_registered_and_valid(name):
    schema = SCHEMAS[name]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].endswith("/" + name)
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("name", NEW_SCHEMAS)
def test_the_schema_command_prints_each_new_schema(name, capsys):
    assert cli.main(["schema", name]) == 0
    assert json.loads(capsys.readouterr().out) == SCHEMAS[name]


def test_all_schemas_returns_fresh_copies():
    first = all_schemas()
    first["step_sample"]["$defs"]["step"]["properties"]["index"]["maximum"] = 0
    assert all_schemas() == SCHEMAS


def test_the_chain_schema_lists_each_built_in_under_its_own_chain():
    chain = SCHEMAS["studio_settings"]["$defs"]["chain_config"]
    for name, (kind, _) in BUILTIN_HOOKS.items():
        assert chain_config_accepts({kind: [name]})
        other = "post" if kind == "pre" else "pre"
        assert not chain_config_accepts({other: [name]})
    assert set(chain["properties"]) == set(CONFIG_KEYS)


def test_the_settings_schema_keeps_the_models_defaults():
    properties = SCHEMAS["studio_settings"]["properties"]
    sections = {c.settings_key for c in CONTRACTS.values() if c.settings_key is not None}
    assert sections == {"step", "chain", "adf", "invocation"}
    assert set(properties) == set(StudioSettings.model_fields) | sections
    for key, default in StudioSettings().model_dump(mode="json").items():
        assert properties[key]["default"] == default
    for key in sections:
        assert properties[key]["default"] is None


@pytest.mark.parametrize(
    "path", sorted((WORKSPACE / "samples").glob("*.json")), ids=lambda p: p.stem
)
def test_each_bundled_sample_validates_against_its_contracts_schema(path):
    document = json.loads(path.read_text())
    name = SAMPLE_SCHEMAS[document.get("contract", "pre_llm")]
    jsonschema.Draft202012Validator(SCHEMAS[name]).validate(document)


def test_the_bundled_samples_cover_every_contract():
    contracts = {
        json.loads(p.read_text()).get("contract", "pre_llm")
        for p in (WORKSPACE / "samples").glob("*.json")
    }
    assert contracts == set(SAMPLE_SCHEMAS)


@pytest.mark.parametrize(
    ("file", "name"), [("agent.json", "agent_config"), ("hookstudio.json", "studio_settings")]
)
def test_each_bundled_config_validates_against_its_schema(file, name):
    document = json.loads((WORKSPACE / file).read_text())
    jsonschema.Draft202012Validator(SCHEMAS[name]).validate(document)


# ---- hookstudio.json: schema-valid iff the studio accepts the file ----------------------------
#
# The studio's parser is Workspace.settings() (the pydantic model and the loop-name rule), and
# parse_chain_config on the chain section, which a chain run applies. Left out, because JSON
# Schema cannot say them:
# - 1024.0 for a limit. The limits are strict pydantic ints, which refuse 1024.0, but to JSON
#   Schema 1024.0 is the integer 1024.
# - a loop name that ends in a newline, which Python's "$" lets through the schema's pattern.

SETTINGS_VALID = [
    {},
    {"version": 1},
    {"version": 1.0},
    {"loops": ["researcher", "r-2", "x_y", "0", "a" * 32]},
    {"env": {"SUPPORT_REGION": "eu", "EMPTY": ""}, "pass_env": ["OPENAI_API_KEY"]},
    {"limits": {}},
    {"limits": {"memory_mb": 16, "output_kb": 1, "result_mb": 1}},
    {"limits": {"memory_mb": 1 << 20, "output_kb": 1 << 20, "result_mb": 1 << 14}},
    {"step": {"source": "lib/prepare.py:prepare_step"}},
    {"step": None},
    {"chain": None},
    {"chain": {}},
    {"chain": {"pre": ["historyTrimmerHook"], "default_post_validators": False}},
    json.loads((WORKSPACE / "hookstudio.json").read_text()),
]
SETTINGS_INVALID = [
    {"step": {"source": ""}},
    {"step": {"source": "   "}},
    {"version": True},
    [],
    "hookstudio",
    None,
    {"version": 2},
    {"version": "1"},
    {"version": None},
    {"loops": ["main"]},
    {"loops": ["Researcher"]},
    {"loops": ["a" * 33]},
    {"loops": [""]},
    {"loops": ["-x"]},
    {"loops": [3]},
    {"loops": "researcher"},
    {"env": {"SUPPORT_REGION": 1}},
    {"env": ["SUPPORT_REGION"]},
    {"pass_env": [1]},
    {"pass_env": "HOME"},
    {"limits": None},
    {"limits": {"memory_mb": 15}},
    {"limits": {"memory_mb": (1 << 20) + 1}},
    {"limits": {"output_kb": 0}},
    {"limits": {"output_kb": (1 << 20) + 1}},
    {"limits": {"result_mb": (1 << 14) + 1}},
    {"limits": {"memory_mb": "1024"}},
    {"limits": {"memory_mb": True}},
    {"limits": {"memory_mb": 1024.5}},
    {"limits": {"cpu_s": 10}},
    {"step": {}},
    {"step": {"source": 1}},
    {"step": {"source": "lib/prepare.py", "timeout_ms": 5000}},
    {"step": "lib/prepare.py"},
    {"chain": []},
    {"chain": "historyTrimmerHook"},
    {"chain": {"pre": ["toolCallValidatorHook"]}},
    {"chain": {"pre": [{"source": "../outside.py"}]}},
    {"chains": {}},
]


def settings_accepted(document: object, folder: Path) -> bool:
    (folder / STUDIO_FILE).write_text(json.dumps(document))
    try:
        settings = Workspace.open(folder).settings()
    except WorkspaceFileError:
        return False
    chain = settings.section("chain")
    if chain is None:
        return True
    return isinstance(parse_chain_config(chain, base=("chain",)), ChainConfig)


@pytest.mark.parametrize("document", SETTINGS_VALID + SETTINGS_INVALID, ids=repr)
def test_the_settings_schema_and_the_studio_agree(document, tmp_path):
    expected = any(document is valid for valid in SETTINGS_VALID)
    assert settings_accepted(document, tmp_path) is expected
    assert schema_accepts("studio_settings", document) is expected


# ---- the chain section: schema-valid iff parse_chain_config accepts it ------------------------
#
# Left out, because no JSON Schema pattern can say them:
# - a source path that leaves the workspace after a first segment that stays in it
#   ("a/../../x.py"): telling needs a count of the '..' segments against the others;
# - a drive letter that is not ASCII ("é:x.py"): the patterns have no Unicode letter class that
#   ECMA-262 without the u flag and Python's re both read.
# (The source patterns end with (?![\s\S]), not "$", so a final newline agrees too.)

CHAIN_VALID = [
    {},
    {"pre": [], "post": [], "default_post_validators": False},
    {"pre": ["historyTrimmerHook", "lazyModelDefaultsHook"]},
    # Warnings only: a built-in listed twice, a default validator listed by hand.
    {"pre": ["historyTrimmerHook", "historyTrimmerHook"]},
    {"post": ["toolCallValidatorHook", "repetitionDetectorHook"]},
    {"pre": [{"source": "lib/a.py:fn", "timeout_ms": 1}]},
    {"post": [{"source": "lib/b.py", "timeout_ms": MAX_HOOK_TIMEOUT_MS}]},
    {"post": [{"source": "lib/b.py", "timeout_ms": 1000.0}]},
    {"pre": [{"source": source} for source in ("a.py", " ", "./a.py", "a/../b.py", "a/..")]},
    {"pre": [{"source": source} for source in ("..a/x.py", "...", "..:x.py", "x/..:main")]},
    {"pre": [{"source": source} for source in ("C:main", ":main", "./:main", "ab:c:d")]},
    {"pre": ["historyTrimmerHook", {"source": "lib/x.py:go"}], "post": [{"source": "y.py"}]},
]
CHAIN_INVALID = [
    [],
    None,
    "historyTrimmerHook",
    {"pre": "historyTrimmerHook"},
    {"pre": None},
    {"post": {}},
    {"pre": [None]},
    {"pre": [1]},
    {"pre": [["historyTrimmerHook"]]},
    {"pre": ["toolCallValidatorHook"]},
    {"post": ["lazyModelDefaultsHook"]},
    {"pre": ["historyTrimmer"]},
    {"pre": ["lib/a.py:fn"]},
    {"pre": [{}]},
    {"pre": [{"timeout_ms": 1000}]},
    {"pre": [{"source": ""}]},
    {"pre": [{"source": None}]},
    {"pre": [{"source": 3}]},
    {"pre": [{"source": "a.py", "timeout": 5000}]},
    {"pre": [{"source": "a.py", "builtin": "historyTrimmerHook"}]},
    *(
        {"post": [{"source": "a.py", "timeout_ms": timeout}]}
        for timeout in (0, -1, MAX_HOOK_TIMEOUT_MS + 1, 1.5, True, "5000", None)
    ),
    *(
        {"pre": [{"source": source}]}
        for source in (
            "/abs/hooks.py",
            "\\abs\\hooks.py",
            "C:\\hooks.py",
            "c:hooks.py",
            "C:",
            "x:a:b",
            "a\x00.py",
            "..",
            "../x.py",
            "..\\x.py",
            "..:main",
            "./../x.py",
            ".//../x.py",
            "./..",
        )
    ),
    {"default_post_validators": "yes"},
    {"default_post_validators": None},
    {"default_post_validators": 1},
    {"pre": [], "posts": []},
]


@pytest.mark.parametrize("value", CHAIN_VALID + CHAIN_INVALID, ids=repr)
def test_the_chain_schema_and_parse_chain_config_agree(value):
    expected = any(value is valid for valid in CHAIN_VALID)
    assert isinstance(parse_chain_config(value), ChainConfig) is expected
    assert chain_config_accepts(value) is expected


# ---- samples and the check-amendment document: spot checks against their parsers -------------


def _bundled(name: str) -> dict:
    return json.loads((WORKSPACE / "samples" / f"{name}.json").read_text())


def _changed(document: dict, change) -> dict:
    copy_ = copy.deepcopy(document)
    change(copy_)
    return copy_


STEP = _bundled("step-escalated")
STEP_CASES = [
    (STEP, True),
    (_changed(STEP, lambda d: d.pop("resources")), True),
    (_changed(STEP, lambda d: d.update(deadline_ms=0)), True),
    (_changed(STEP, lambda d: d["step"].update(index=0, reason="initial", messages=[])), True),
    (_changed(STEP, lambda d: d["baseline"].update(activeTools=None, inputBudget=None)), True),
    (
        _changed(
            STEP,
            lambda d: d["resources"].append(
                {"identity": "blackboard:x", "failure": "unauthorized"}
            ),
        ),
        True,
    ),
    (_changed(STEP, lambda d: d.update(contract="chain")), False),
    (_changed(STEP, lambda d: d.pop("contract")), False),
    (_changed(STEP, lambda d: d.update(extra=1)), False),
    (_changed(STEP, lambda d: d.pop("baseline")), False),
    (_changed(STEP, lambda d: d["step"].update(index=0)), False),
    (_changed(STEP, lambda d: d["step"].update(reason="initial")), False),
    (_changed(STEP, lambda d: d["step"].update(reason="later")), False),
    (_changed(STEP, lambda d: d.update(deadline_ms=-1)), False),
    (_changed(STEP, lambda d: d["resources"][0].update(identity="support-control")), False),
    (_changed(STEP, lambda d: d["resources"][0].update(failure="undeclared")), False),
    (_changed(STEP, lambda d: d["resources"][0].pop("value")), False),
    (_changed(STEP, lambda d: d["step"]["messages"][0].update(role="robot")), False),
    (_changed(STEP, lambda d: d["step"]["messages"][2].pop("metadata")), False),
    (
        _changed(STEP, lambda d: d["step"]["messages"][1]["metadata"]["toolCalls"][0].pop("id")),
        False,
    ),
    (
        _changed(
            STEP,
            lambda d: d["step"]["messages"][0].update(content=[{"type": "reasoning", "text": ""}]),
        ),
        False,
    ),
    (
        _changed(STEP, lambda d: d["baseline"]["contributors"].append({"id": "x", "kind": "x"})),
        False,
    ),
    (_changed(STEP, lambda d: d["baseline"].update(tools=["a", "a"])), False),
]


@pytest.mark.parametrize(("document", "valid"), STEP_CASES)
def test_the_step_sample_schema_and_parser_agree_on_these(document, valid):
    assert isinstance(parse_step_sample(document), StepSample) is valid
    assert schema_accepts("step_sample", document) is valid


CHAIN = _bundled("chain-refund")
CHAIN_SAMPLE_CASES = [
    (CHAIN, True),
    (_changed(CHAIN, lambda d: d.update(name=None, description="x")), True),
    (_changed(CHAIN, lambda d: d["context"].update(modelProfile=None)), True),
    (_changed(CHAIN, lambda d: d["responses"][1].pop("content")), True),
    (_changed(CHAIN, lambda d: d.update(responses=[])), True),
    (_changed(CHAIN, lambda d: d.pop("contract")), False),
    (_changed(CHAIN, lambda d: d.pop("responses")), False),
    (_changed(CHAIN, lambda d: d["context"].pop("state")), False),
    (_changed(CHAIN, lambda d: d["context"].update(model="")), False),
    (_changed(CHAIN, lambda d: d["context"]["modelProfile"].pop("supportsVision")), False),
    (_changed(CHAIN, lambda d: d["responses"][0].pop("content")), False),
    (_changed(CHAIN, lambda d: d["responses"][0].update(role="robot")), False),
    (_changed(CHAIN, lambda d: d["responses"][1]["toolCalls"][0].update(name="")), False),
    (_changed(CHAIN, lambda d: d["context"]["tools"].append({"description": "x"})), False),
    (
        _changed(CHAIN, lambda d: d["context"]["messages"][0].update(content=[{"type": "text"}])),
        False,
    ),
]


@pytest.mark.parametrize(("document", "valid"), CHAIN_SAMPLE_CASES)
def test_the_chain_sample_schema_and_parser_agree_on_these(document, valid):
    assert isinstance(parse_chain_sample(document), ChainSample) is valid
    assert schema_accepts("chain_sample", document) is valid


CHECK = {"baseline": STEP["baseline"], "amendment": {"model": "review-model"}}
CHECK_CASES = [
    (CHECK, True),
    ({**CHECK, "amendment": "anything"}, True),
    ({**CHECK, "step": {"index": 2, "reason": "tool-result", "note": "ignored"}}, True),
    ({**CHECK, "step": None, "resources": None}, True),
    ({**CHECK, "resources": [{"identity": "working-state:x", "value": None}]}, True),
    ({"baseline": STEP["baseline"]}, False),
    ({**CHECK, "extra": 1}, False),
    ({**CHECK, "step": {"index": -1}}, False),
    ({**CHECK, "step": {"reason": "later"}}, False),
    ({**CHECK, "resources": [{"identity": "", "value": 1}]}, False),
    ({**CHECK, "resources": [{"identity": "x"}]}, False),
    ({**CHECK, "baseline": {"tools": []}}, False),
]


@pytest.mark.parametrize(("document", "valid"), CHECK_CASES)
def test_the_amendment_check_schema_and_parser_agree_on_these(document, valid):
    try:
        parse_document(document)
        parsed = True
    except AmendmentDocumentError:
        parsed = False
    assert parsed is valid
    assert schema_accepts("amendment_check", document) is valid
