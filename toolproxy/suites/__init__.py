"""Suites shipped with toolproxy: expectation files whose tasks carry their own conversation
and tools, replayed against candidates with `toolproxy replay CONFIG --suite NAME|PATH`.

`conformance` (`conformance.yaml`): 50 edge-case tasks in 14 families (each task's tag):
single and parallel calls, nested objects, arrays of objects, enums, optional nested
objects, anyOf/oneOf unions, `$ref`/`$defs`, unicode and escaped strings, int64 and large
numbers, ISO timestamps and time zones, a 34-tool list, multi-turn tasks whose next call
needs the previous tool result, and controls where no tool should be called.
"""

from __future__ import annotations

from pathlib import Path

from toolproxy.errors import UserError

SUITES = {"conformance": "conformance.yaml"}
REPEATS = 3  # a suite's k unless --repeats or the config says otherwise


def suite_path(name: str) -> Path:
    """The file of a shipped suite by name, or a suite file of the user's."""
    if name in SUITES:
        return Path(__file__).with_name(SUITES[name])
    path = Path(name)
    if path.is_file():
        return path
    shipped = ", ".join(sorted(SUITES))
    raise UserError(f"no suite {name!r}: name a shipped one ({shipped}) or a cases file")
