"""Editing an ordered tuple of editor rows (chain hooks, hook targets) without changing it."""

from __future__ import annotations

from typing import TypeVar

Row = TypeVar("Row")


def remove_row(rows: tuple[Row, ...], index: int) -> tuple[Row, ...]:
    return rows[:index] + rows[index + 1 :]


def move_row(rows: tuple[Row, ...], source: int, destination: int) -> tuple[Row, ...]:
    """The rows with the one at ``source`` taken out and put back at ``destination``."""
    changed = list(rows)
    changed.insert(destination, changed.pop(source))
    return tuple(changed)
