"""The version of a file a hook's load read: path, modification time, size and content hash.

A spare that loaded a hook ahead of its call is used only while every file that load read is
the same version: the hash catches an edit that kept the size and fell in the same tick of a
coarse clock.
"""

from __future__ import annotations

import hashlib
import os
import stat

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


def unchanged(versions: list[FileVersion]) -> bool:
    """Whether every file is still the version recorded."""
    return all(file_version(version[0]) == tuple(version) for version in versions)
