"""The JSON Schemas are valid draft 2020-12 and agree with the validators they document."""

from __future__ import annotations

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from studio.core.pre_llm_config import check_agent_config, validate_hook_config
from studio.core.schemas import all_schemas

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


@given(hooks)
def test_the_hook_schema_and_validator_agree(hook):
    errors = [f for f in validate_hook_config(hook) if f.severity == "error"]
    assert schema_accepts("pre_llm_hook", hook) == (not errors)


@given(hooks, st.sampled_from([None, 1, 0, 1.5, 60000.0, True]))
def test_the_agent_config_schema_and_validator_agree(hook, limit):
    document: dict = {"pre_llm_hook": hook}
    if limit is not None:
        document["limits"] = {"execution_timeout_ms": limit}
    assert schema_accepts("agent_config", document) == check_agent_config(document).valid
