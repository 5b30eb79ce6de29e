"""Counts in English for the messages people read: `counted(3, "case")` is "3 cases"."""

from __future__ import annotations


def counted(n: int, noun: str) -> str:
    """`n` and `noun`, with an "s" unless `n` is exactly one ("1 case", "0 cases")."""
    return f"{n} {noun}{'s' * (n != 1)}"
