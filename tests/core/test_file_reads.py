"""Reading what is at a file's name: a regular file as Path reads it, anything else refused at
once (a named pipe without a writer would hold the reader forever, /dev/zero never ends)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from studio.core.file_reads import NotAFile, not_a_file, read_bytes, read_file, read_text


def at_once(call: Callable[[], Any]) -> BaseException | None:
    """What ``call`` raised (None if nothing), failing the test if it is still waiting after
    ten seconds: a reader that opened a named pipe waits there for a writer."""
    raised: list[BaseException | None] = []

    def run() -> None:
        try:
            call()
        except BaseException as exc:
            raised.append(exc)
        else:
            raised.append(None)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "the read is waiting on what it should have refused"
    return raised[0]


@pytest.fixture
def pipe(tmp_path: Path) -> Path:
    path = tmp_path / "agent.json"
    os.mkfifo(path)
    return path


def test_a_regular_file_reads_as_path_reads_it(tmp_path: Path):
    path = tmp_path / "hook.py"
    path.write_bytes(b"a\r\nb\rc\n\xc3\xa9\xef\xbb\xbf")
    data, info = read_file(path)
    assert data == path.read_bytes()
    assert (info.st_size, info.st_mtime_ns) == (path.stat().st_size, path.stat().st_mtime_ns)
    assert read_text(path) == path.read_text(encoding="utf-8")
    assert read_bytes(path, most=3) == b"a\r\n"


def test_a_link_to_a_file_is_followed(tmp_path: Path):
    (tmp_path / "real.json").write_text("{}")
    (tmp_path / "link.json").symlink_to("real.json")
    assert read_bytes(tmp_path / "link.json") == b"{}"


def test_a_named_pipe_is_refused_without_waiting_for_a_writer(pipe: Path):
    for read in (read_bytes, read_text, read_file):
        raised = at_once(lambda read=read: read(pipe))
        assert isinstance(raised, NotAFile)
        assert str(raised) == "is a named pipe, not a file"
        assert raised.filename == str(pipe)


def test_a_device_is_refused_before_a_byte_is_read(tmp_path: Path):
    (tmp_path / "hook.py").symlink_to("/dev/null")
    with pytest.raises(NotAFile, match=r"^is a device, not a file$"):
        read_bytes(tmp_path / "hook.py")


def test_a_folder_is_what_open_says_it_is(tmp_path: Path):
    with pytest.raises(IsADirectoryError):
        read_bytes(tmp_path)
    with pytest.raises(FileNotFoundError):
        read_bytes(tmp_path / "none.json")


def test_why_a_path_names_no_file_in_words_that_follow_its_name(tmp_path: Path, pipe: Path):
    (tmp_path / "hook.py").write_text("")
    assert not_a_file(tmp_path / "hook.py") is None
    assert not_a_file(tmp_path / "absent.py") == "does not exist"
    assert not_a_file(tmp_path) == "is a folder, not a file"
    assert not_a_file(pipe) == "is a named pipe, not a file"
