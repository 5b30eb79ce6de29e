"""A file the user named, read as UTF-8 text, and why it could not be, in words that do not
name the file again (each caller's message leads with it). Pure."""

from __future__ import annotations

from pathlib import Path


class Unreadable(Exception):
    """A file that cannot be read as UTF-8 text; `str()` is why: the OS's reason ("No such
    file or directory", "Is a directory") or "not UTF-8 text (... at byte N)"."""


def undecodable(exc: UnicodeDecodeError) -> str:
    """Bytes that are not UTF-8, in words: "not UTF-8 text (invalid start byte at byte 3)"
    (a file's here, a body's in `wire.common.load_json`)."""
    return f"not UTF-8 text ({exc.reason} at byte {exc.start})"


def read_text(path: Path | str) -> str:
    """The text of `path`; `Unreadable` when it cannot be read (a missing file, a folder,
    bytes that are not UTF-8, the wire's wording for them)."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise Unreadable(exc.strerror or str(exc)) from None
    except UnicodeDecodeError as exc:
        raise Unreadable(undecodable(exc)) from None
