"""The studio's data models are built ahead of their first use, once the window is up.

Each model defers building its validator (``defer_build`` in its config) from import to first
use: building them all took a good part of the window's start, and the window needs only a few
to show itself. :func:`build_deferred_models` builds the rest off the GUI thread after the first
paint, so the first run does not pay for them either.
"""

from __future__ import annotations

from pydantic import BaseModel

STUDIO_PACKAGE = "studio."


def studio_models() -> list[type[BaseModel]]:
    """Every model class of the studio's modules imported so far."""
    found: list[type[BaseModel]] = []
    pending = list(BaseModel.__subclasses__())
    while pending:
        model = pending.pop()
        pending.extend(model.__subclasses__())
        if model.__module__.startswith(STUDIO_PACKAGE) and model not in found:
            found.append(model)
    return found


def build_deferred_models() -> int:
    """Build the validators of the studio's models that have none yet; how many were built."""
    built = 0
    for model in studio_models():
        if not model.__pydantic_complete__:
            model.model_rebuild()
            built += 1
    return built
