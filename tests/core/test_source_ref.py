"""spec/adf.md §1: the source reference parser and the workspace boundary."""

from __future__ import annotations

import os

import pytest

from studio.core.source_ref import (
    SourceOutsideWorkspace,
    SourceRef,
    format_source_ref,
    lexical_path_problem,
    parse_source_ref,
    resolve_source_path,
)


@pytest.mark.parametrize(
    ("source", "path", "function"),
    [
        ("lib/policy.py:transform", "lib/policy.py", "transform"),
        ("lib/policy.py", "lib/policy.py", "main"),
        ("lib/policy.py:$hook_2", "lib/policy.py", "$hook_2"),
        ("a:b:c", "a:b", "c"),
        ("lib/policy.py:", "lib/policy.py:", "main"),
        ("lib/policy.py:2fast", "lib/policy.py:2fast", "main"),
        ("lib/policy.py:my-fn", "lib/policy.py:my-fn", "main"),
        (":main", ":main", "main"),
        ("C:\\hooks\\p.py", "C:\\hooks\\p.py", "main"),
        ("dir:x/p.py", "dir:x/p.py", "main"),
    ],
)
def test_split_at_the_last_colon_only_before_an_identifier(source, path, function):
    assert parse_source_ref(source) == SourceRef(path, function)


def test_format_omits_the_default_function():
    assert format_source_ref("a.py", "main") == "a.py"
    assert format_source_ref("a.py", "go") == "a.py:go"


@pytest.mark.parametrize("path", ["..", "../a.py", "a/../../b.py", "/abs.py", "\\x.py", "D:/x.py"])
def test_paths_that_leave_the_workspace(path):
    assert lexical_path_problem(path) is not None


@pytest.mark.parametrize("path", ["a.py", "./a.py", "lib/../a.py", "lib/x/../../a.py"])
def test_paths_that_stay_inside(path):
    assert lexical_path_problem(path) is None


@pytest.mark.parametrize("path", ["c:hook.js", "p:1fn", "a:b", "x:"])
def test_a_letter_and_a_colon_is_a_file_name_without_bare_drives(path):
    # spec/adf.md §7: c:hook.js is a plain file for ADF, and for the runner.
    assert lexical_path_problem(path, bare_drive=False) is None
    assert lexical_path_problem(path) is not None  # the chain and step configs' stricter rule


@pytest.mark.parametrize("path", ["C:\\x.js", "d:/x.js", "/x.js", "\\x.js", "../x.js"])
def test_drive_roots_and_escapes_are_refused_either_way(path):
    assert lexical_path_problem(path, bare_drive=False) is not None


def test_resolve_takes_a_file_named_with_a_colon(tmp_path):
    (tmp_path / "c:hook.js").write_text("")
    assert resolve_source_path(tmp_path, "c:hook.js") == (tmp_path / "c:hook.js").resolve()


def test_resolve_refuses_a_symlink_out_of_the_workspace(tmp_path):
    workspace = tmp_path / "ws"
    outside = tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (outside / "evil.py").write_text("def main(x): return x\n")
    os.symlink(outside, workspace / "lib")
    with pytest.raises(SourceOutsideWorkspace, match="outside the workspace"):
        resolve_source_path(workspace, "lib/evil.py")


def test_resolve_follows_a_symlink_that_stays_inside(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "p.py").write_text("")
    os.symlink(tmp_path / "real", tmp_path / "alias")
    assert resolve_source_path(tmp_path, "alias/p.py") == (tmp_path / "real" / "p.py").resolve()


def test_resolve_refuses_dot_dot(tmp_path):
    with pytest.raises(SourceOutsideWorkspace, match=r"'\.\.'"):
        resolve_source_path(tmp_path, "../x.py")
