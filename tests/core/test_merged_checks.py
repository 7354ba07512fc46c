"""Checks of several contracts that share a command become one command whose flags pick them."""

from __future__ import annotations

import argparse

import pytest

from studio.core.contract import HeadlessCheck, merged_checks


def check(name: str, answer: str, flag: str | None = None) -> HeadlessCheck:
    return HeadlessCheck(
        name,
        f"{answer} summary",
        lambda p: p.add_argument("file"),
        lambda args, read: ({"by": answer, "file": read(args.file)}, True),
        flag=flag,
    )


def parse(command: HeadlessCheck, *argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    command.configure(parser)
    return parser.parse_args(list(argv))


def test_the_flag_picks_its_check_and_no_flag_the_plain_one():
    (command,) = merged_checks([check("check-x", "plain"), check("check-x", "other", "--other")])
    assert command.check(parse(command, "f.json"), str.upper)[0] == {
        "by": "plain",
        "file": "F.JSON",
    }
    assert command.check(parse(command, "--other", "f.json"), str)[0]["by"] == "other"
    assert "--other: other summary" in command.summary


def test_checks_of_their_own_names_stay_as_they_are():
    first, second = check("check-a", "a"), check("check-b", "b")
    assert merged_checks([first, second]) == [first, second]


def test_a_shared_command_needs_exactly_one_check_without_a_flag():
    with pytest.raises(ValueError):
        merged_checks([check("check-x", "one", "--one"), check("check-x", "two", "--two")])
