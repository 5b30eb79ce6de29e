"""A child process that dies with its parent: `toolproxy record` and its mitmdump.

A `kill -9` of the CLI gives it no chance to stop its mitmdump, which would otherwise go
on serving (and recording) as an orphan nobody can stop with Ctrl-C. The parent names
itself in the child's environment (``PARENT_ENV``); the child, once started, asks Linux to
send it SIGTERM when that parent exits (``prctl(PR_SET_PDEATHSIG)``), and stops at once if
the parent is already gone. SIGTERM is mitmdump's graceful stop: the addon flushes what it
holds. Elsewhere than Linux this is a no-op.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

PARENT_ENV = "TOOLPROXY_PARENT_PID"
PR_SET_PDEATHSIG = 1


def parent_env() -> dict[str, str]:
    """The environment entry a parent passes to a child that must die with it."""
    return {PARENT_ENV: str(os.getpid())}


def die_with_parent(environ: dict[str, str] | None = None) -> bool:
    """Arrange SIGTERM for this process when the parent named in the environment exits.

    Returns True when armed. The check after arming closes the race with a parent that
    died before the call: then this process is sent SIGTERM right away.
    """
    value = (environ if environ is not None else dict(os.environ)).get(PARENT_ENV, "")
    if not value.isdigit() or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    if os.getppid() != int(value):
        os.kill(os.getpid(), signal.SIGTERM)
    return True
