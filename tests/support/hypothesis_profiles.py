"""Hypothesis profiles: ``quick`` (the default) keeps ``make test`` short; ``deep`` (``make
test-deep``, and CI) tries ten times as many examples and has no deadline.

A property that wants more examples than usual asks for ``examples(n)``: ``n`` is what it wants
under Hypothesis's own default of 100, and the active profile scales it like every other
property, so ``deep`` tries each one as many times more as the rest.
"""

from __future__ import annotations

import os

from hypothesis import settings

PROFILE_VARIABLE = "HYPOTHESIS_PROFILE"
DEFAULT_PROFILE = "quick"
HYPOTHESIS_DEFAULT_EXAMPLES = 100

settings.register_profile("quick", max_examples=50)
settings.register_profile("deep", max_examples=500, deadline=None, print_blob=True)


def load_profile() -> None:
    """Load the profile ``HYPOTHESIS_PROFILE`` names (``quick`` when unset); pytest's
    ``--hypothesis-profile`` still overrides it. ``pytest -v`` names the profile in use."""
    settings.load_profile(os.environ.get(PROFILE_VARIABLE) or DEFAULT_PROFILE)


def examples(n: int) -> int:
    """``n`` examples, scaled as the active profile scales Hypothesis's default of 100."""
    return max(1, n * settings.default.max_examples // HYPOTHESIS_DEFAULT_EXAMPLES)
