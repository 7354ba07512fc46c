"""The cycle collector paused while the engine reads a large result, and restored after."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from studio.engine.collector import collector_paused


@pytest.fixture
def collector_enabled() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_paused_inside_and_on_again_after(collector_enabled):
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_nested_pauses_end_with_the_outermost(collector_enabled):
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_error_inside_still_restores_it(collector_enabled):
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("boom")
    assert gc.isenabled()


def test_a_collector_turned_off_before_stays_off(collector_enabled):
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()
