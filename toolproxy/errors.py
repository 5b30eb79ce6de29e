"""Exceptions the CLI reports as one clear line instead of a traceback."""


class UserError(Exception):
    """Something the user can fix: a bad path, a busy capture, a bad option (exit code 2)."""


class Failure(Exception):
    """A command that could not finish for a reason outside its input, said in one line
    (exit code 1): a worker process killed by the system."""
