"""Run a command where the kernel refuses new user namespaces, as on a system that disallows
them: ``python -m tests.support.no_namespaces COMMAND [ARG...]``.

It enters a user namespace of its own and sets that namespace's limit of nested ones to zero, so
every ``unshare`` the command tries fails exactly as the kernel makes it fail there.
"""

from __future__ import annotations

import ctypes
import os
import sys

CLONE_NEWUSER = 0x10000000


def main(argv: list[str]) -> int:
    uid, gid = os.getuid(), os.getgid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWUSER) != 0:
        print("no_namespaces: the kernel refuses user namespaces already", file=sys.stderr)
        return 2
    for path, text in (
        ("/proc/self/setgroups", "deny"),
        ("/proc/self/uid_map", f"{uid} {uid} 1"),
        ("/proc/self/gid_map", f"{gid} {gid} 1"),
        ("/proc/sys/user/max_user_namespaces", "0"),
    ):
        with open(path, "w") as f:
            f.write(text)
    os.execvp(argv[1], argv[1:])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
