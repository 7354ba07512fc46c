"""Every contract the studio speaks. Adding one is a package under ``studio/core`` and a line
here; the runner, the CLI, the schemas, the records and the window find it in this list."""

from __future__ import annotations

from studio.core.chain.contract import ChainContract
from studio.core.contract import Contract
from studio.core.invocation.contract import InvocationContract
from studio.core.pre_llm.contract import PreLlmContract
from studio.core.step.contract import StepContract

CONTRACTS: dict[str, Contract] = {
    contract.name: contract
    for contract in (PreLlmContract(), StepContract(), ChainContract(), InvocationContract())
}

DEFAULT_CONTRACT = "pre_llm"
"""The contract of a sample that names none."""


def contract_names_phrase() -> str:
    """``"pre_llm", "step" or "chain"``: the choices, for a finding's message."""
    quoted = [f'"{name}"' for name in CONTRACTS]
    return ", ".join(quoted[:-1]) + " or " + quoted[-1] if len(quoted) > 1 else quoted[0]
