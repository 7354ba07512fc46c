"""The version of a file a hook's load read: path, modification time, size and content hash.

A spare that loaded a hook ahead of its call is used only while every file that load read is
the same version: the hash catches an edit that kept the size and fell in the same tick of a
coarse clock.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time

from studio.core.workspace.file_stamps import RECENT_WRITE_NS

# A hook's files are source code; a larger file is not worth reading on every call.
MAX_BYTES = 4 << 20

FileVersion = tuple[str, int, int, str]


def file_version(path: str) -> FileVersion | None:
    """The version of the regular file ``path`` now; None when it is none (or too large)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode) or found.st_size > MAX_BYTES:
            return None
        digest = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return path, found.st_mtime_ns, found.st_size, digest.hexdigest()


# The version read last of each file, with its stat then: while the stat is the same and was
# settled (no write in the last clock ticks before it), the content is too, and is not read
# again. The change time is in it: a program can set a file's modification time back, not that.
_Stat = tuple[int, int, int, int, int]
_known: dict[str, tuple[_Stat, FileVersion]] = {}
_KNOWN_FILES = 1024


def _settled_stat(path: str) -> _Stat | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    if time.time_ns() - max(info.st_mtime_ns, info.st_ctime_ns) < RECENT_WRITE_NS:
        return None
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def current_version(path: str) -> FileVersion | None:
    """:func:`file_version`, read only when the file's stat changed since it was last read."""
    found = _settled_stat(path)
    known = _known.get(path)
    if found is not None and known is not None and known[0] == found:
        return known[1]
    version = file_version(path)
    if found is not None and version is not None:
        if len(_known) >= _KNOWN_FILES:
            _known.clear()
        # Taken before the read: a write in between makes the next stat differ.
        _known[path] = (found, version)
    return version


def unchanged(versions: list[FileVersion]) -> bool:
    """Whether every file is still the version recorded."""
    return all(current_version(version[0]) == tuple(version) for version in versions)
