"""The hardening suite: each promise in docs/guarantees.md, proven against
real mitmdump, real captures and a nasty upstream. Fixtures are the e2e ones."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import capture, proxy, upstream  # noqa: F401  (fixtures)

pytestmark = pytest.mark.e2e
