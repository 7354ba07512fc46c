"""Invocation preparation (spec/crux.md §9): built on the step-preparation contract, whose
baseline, amendment rules, decision record and resources it reuses."""

BUILDS_ON = ("studio.core.step",)
"""The contract packages this one imports; any other import of a contract package is refused."""
