"""`hook-studio import-request` and `run --provider` as scripts call them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import BUNDLED_WORKSPACE as BUNDLED
from tests.support.provider_bodies import anthropic_body, chat_body, responses_body


def studio(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "studio", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=120,
    )


@pytest.fixture
def workspace(tmp_path) -> str:
    target = tmp_path / "ws"
    shutil.copytree(BUNDLED, target, ignore=shutil.ignore_patterns(".hookstudio"))
    return str(target)


@pytest.fixture
def capture(tmp_path):
    def write(body, name="capture.json"):
        path = tmp_path / name
        path.write_text(json.dumps(body))
        return str(path)

    return write


def test_prints_the_sample_and_the_loss_report(capture):
    done = studio("import-request", capture(anthropic_body()))
    assert done.returncode == 0, done.stderr
    sample = json.loads(done.stdout)
    assert sample["request"]["options"]["maxTokens"] == 8000
    assert done.stderr.startswith("format: Anthropic Messages\n")
    assert "  system[0].cache_control: dropped:" in done.stderr
    assert "  top_k: not representable:" in done.stderr


def test_json_shape(capture):
    done = studio("import-request", capture(responses_body()), "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert set(result) == {"format", "valid", "incomplete", "sample", "losses", "findings"}
    assert result["format"] == "openai-responses" and result["valid"] is True
    loss = next(x for x in result["losses"] if x["path"] == "tools[2]")
    assert loss == {
        "path": "tools[2]",
        "pointer": "/tools/2",
        "change": "dropped",
        "message": loss["message"],
    }
    assert "web_search" in loss["message"]


def test_reads_stdin_with_the_format_given():
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    ambiguous = studio("import-request", "-", stdin=json.dumps(body))
    assert ambiguous.returncode == 2
    assert "ambiguous" in ambiguous.stderr and "--format" in ambiguous.stderr
    done = studio("import-request", "-", "--format", "openai-chat", stdin=json.dumps(body))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["request"]["messages"] == [{"role": "user", "content": "hi"}]


def test_not_json_is_a_clear_error(capture, tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"messages": [}')
    done = studio("import-request", str(path))
    assert done.returncode == 2
    assert "broken.json: not JSON" in done.stderr and "line 1, column 15" in done.stderr


def test_into_writes_the_sample_and_never_replaces_one_without_force(capture, workspace):
    source = capture(chat_body(), "paris.json")
    done = studio("import-request", source, "--into", workspace)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    samples = Path(workspace, "samples")
    written = json.loads((samples / "paris.json").read_text())
    assert written["request"]["options"]["maxTokens"] == 2048
    assert (samples / "originals" / "paris.json").read_bytes() == Path(source).read_bytes()
    assert f"saved {samples / 'paris.json'}" in done.stderr

    # without --name, the file's name or the first free one after it
    other = capture(anthropic_body(), "paris.json")
    assert studio("import-request", other, "--into", workspace).returncode == 0
    assert (
        json.loads((samples / "paris-2.json").read_text())["request"]["options"]["maxTokens"]
        == 8000
    )

    again = studio("import-request", other, "--into", workspace, "--name", "paris")
    assert again.returncode == 2
    assert "samples/paris.json exists already (--force replaces it)" in again.stderr
    assert json.loads((samples / "paris.json").read_text()) == written
    forced = studio("import-request", other, "--into", workspace, "--name", "paris", "--force")
    assert forced.returncode == 0, forced.stderr
    replaced = json.loads((samples / "paris.json").read_text())
    assert replaced["request"]["options"]["maxTokens"] == 8000


def test_an_invalid_import_exits_one_and_writes_nothing(capture, workspace):
    body = {
        "system": "s",
        "max_tokens": 5,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "x"}]},
        ],
    }
    done = studio("import-request", capture(body), "--into", workspace, "--name", "bad")
    assert done.returncode == 1
    assert "error: /request/messages/1/content/0" in done.stderr
    assert not Path(workspace, "samples", "bad.json").exists()
    assert not Path(workspace, "samples", "originals").exists()


def test_run_with_provider_adds_the_body_and_the_cache_check(workspace):
    done = studio(
        "run", workspace, "--sample", "support-ticket", "--provider", "anthropic", "--json"
    )
    assert done.returncode == 0, done.stderr
    provider = json.loads(done.stdout)["provider"]
    assert provider["provider"] == "anthropic"
    assert provider["body"]["system"][0]["text"].startswith("You are a support agent.")
    assert [t["name"] for t in provider["body"]["tools"]] == ["fs_read", "fs_write"]
    assert provider["cache"]["kind"] == "tools"
    assert provider["cache"]["text"] == "tools changed: the whole prompt cache is lost"

    text = studio("run", workspace, "--sample", "support-ticket", "--provider", "chat-completions")
    assert text.returncode == 0, text.stderr
    assert "provider request: Chat Completions" in text.stdout
    assert "  prompt cache: tools changed: the whole prompt cache is lost" in text.stdout
    assert '"role": "system"' in text.stdout


def test_run_with_provider_refuses_a_sample_of_another_contract(workspace):
    done = studio("run", workspace, "--sample", "chain-refund", "--provider", "openai")
    assert done.returncode == 2
    assert "is a chain sample, not pre-LLM" in done.stderr
