"""Every registered contract answers the whole Contract interface consistently."""

from __future__ import annotations

import jsonschema
import pytest

from studio.core.contract import Contract, merged_checks
from studio.core.registry import CONTRACTS, DEFAULT_CONTRACT, contract_names_phrase
from studio.core.schemas import all_schemas

CONTRACT_LIST = list(CONTRACTS.values())


def test_names_are_unique_and_the_default_is_registered():
    assert DEFAULT_CONTRACT in CONTRACTS
    assert [c.name for c in CONTRACT_LIST] == list(CONTRACTS)
    assert len({c.label for c in CONTRACT_LIST}) == len(CONTRACT_LIST)
    assert contract_names_phrase() == '"pre_llm", "step", "chain" or "invocation"'


@pytest.mark.parametrize("contract", CONTRACT_LIST, ids=lambda c: c.name)
def test_the_template_is_a_valid_sample_of_its_own_schema(contract: Contract):
    template = contract.sample_template()
    parsed = contract.parse_sample(template)
    assert not isinstance(parsed, list), parsed
    assert contract.sample_findings(template) == []
    schema = contract.schemas()[contract.sample_schema]
    jsonschema.Draft202012Validator(schema).validate(template)
    assert template is not contract.sample_template()


@pytest.mark.parametrize("contract", CONTRACT_LIST, ids=lambda c: c.name)
def test_an_invalid_sample_gives_findings_with_paths(contract: Contract):
    findings = contract.parse_sample({"contract": contract.name, "unknown": 1})
    assert isinstance(findings, list) and findings
    assert any(f.severity == "error" for f in findings)


def test_every_contract_schema_is_published():
    published = all_schemas()
    for contract in CONTRACT_LIST:
        for name in contract.schemas():
            assert name in published


def test_the_checks_have_distinct_command_names():
    checks = [check for c in CONTRACT_LIST for check in c.checks()]
    names = [check.name for check in merged_checks(checks)]
    assert sorted(names) == ["check-amendment", "check-config", "check-request"]
    # a check that shares its command with another contract's is picked by its flag
    assert [c.flag for c in checks if c.name == "check-amendment"] == [None, "--invocation"]
