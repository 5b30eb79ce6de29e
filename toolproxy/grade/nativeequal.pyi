# The C module `nativeequal.c` (built by scripts/compile_core.py with the compiled core).
MAX_DEPTH: int

def equal(a: object, b: object, /) -> bool | None: ...
