"""Reading JSON files that may be malformed, with an error that says exactly where."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from studio.core.file_reads import read_bytes
from studio.core.json.deep import MAX_DEPTH, deep_json


class JsonFileError(Exception):
    """A file that cannot be read or is not JSON; the message names the file and the place."""


def syntax_problem(exc: json.JSONDecodeError) -> str:
    """The parser's words for a syntax error, to be followed by its place: one of them ends
    in "starting at", which the place completes."""
    return exc.msg.removesuffix(" at")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def parse_json_text(text: str, origin: str = "<text>") -> Any:
    """Strict JSON: NaN and Infinity, which Python's json module accepts, are refused."""
    try:
        with deep_json():
            return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise JsonFileError(
            f"{origin}: not JSON: {syntax_problem(exc)} at line {exc.lineno}, column {exc.colno}"
        ) from None
    except RecursionError:
        raise JsonFileError(f"{origin}: nested deeper than {MAX_DEPTH:,} levels") from None
    except ValueError as exc:
        raise JsonFileError(f"{origin}: not JSON: {exc}") from None


def read_json_file(path: str | Path, *, waits: bool = False) -> Any:
    return parse_json_bytes(json_file_bytes(path, waits=waits), str(path))


def json_file_bytes(path: str | Path, *, waits: bool = False) -> bytes:
    """The bytes of a JSON file, or a :class:`JsonFileError` that says why it cannot be read.
    Only with ``waits`` is a named pipe read (a command line's ``<(...)``, say), waiting for
    its writer; the window never waits on one."""
    origin = str(path)
    try:
        return Path(path).read_bytes() if waits else read_bytes(path)
    except FileNotFoundError:
        raise JsonFileError(f"{origin}: no such file") from None
    except IsADirectoryError:
        raise JsonFileError(f"{origin}: is a folder, not a file") from None
    except OSError as exc:
        raise JsonFileError(f"{origin}: cannot be read ({exc.strerror or exc})") from None


def parse_json_bytes(data: bytes, origin: str) -> Any:
    """Strict JSON from a file's bytes (UTF-8, a byte order mark allowed)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise JsonFileError(
            f"{origin}: not UTF-8 text (byte {exc.start} cannot be decoded)"
        ) from None
    return parse_json_text(text, origin)
