"""What the records table shows of a run: its columns, the text of each cell, its tooltip, and
the run's start time as a date and time in the user's locale.

Plain functions over ``RecordSummary``; the table model and the filter (which searches the
cells as shown, off the GUI thread) share them.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from PySide6.QtCore import QDate, QLocale, Qt

from studio.core.records.store import RecordSummary
from studio.core.turn_error import KIND_TITLES, SAMPLE_PROBLEM_KIND
from studio.ui.contract_views import contract_title

TIME, CONTRACT, HOOK, LOOP, SAMPLE, OUTCOME, DURATION = range(7)
HEADERS = ("Time", "Contract", "Hook", "Loop", "Sample", "Outcome", "Duration")
HEADER_TIPS = (
    "When the run started: the date and the local time",
    "The hook contract the run applied",
    "The hook source and function (a run of a chain of hooks has none)",
    "The loop whose provider call was prepared",
    "The sample the hook ran on",
    "ok, not applied, or the kind of turn error",
    "How long the run took, in milliseconds",
)

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
RUN_ID_ROLE = Qt.ItemDataRole.UserRole + 2

STATUS_LABELS = {"ok": "ok", "not_applied": "not applied", "turn_error": "turn error"}
TODAY = "Today"
YESTERDAY = "Yesterday"
CLOCK = "%H:%M:%S"


def outcome_label(status: str, kind: str | None) -> str:
    """``ok``, ``not applied``, ``turn error: <kind>``, or ``sample problem: sample_invalid``
    (a run the sample ended, not the hook)."""
    if kind == SAMPLE_PROBLEM_KIND:
        return f"sample problem: {kind}"
    if kind:
        return f"{STATUS_LABELS.get(status, status)}: {kind}"
    return STATUS_LABELS.get(status, status)


def time_label(started_at: float) -> str:
    """The local start time to the second, as ``YYYY-MM-DD HH:MM:SS``."""
    return datetime.fromtimestamp(started_at).strftime("%Y-%m-%d %H:%M:%S")


def duration_label(duration_ms: float) -> str:
    if duration_ms >= 10_000:
        return f"{duration_ms / 1000:,.1f} s"
    return f"{duration_ms:,.1f} ms"


class RunDays:
    """The date part of the Time column, as of ``today``: "Today", "Yesterday", or the day in
    the locale's short date format (ISO when the locale is plain C, whose short date is a row
    of bare numbers). One label per calendar day, made once."""

    def __init__(self, today: date | None = None, locale: QLocale | None = None) -> None:
        self.today = today or date.today()
        self._locale = QLocale(locale) if locale is not None else QLocale()
        self._iso = self._locale.language() == QLocale.Language.C
        yesterday = self.today - timedelta(days=1)
        self._labels: dict[tuple[int, int, int], str] = {
            (self.today.year, self.today.month, self.today.day): TODAY,
            (yesterday.year, yesterday.month, yesterday.day): YESTERDAY,
        }

    def day(self, year: int, month: int, day: int) -> str:
        key = (year, month, day)
        label = self._labels.get(key)
        if label is None:
            if self._iso:
                label = f"{year:04d}-{month:02d}-{day:02d}"
            else:
                label = self._locale.toString(
                    QDate(year, month, day), QLocale.FormatType.ShortFormat
                )
            self._labels[key] = label
        return label

    def cell(self, started_at: float) -> str:
        """``Today 14:03:27``, ``12/1/26 14:03:27``…"""
        moment = datetime.fromtimestamp(started_at)
        return f"{self.day(moment.year, moment.month, moment.day)} {moment.strftime(CLOCK)}"


def record_tooltip(summary: RecordSummary, column: int) -> str | None:
    """What a records table's cell says when the pointer rests on it."""
    lines: list[str] = []
    if column == OUTCOME and summary.error_kind:
        lines.append(KIND_TITLES.get(summary.error_kind, summary.error_kind))
    elif column == CONTRACT:
        lines.append(contract_title(summary.contract))
    elif column == TIME:
        lines.append(f"{time_label(summary.started_at)}, run {summary.run_id}")
    elif column == HOOK and summary.hook_label:
        lines.append(summary.hook_label)
    elif column == HOOK:
        lines.append("No single hook: a chain of hooks ran, or none did")
    elif column == DURATION:
        lines.append(f"{summary.duration_ms:,.3f} ms")
    if not summary.has_payload:
        lines.append("payload cleared: only the decision record is kept")
    return "\n".join(lines) or None
