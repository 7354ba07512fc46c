"""The runner reads a source as spec/adf.md §7 does: it splits at the last colon only before an
identifier (``lib/a:b.py:c`` is file ``lib/a:b.py``, function ``c``), and ``c:hook.py`` and
``p:1fn`` are plain files whose function is ``main``."""

from __future__ import annotations

import pytest

from tests.support.runners import LiveRunner
from tests.support.workspaces import make_workspace

HOOK = "def {name}(payload):\n    return {{**payload['request'], 'system': {said!r}}}\n"


@pytest.fixture
def live(tmp_path):
    workspace = make_workspace(tmp_path / "ws")
    root = workspace.root
    (root / "lib" / "a:b.py").write_text(HOOK.format(name="c", said="a:b, c"))
    (root / "c:hook.py").write_text(HOOK.format(name="main", said="c:hook.py, main"))
    (root / "p:1fn").write_text(HOOK.format(name="main", said="p:1fn, main"))
    runner = LiveRunner(workspace)
    yield runner
    runner.close()


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("lib/a:b.py:c", "a:b, c"),
        ("c:hook.py", "c:hook.py, main"),
        ("c:hook.py:main", "c:hook.py, main"),
    ],
)
def test_a_source_with_colons_runs_the_file_it_names(live, source, said):
    outcome = live.run(hook_config={"source": source})
    assert outcome.status == "ok", outcome.turn_error
    assert outcome.result["system"] == said


def test_a_colon_before_a_non_identifier_stays_in_the_path(live):
    # p:1fn is a file named p:1fn; with no extension, no studio runtime runs it.
    outcome = live.run(hook_config={"source": "p:1fn"})
    assert outcome.turn_error.kind == "source_unsupported"
    assert "'p:1fn'" in outcome.turn_error.message
