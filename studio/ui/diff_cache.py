"""The diffs of the last few runs, each computed once off the GUI thread and shared by every
view that shows the run. Apart from the diff view, so that a window with no run on show does not
load the diff's code."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

from studio.ui.engine_bridge import EngineBridge, Job

if TYPE_CHECKING:
    from studio.ui.result_diff_sides import DiffSides

DIFFS_KEPT = 8


class DiffCache:
    """The diffs of the last few runs, each computed once by the engine's worker threads and
    shared by every view that shows the run."""

    def __init__(self, bridge: EngineBridge, keep: int = DIFFS_KEPT) -> None:
        self._bridge = bridge
        self._keep = keep
        self._jobs: OrderedDict[str, Job] = OrderedDict()

    def job(self, key: str, sides: DiffSides) -> Job:
        """The diff of ``sides`` known as ``key``: asked for the first time, it starts now."""
        from studio.core.pre_llm.diff import diff_request

        job = self._jobs.get(key)
        if job is None or job.cancelled:
            job = self._bridge.submit(diff_request, sides.original, sides.transformed)
            self._jobs[key] = job
            while len(self._jobs) > self._keep:
                self._jobs.popitem(last=False)
        else:
            self._jobs.move_to_end(key)
        return job
