"""Telling a body's format, and saving an import: the sample, the original body beside it, never
a sample replaced without force, and the sample lister never taking the original for a sample."""

from __future__ import annotations

import json

import pytest

from studio.core.provider.formats import FormatUnknown, detect_format
from studio.core.provider.importer import ImportFailed, import_body, parse_body, save_import
from studio.core.workspace.folder import Workspace
from tests.support.provider_bodies import anthropic_body, chat_body, responses_body


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (anthropic_body(), "anthropic"),
        (chat_body(), "openai-chat"),
        (responses_body(), "openai-responses"),
        ({"system": "s", "messages": [{"role": "user", "content": "hi"}]}, "anthropic"),
        ({"messages": [{"role": "system", "content": "s"}]}, "openai-chat"),
        ({"input": "hi"}, "openai-responses"),
    ],
)
def test_detects_the_format_when_one_fits(body, expected):
    assert detect_format(body) == expected
    assert import_body(body).format == expected


@pytest.mark.parametrize(
    "body",
    [
        {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5},
        {"system": "s", "messages": [{"role": "tool", "content": "x", "tool_call_id": "c"}]},
        {"messages": [], "input": "x"},
    ],
)
def test_an_ambiguous_body_asks_for_the_format(body):
    with pytest.raises(FormatUnknown, match=r"ambiguous.*say --format"):
        detect_format(body)
    with pytest.raises(ImportFailed, match="ambiguous"):
        import_body(body)


def test_a_body_of_no_format_says_so():
    with pytest.raises(FormatUnknown, match="not a provider request"):
        detect_format({"prompt": "hi"})


def test_parse_body_names_where_it_is_not_json():
    with pytest.raises(ImportFailed, match=r"capture\.json: not JSON: .* line 1, column 2"):
        parse_body(b"{]", "capture.json")


def test_save_keeps_the_original_bytes_and_lists_only_the_sample(tmp_path):
    data = json.dumps(chat_body(), indent=4).encode()
    imported = import_body(parse_body(data))
    saved = save_import(tmp_path / "samples", "paris", imported, data)
    assert saved.sample == tmp_path / "samples" / "paris.json"
    assert saved.original.read_bytes() == data
    assert json.loads(saved.sample.read_text()) == imported.sample
    workspace = Workspace.open(tmp_path)
    assert [s.name for s in workspace.samples()] == ["paris"]
    assert workspace.sample("paris").contract == "pre_llm"


def test_save_never_replaces_a_sample_without_force(tmp_path):
    samples = tmp_path / "samples"
    first = import_body(chat_body())
    save_import(samples, "one", first, b"{}")
    other = import_body(anthropic_body())
    with pytest.raises(FileExistsError):
        save_import(samples, "one", other, b"[]")
    assert json.loads((samples / "one.json").read_text()) == first.sample
    assert (samples / "originals" / "one.json").read_bytes() == b"{}"
    save_import(samples, "one", other, b"[]", force=True)
    assert json.loads((samples / "one.json").read_text()) == other.sample
    assert (samples / "originals" / "one.json").read_bytes() == b"[]"


def test_save_refuses_an_invalid_sample_and_a_bad_name(tmp_path):
    call = {"type": "tool_use", "id": "t", "name": "x", "input": {}}
    body = {"max_tokens": 1, "messages": [{"role": "assistant", "content": [call]}]}
    with pytest.raises(ValueError, match="does not pass the request checks"):
        save_import(tmp_path, "x", import_body(body, "anthropic"), b"{}")
    with pytest.raises(ValueError, match="sample name"):
        save_import(tmp_path, "../x", import_body(chat_body()), b"{}")
    assert list(tmp_path.iterdir()) == []
