"""The engine tier's fixtures: a small workspace on disk and a runner over it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from studio.core.workspace.folder import Workspace
from tests.support.runners import LiveRunner
from tests.support.workspaces import copy_bundled_workspace, make_workspace


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path / "ws")


@pytest.fixture
def runner(workspace: Workspace) -> Iterator[LiveRunner]:
    live = LiveRunner(workspace)
    yield live
    live.close()


@pytest.fixture
def bundled(tmp_path: Path) -> Iterator[LiveRunner]:
    """A runner over a copy of the bundled workspace."""
    live = LiveRunner(Workspace.open(copy_bundled_workspace(tmp_path / "workspace")))
    yield live
    live.close()
