"""Sample files on disk: their names, reading one (decoded and checked), saving, creating and
renaming one without ever replacing another, and noticing that one changed.

Everything here may run in a worker thread; the editor keeps only what these return.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from studio.core.file_reads import read_bytes
from studio.core.workspace.atomic_write import write_atomically
from studio.core.workspace.folder import SAMPLES_DIR
from studio.core.workspace.sample_check import SampleCheck, check_sample_text

if TYPE_CHECKING:
    from studio.core.contract import Contract

Stamp = tuple[int, int, int]
"""A file's modification time (ns), size and inode: equal stamps mean an unchanged file."""

NAME_PATTERN = r"[A-Za-z0-9_][A-Za-z0-9._-]{0,63}"
NAME_RULE = "letters, digits, '.', '_' and '-', starting with a letter, digit or '_' (at most 64)"
_NAME = re.compile(NAME_PATTERN)

# A document with more lines or characters than this is large: the editor colours it only where
# it is on screen and keeps its parsed value only while its structure is shown.
LARGE_LINES = 4_000
LARGE_CHARS = 400_000


def clean_sample_name(name: str) -> str:
    name = name.strip()
    return name[: -len(".json")] if name.lower().endswith(".json") else name


def sample_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a sample file, or None."""
    if not name:
        return "a sample needs a name"
    if _NAME.fullmatch(name) is None:
        return f"a sample name may hold {NAME_RULE}"
    return None


def free_sample_name(folder: Path, base: str, taken: Iterable[str]) -> str:
    """``base``, or ``base-2``, ``base-3``…: the first that neither names a file in ``folder``
    nor is ``taken`` (both ignoring case, as some file systems do)."""
    used = {name.lower() for name in taken}
    for name in itertools.chain([base], (f"{base}-{k}" for k in itertools.count(2))):
        if name.lower() not in used and not (folder / f"{name}.json").exists():
            return name
    raise AssertionError("unreachable")


def template_text(contract: Contract) -> str:
    """A minimal valid sample of ``contract`` as the text of a new file."""
    return json.dumps(contract.sample_template(), indent=2, ensure_ascii=False) + "\n"


def is_large(text: str, lines: int) -> bool:
    return lines > LARGE_LINES or len(text) > LARGE_CHARS


def file_stamp(path: Path) -> Stamp | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@dataclass(frozen=True)
class SampleText:
    """A sample file's text as read, before it is checked."""

    text: str
    crlf: bool
    stamp: Stamp | None
    digest: str
    lines: int


@dataclass(frozen=True)
class LoadedSample(SampleText):
    check: SampleCheck


class SampleReadError(Exception):
    pass


def read_sample_file(path: Path) -> SampleText:
    """Read and decode a sample file (no check: the editor shows the text while it is
    checked)."""
    stamp = file_stamp(path)
    try:
        data = read_bytes(path)
    except FileNotFoundError:
        raise SampleReadError(f"{SAMPLES_DIR}/{path.name} no longer exists") from None
    except OSError as exc:
        raise SampleReadError(
            f"{SAMPLES_DIR}/{path.name} cannot be read ({exc.strerror or exc})"
        ) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SampleReadError(
            f"{SAMPLES_DIR}/{path.name} is not UTF-8 text (byte {exc.start} cannot be decoded)"
        ) from None
    crlf = "\r\n" in text
    if crlf:
        text = text.replace("\r\n", "\n")
    return SampleText(text, crlf, stamp, _digest(data), text.count("\n") + 1)


def load_sample_file(path: Path, keep_document: bool = False) -> LoadedSample:
    """Read, decode and check a sample file. The parsed value is kept for a document of
    ordinary size, or when ``keep_document``."""
    read = read_sample_file(path)
    keep = keep_document or not is_large(read.text, read.lines)
    return LoadedSample(
        read.text,
        read.crlf,
        read.stamp,
        read.digest,
        read.lines,
        check_sample_text(read.text, keep),
    )


def disk_state(path: Path) -> tuple[Stamp | None, str]:
    """The file's stamp and the digest of its bytes; raises when it is gone."""
    stamp = file_stamp(path)
    data = read_bytes(path)
    return stamp, _digest(data)


@dataclass(frozen=True)
class SavedSample:
    stamp: Stamp | None
    digest: str
    check: SampleCheck


def save_sample_text(path: Path, text: str, crlf: bool, keep_document: bool = True) -> SavedSample:
    """Check the text and, when it is JSON, replace the file with it atomically."""
    check = check_sample_text(text, keep_document)
    if not check.valid_json:
        return SavedSample(None, "", check)
    data = (text.replace("\n", "\r\n") if crlf else text).encode("utf-8")
    write_atomically(path, data)
    return SavedSample(file_stamp(path), _digest(data), check)


def create_sample_file(path: Path, data: bytes) -> None:
    """A new file at ``path`` holding ``data``; never replaces an existing file."""
    with open(path, "xb"):
        pass  # claims the name: a second creator gets FileExistsError
    try:
        write_atomically(path, data)
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def rename_sample_file(old: Path, new: Path) -> None:
    """Move ``old`` to ``new``; never replaces an existing file."""
    try:
        os.link(old, new)  # fails with FileExistsError when the name is taken
    except FileExistsError:
        raise
    except OSError:
        if new.exists():
            raise FileExistsError(new) from None
        os.rename(old, new)
        return
    os.unlink(old)
