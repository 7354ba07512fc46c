"""Which runs the Records view shows, and in what order: the filter and the sort over every
stored run, as plain Python meant to run off the GUI thread.

The words a free-text filter looks in (a run's *haystack*) are built once per load, and the
rows are kept in the order shown: a keystroke only keeps rows, in C-level passes (see
``_kept``), so the worker holds the interpreter lock, which the GUI thread needs to paint,
for a millisecond or two at a time.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import compress, count, repeat
from operator import and_, contains, eq, itemgetter
from typing import Any

from studio.core.records.store import RecordStore, RecordSummary
from studio.ui.contract_views import contract_label
from studio.ui.records_cells import (
    CONTRACT,
    DURATION,
    HEADERS,
    HOOK,
    LOOP,
    OUTCOME,
    SAMPLE,
    TIME,
    RunDays,
    outcome_label,
    time_label,
)


@dataclass(frozen=True)
class RowFilter:
    """Every word of ``text`` must occur in the run's haystack; ``contract`` is matched exactly;
    ``outcome`` is a status (``turn_error`` matches every kind) or ``turn_error/<kind>``."""

    words: tuple[str, ...] = ()
    contract: str | None = None
    outcome: str | None = None

    @classmethod
    def of(
        cls, text: str | None = None, contract: str | None = None, outcome: str | None = None
    ) -> RowFilter:
        return cls(tuple((text or "").casefold().split()), contract, outcome)

    @property
    def active(self) -> bool:
        return bool(self.words or self.contract or self.outcome)

    def narrows(self, other: RowFilter) -> bool:
        """Whether every run this filter keeps is kept by ``other`` too."""
        if other.contract is not None and self.contract != other.contract:
            return False
        if other.outcome is not None and not (
            self.outcome == other.outcome or (self.outcome or "").startswith(other.outcome + "/")
        ):
            return False
        return all(any(word in mine for mine in self.words) for word in other.words)

    def keeps(self, summary: RecordSummary) -> bool:
        """Whether the contract and outcome parts let ``summary`` through."""
        if self.contract is not None and summary.contract != self.contract:
            return False
        if self.outcome is None:
            return True
        if "/" in self.outcome:
            return summary.status_label == self.outcome
        return summary.status == self.outcome


def haystack(summary: RecordSummary, days: RunDays) -> str:
    """What a free-text filter searches: the run id, the contract's name and label, every cell
    of the row as shown, the full start time and the status."""
    return "\n".join(
        (
            summary.run_id,
            summary.contract,
            days.cell(summary.started_at),
            contract_label(summary.contract),
            summary.hook_label or "—",
            summary.loop or "—",
            summary.sample or "—",
            outcome_label(summary.status, summary.error_kind),
            time_label(summary.started_at),
            summary.status_label,
        )
    ).casefold()


_TIME_KEY = itemgetter(1)
_NAMES_KEY = itemgetter(2, 3, 4, 5, 6, 7, 8)  # contract .. sample: few distinct values
_HAYSTACK_PIECE = 2048  # a few milliseconds of time formatting with the lock held


def _names_text(names: tuple[Any, ...]) -> str:
    """The part of a haystack that only depends on the run's names, not on its id or time."""
    run = RecordSummary("", 0.0, *names)
    return "\n".join(
        (
            run.contract,
            contract_label(run.contract),
            run.hook_label or "—",
            run.loop or "—",
            run.sample or "—",
            outcome_label(run.status, run.error_kind),
            run.status_label,
        )
    )


_DAY_KEY = itemgetter(0, 1, 2)  # year, month, day of a time.struct_time


def haystacks(rows: Sequence[RecordSummary], days: RunDays | None = None) -> list[str]:
    """The haystack of each of ``rows``, in order: the same words as ``haystack`` finds.

    Built in C-level passes (map, zip) over pieces of rows. The Time cell is the day's label
    and the clock time; the clock time is part of the full time, and as a filter word holds no
    space, a word found in the one is found in the other.
    """
    days = days or RunDays()
    day_label = days.day
    labels: dict[tuple[int, int, int], str] = {}
    names: dict[tuple[Any, ...], str] = {}
    built: list[str] = []
    for start in range(0, len(rows), _HAYSTACK_PIECE):
        piece = rows[start : start + _HAYSTACK_PIECE]
        keys = list(map(_NAMES_KEY, piece))
        for key in set(keys).difference(names):
            names[key] = _names_text(key)
        local = list(map(time.localtime, map(_TIME_KEY, piece)))
        day_keys = list(map(_DAY_KEY, local))
        for key in set(day_keys).difference(labels):
            labels[key] = day_label(*key)
        texts = zip(
            map(_RUN_ID, piece),
            map(names.__getitem__, keys),
            map(time.strftime, repeat("%Y-%m-%d %H:%M:%S"), local),
            map(labels.__getitem__, day_keys),
            strict=True,
        )
        built.extend(map(str.casefold, map("\n".join, texts)))
    return built


def _sort_key(column: int) -> Callable[[RecordSummary], Any]:
    """The key of ``column``, as the table shows it; ties follow the run's age."""
    if column == DURATION:
        return lambda s: (s.duration_ms, s.started_at, s.run_id)
    if column == CONTRACT:
        labels: dict[str, str] = {}

        def by_contract(s: RecordSummary) -> Any:
            label = labels.get(s.contract)
            if label is None:
                label = labels[s.contract] = contract_label(s.contract).casefold()
            return (label, s.started_at, s.run_id)

        return by_contract
    if column == HOOK:
        return lambda s: ((s.hook_label or "").casefold(), s.started_at, s.run_id)
    if column == LOOP:
        return lambda s: ((s.loop or "").casefold(), s.started_at, s.run_id)
    if column == SAMPLE:
        return lambda s: ((s.sample or "").casefold(), s.started_at, s.run_id)
    if column == OUTCOME:
        return lambda s: (
            outcome_label(s.status, s.error_kind).casefold(),
            s.started_at,
            s.run_id,
        )
    return lambda s: (s.started_at, s.run_id)


@dataclass(frozen=True)
class Loaded:
    """Every stored run, newest first (as the store lists them), with their haystacks and the
    turn error kinds among them (for the outcome filter)."""

    rows: list[RecordSummary]
    haystacks: list[str]
    kinds: frozenset[str]


@dataclass(frozen=True)
class Ordered:
    """The loaded runs and their haystacks in the order of ``column``, so that a filter only
    has to keep rows (a sort is needed only when the order changes)."""

    rows: list[RecordSummary]
    haystacks: list[str]
    column: int
    descending: bool

    @classmethod
    def of(cls, loaded: Loaded, column: int, descending: bool) -> Ordered:
        rows, texts = loaded.rows, loaded.haystacks
        if column == TIME or not 0 <= column < len(HEADERS):
            if descending:
                return cls(rows, texts, TIME, True)
            return cls(rows[::-1], texts[::-1], TIME, False)
        keys = list(map(_sort_key(column), rows))
        # One sort of 100,000 keys holds the interpreter lock for tens of milliseconds; pieces
        # sorted one by one and merged (in Python, which lets the GUI thread in) do not.
        pieces = [
            sorted(
                range(start, min(start + _PIECE, len(rows))),
                key=keys.__getitem__,
                reverse=descending,
            )
            for start in range(0, len(rows), _PIECE)
        ]
        order = list(heapq.merge(*pieces, key=keys.__getitem__, reverse=descending))
        return cls(
            list(map(rows.__getitem__, order)),
            list(map(texts.__getitem__, order)),
            column,
            descending,
        )


@dataclass(frozen=True)
class Selection:
    """The runs shown, in order; ``texts`` their haystacks (``None`` when not at hand), and
    ``ordered`` the order they were kept from. ``generation`` names the request."""

    rows: list[RecordSummary]
    texts: list[str] | None
    column: int
    descending: bool
    row_filter: RowFilter
    generation: int = 0
    ordered: Ordered | None = None

    @cached_property
    def by_id(self) -> dict[str, int]:
        """The row of each run; built when first asked for (a reload that keeps a selection),
        as a keystroke does not need it."""
        return dict(zip(map(_RUN_ID, self.rows), count()))


# A filter runs as C-level passes (map, compress) over pieces of this many rows: a piece is a
# millisecond or two with the interpreter lock held, and the GUI thread gets the lock between
# pieces.
_PIECE = 8192
_RUN_ID = itemgetter(0)
_CONTRACT = itemgetter(2)
_STATUS = itemgetter(3)
_KIND = itemgetter(4)


def _kept(
    rows: list[RecordSummary], texts: list[str], row_filter: RowFilter
) -> tuple[list[RecordSummary], list[str]]:
    """The rows ``row_filter`` keeps, and their haystacks."""
    if not row_filter.active:
        return rows, texts
    status, _, kind = (row_filter.outcome or "").partition("/")
    kept: list[RecordSummary] = []
    kept_texts: list[str] = []
    for start in range(0, len(rows), _PIECE):
        piece = rows[start : start + _PIECE]
        hay = texts[start : start + _PIECE]
        masks: list[Iterator[bool]] = []
        if row_filter.contract is not None:
            masks.append(map(eq, map(_CONTRACT, piece), repeat(row_filter.contract)))
        if row_filter.outcome:
            masks.append(map(eq, map(_STATUS, piece), repeat(status)))
            if kind:
                masks.append(map(eq, map(_KIND, piece), repeat(kind)))
        masks.extend(map(contains, hay, repeat(word)) for word in row_filter.words)
        mask: Iterator[bool] = masks[0]
        for more in masks[1:]:
            mask = map(and_, mask, more)
        keep = list(mask)
        kept.extend(compress(piece, keep))
        kept_texts.extend(compress(hay, keep))
    return kept, kept_texts


def select_rows(
    ordered: Ordered,
    row_filter: RowFilter,
    generation: int = 0,
    previous: Selection | None = None,
) -> Selection:
    """The runs of ``ordered`` that ``row_filter`` keeps, in its order. When ``previous`` was
    kept from the same order by a filter that keeps every run this one keeps (a word typed
    on), only its rows are looked at."""
    rows, texts = ordered.rows, ordered.haystacks
    if (
        previous is not None
        and previous.ordered is ordered
        and previous.texts is not None
        and row_filter.narrows(previous.row_filter)
    ):
        rows, texts = previous.rows, previous.texts
    kept, kept_texts = _kept(rows, texts, row_filter)
    return Selection(
        rows=kept,
        texts=kept_texts,
        column=ordered.column,
        descending=ordered.descending,
        row_filter=row_filter,
        generation=generation,
        ordered=ordered,
    )


@dataclass(frozen=True)
class Arranged:
    """The loaded runs in the order asked for, and those of them the filter keeps."""

    ordered: Ordered
    selection: Selection


def arrange(
    loaded: Loaded,
    ordered: Ordered | None,
    row_filter: RowFilter,
    column: int,
    descending: bool,
    generation: int = 0,
    previous: Selection | None = None,
) -> Arranged:
    """Sort ``loaded`` when ``ordered`` is not already in that order, then filter (narrowing
    ``previous`` when it can, see ``select_rows``)."""
    if ordered is None or (ordered.column, ordered.descending) != (column, descending):
        ordered = Ordered.of(loaded, column, descending)
    return Arranged(ordered, select_rows(ordered, row_filter, generation, previous))


@dataclass(frozen=True)
class Load:
    """What a reload brings: every run, and them arranged for the view."""

    loaded: Loaded
    arranged: Arranged


def load_rows(
    store: RecordStore, row_filter: RowFilter, column: int, descending: bool, generation: int
) -> Load:
    """Every stored run, their haystacks, and them arranged for the view's sort and filter."""
    rows = store.list()
    loaded = Loaded(rows, haystacks(rows), frozenset(filter(None, map(_KIND, rows))))
    return Load(loaded, arrange(loaded, None, row_filter, column, descending, generation))


@dataclass(frozen=True)
class FirstPage:
    """The newest runs, enough to fill the table while every run is being read; ``load`` when
    they are every run there is."""

    rows: list[RecordSummary]
    total: int
    load: Load | None = None


def load_first_page(store: RecordStore, size: int, generation: int) -> FirstPage:
    rows = store.list(size + 1)
    if len(rows) <= size:
        loaded = Loaded(rows, haystacks(rows), frozenset(filter(None, map(_KIND, rows))))
        load = Load(loaded, arrange(loaded, None, RowFilter(), TIME, True, generation))
        return FirstPage(rows, len(rows), load)
    return FirstPage(rows[:size], store.count())
