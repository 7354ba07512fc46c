"""The id of a sealed request, in the form the reference runtimes give it.

Both the pre-LLM and the step-preparation records carry one, so it lives outside either contract.
"""

from __future__ import annotations

import uuid
from typing import Final

SEALED_REQUEST_ID_PATTERN: Final = r"^request_[0-9a-f]{32}$"


def new_sealed_request_id() -> str:
    """A fresh id in the reference's form: ``request_`` and a random UUID's 32 hex digits."""
    return f"request_{uuid.uuid4().hex}"
