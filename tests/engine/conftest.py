"""The engine tier's fixtures: a small workspace on disk and a runner over it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from studio.core.workspace.folder import Workspace
from tests.support.runners import LiveRunner
from tests.support.workspaces import make_workspace


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path / "ws")


@pytest.fixture
def runner(workspace: Workspace) -> Iterator[LiveRunner]:
    live = LiveRunner(workspace)
    yield live
    live.close()
