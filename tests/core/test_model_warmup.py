"""The studio's data models build their validators on first use, or all at once when asked."""

from __future__ import annotations

import json
import subprocess
import sys

# A fresh interpreter: in the test process other tests have built the models already.
CHECK = """
import json
from studio.ui.app import QT_FREE_MODULES
import importlib
for name in QT_FREE_MODULES:
    importlib.import_module(name)
from studio.core.model_warmup import build_deferred_models, studio_models
from studio.core.turn_error import TurnError
models = studio_models()
unbuilt = sorted(m.__qualname__ for m in models if not m.__pydantic_complete__)
error = TurnError.model_validate({"kind": "timeout", "reason": "timeout", "message": "slow"})
first_use = TurnError.__pydantic_complete__
built = build_deferred_models()
left = sorted(m.__qualname__ for m in studio_models() if not m.__pydantic_complete__)
print(json.dumps({"unbuilt": unbuilt, "kind": error.kind, "first_use": first_use,
                  "built": built, "left": left, "again": build_deferred_models()}))
"""


def test_models_are_built_on_first_use_or_when_asked() -> None:
    child = subprocess.run(
        [sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120, check=True
    )
    seen = json.loads(child.stdout.strip().splitlines()[-1])
    # Importing the window's Qt-free modules builds none of the run's models.
    assert {"RunOutcome", "TurnError", "StoredRecord"} <= set(seen["unbuilt"])
    assert seen["kind"] == "timeout"  # a model validates on first use as before
    assert seen["first_use"] is True
    assert seen["built"] == len(seen["unbuilt"]) - 1  # all but the one already used
    assert seen["left"] == []
    assert seen["again"] == 0
