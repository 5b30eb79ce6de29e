"""toolproxy: measure agent tool calling on your own live traffic."""

from toolproxy.util.compiled import activate

__version__ = "0.1.0"

activate()  # the grading core compiled by mypyc, when built from these sources
