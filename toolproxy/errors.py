"""Exceptions the CLI reports as one clear line (exit code 2) instead of a traceback."""


class UserError(Exception):
    """Something the user can fix: a bad path, a busy capture, a bad option."""
