"""Two studios (the window and a command-line run, say) that open a workspace's new record store
at the same moment both get it: neither is told the file is locked or belongs to another
application while the other is making it."""

from __future__ import annotations

import threading
from pathlib import Path

from studio.core.records.store import SCHEMA_VERSION, RecordStore

OPENERS = 4
ROUNDS = 30


def open_together(workspace: Path) -> list[str]:
    """Open the store of ``workspace`` from several connections released at once; what each
    ended with."""
    start = threading.Barrier(OPENERS)
    ended: list[str] = []

    def open_one() -> None:
        start.wait()
        try:
            RecordStore.open(workspace).close()
        except Exception as exc:  # what a user would be shown
            ended.append(str(exc))
        else:
            ended.append("opened")

    openers = [threading.Thread(target=open_one) for _ in range(OPENERS)]
    for opener in openers:
        opener.start()
    for opener in openers:
        opener.join()
    return ended


def test_a_new_store_opened_by_several_at_once_opens_for_each(tmp_path: Path) -> None:
    for round_ in range(ROUNDS):
        workspace = tmp_path / f"ws{round_}"
        workspace.mkdir()
        assert open_together(workspace) == ["opened"] * OPENERS
        with RecordStore.open(workspace) as store:
            assert store.schema_version == SCHEMA_VERSION
