"""Sample files: names, reading (decoded, with line endings kept), saving only JSON, creating and
renaming without ever replacing another file, and the new-file templates of each contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from studio.core.registry import CONTRACTS
from studio.core.workspace.sample_check import contract_findings
from studio.core.workspace.sample_files import (
    LARGE_CHARS,
    LARGE_LINES,
    SampleReadError,
    clean_sample_name,
    create_sample_file,
    disk_state,
    file_stamp,
    free_sample_name,
    is_large,
    load_sample_file,
    rename_sample_file,
    sample_name_problem,
    save_sample_text,
    template_text,
)


def test_names():
    assert clean_sample_name("  refund.JSON ") == "refund"
    assert sample_name_problem("refund-twice_2.v1") is None
    for bad in ("", "../evil", ".hidden", "a/b", "x" * 65, "-dash"):
        assert sample_name_problem(bad) is not None, bad


def test_a_free_name_skips_taken_names_and_files(tmp_path: Path):
    (tmp_path / "new-chain.json").write_text("{}")
    assert free_sample_name(tmp_path, "fresh", []) == "fresh"
    assert free_sample_name(tmp_path, "new-chain", []) == "new-chain-2"
    assert free_sample_name(tmp_path, "new-chain", ["NEW-CHAIN-2"]) == "new-chain-3"


@pytest.mark.parametrize("contract", list(CONTRACTS.values()), ids=lambda c: c.name)
def test_a_template_is_a_valid_sample_of_its_contract_under_a_valid_name(contract):
    document = json.loads(template_text(contract))
    assert contract_findings(document) == (contract.name, [])
    assert sample_name_problem(contract.new_sample_stem) is None


def test_loading_decodes_keeps_the_line_endings_and_checks(tmp_path: Path):
    path = tmp_path / "s.json"
    path.write_bytes(b'\xef\xbb\xbf{\r\n  "request": {}\r\n}\r\n')
    loaded = load_sample_file(path)
    assert loaded.text == '{\n  "request": {}\n}\n'
    assert loaded.crlf and loaded.lines == 4
    assert loaded.stamp == file_stamp(path)
    assert (loaded.stamp, loaded.digest) == disk_state(path)
    assert loaded.check.contract == "pre_llm" and loaded.check.errors > 0

    saved = save_sample_text(path, '{"request": {}, "loop": "main"}\n', crlf=True)
    assert path.read_bytes() == b'{"request": {}, "loop": "main"}\r\n'
    assert (saved.stamp, saved.digest) == disk_state(path)


def test_a_file_that_cannot_be_read_says_why(tmp_path: Path):
    with pytest.raises(SampleReadError, match="no longer exists"):
        load_sample_file(tmp_path / "gone.json")
    (tmp_path / "latin.json").write_bytes(b'{"a": "caf\xe9"}')
    with pytest.raises(SampleReadError, match="not UTF-8 text"):
        load_sample_file(tmp_path / "latin.json")


def test_text_that_is_not_json_is_never_saved(tmp_path: Path):
    path = tmp_path / "s.json"
    path.write_text("{}")
    saved = save_sample_text(path, '{"a": ', crlf=False)
    assert not saved.check.valid_json and saved.stamp is None
    assert path.read_text() == "{}"


def test_a_large_document_is_not_kept_unless_asked(tmp_path: Path):
    assert is_large("x", LARGE_LINES + 1) and is_large("x" * (LARGE_CHARS + 1), 1)
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"request": {"system": "x" * LARGE_CHARS}}))
    assert load_sample_file(path).check.document is None
    assert load_sample_file(path, keep_document=True).check.document is not None


def test_creating_and_renaming_never_replace_a_file(tmp_path: Path):
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    create_sample_file(first, b"{}")
    assert first.read_bytes() == b"{}"
    with pytest.raises(FileExistsError):
        create_sample_file(first, b"[]")
    assert first.read_bytes() == b"{}"
    second.write_bytes(b"[]")
    with pytest.raises(FileExistsError):
        rename_sample_file(first, second)
    assert (first.read_bytes(), second.read_bytes()) == (b"{}", b"[]")
    rename_sample_file(first, tmp_path / "c.json")
    assert not first.exists() and (tmp_path / "c.json").read_bytes() == b"{}"
