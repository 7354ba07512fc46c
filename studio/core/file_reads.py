"""Reading a file the studio was pointed at, which may not be a file at all.

A workspace may hold, under a file's name, a named pipe (opening it waits for a writer that never
comes), a device such as ``/dev/zero`` (reading it never ends) or a socket. Each is refused
before anything is read, with an :class:`OSError` that says what it is, so every reader reports
it as it reports a file it cannot read and the studio never waits on one.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


class NotAFile(OSError):
    """Something other than a regular file or a folder is at the path."""

    def __str__(self) -> str:
        return str(self.strerror)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def _refuse(path: str | Path, info: os.stat_result) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if not stat.S_ISREG(info.st_mode):
        kind = _kind(info.st_mode)
        raise NotAFile(errno.EINVAL, f"is {kind}, not a file", str(path))


def not_a_file(path: str | Path) -> str | None:
    """Why ``path`` (a symbolic link followed) names no regular file, in words that follow
    its name ("does not exist", "is a named pipe, not a file"); None when it names one."""
    try:
        _refuse(path, os.stat(path))
    except FileNotFoundError:
        return "does not exist"
    except IsADirectoryError:
        return "is a folder, not a file"
    except NotAFile as exc:
        return str(exc)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    return None


def read_file(path: str | Path, most: int = -1) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file at ``path`` (a symbolic link followed; its first ``most``
    when given) with its ``stat``, both from one open. A folder raises
    :class:`IsADirectoryError`, anything else that is not a regular file :class:`NotAFile`,
    both before it is opened; it is opened without waiting, so that one swapped in meanwhile
    is refused as well instead of blocking the reader."""
    _refuse(path, os.stat(path))
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    with open(fd, "rb") as handle:
        info = os.fstat(fd)
        _refuse(path, info)
        return handle.read(most), info


def read_bytes(path: str | Path, most: int = -1) -> bytes:
    """:func:`read_file` without the ``stat``: ``Path.read_bytes`` that never waits on a named
    pipe or reads a device."""
    return read_file(path, most)[0]


def read_text(path: str | Path, errors: str = "strict") -> str:
    """``Path.read_text(encoding="utf-8")`` (line ends made ``\\n``, as it makes them) that never
    waits on a named pipe or reads a device."""
    text = read_bytes(path).decode("utf-8", errors)
    return text.replace("\r\n", "\n").replace("\r", "\n")
