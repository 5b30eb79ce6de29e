"""`ABSENT`: the default of a lookup whose found value may be None (`d.get(key, ABSENT)`,
then `is ABSENT`): one lookup where `in` and then the item were two, and None kept a value
(a JSON null, a tool offered without a schema). One object shared by every module, so a
value one module found absent is absent to the next (`pairing` hands its arguments to
`semantic`)."""

from __future__ import annotations

from typing import Final


class _Absent:
    """The one instance's type: it shows as `ABSENT` in a test's failure message."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()
