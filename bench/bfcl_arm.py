"""BFCL's own AST checker and data, from the bfcl-eval wheel in .bench/bfcl (bench only).

`scripts/bench-deps.sh` installs the wheel there without its dependencies. The checker
(`bfcl_eval.eval_checker.ast_eval.ast_checker`) needs none of them, but it imports
`bfcl_eval.constants.model_config` at module level for one thing: whether the graded model
had dots in function names replaced by underscores (`convert_func_name`). That module
imports every vendor's SDK handler, so the one model this benchmark grades is registered in
a stand-in with the setting BFCL gives OpenAI's function-calling models
(`underscore_to_dot=True`); any other model name raises KeyError as the real mapping would.
Everything else the checker runs is BFCL's code, unchanged.

`bfcl_cases` reads BFCL's own test categories (functions and possible answers) from the
wheel's data folder.
"""

from __future__ import annotations

import json
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1] / ".bench" / "bfcl"
MODEL = "toolproxy-bench-FC"
CATEGORIES = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
)


@dataclass(frozen=True)
class _ModelConfig:
    underscore_to_dot: bool


def _importable() -> None:
    if not (ROOT / "bfcl_eval").is_dir():
        raise SystemExit(f"{ROOT} is missing: run scripts/bench-deps.sh first")
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def type_mapping() -> dict[str, str]:
    """BFCL's own BFCL-type -> JSON Schema type mapping (what its OpenAI handlers send)."""
    _importable()
    from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI

    return GORILLA_TO_OPENAPI


def load_checker() -> Any:
    """BFCL's `ast_checker` function, or SystemExit naming the setup command."""
    _importable()
    stand_in = types.ModuleType("bfcl_eval.constants.model_config")
    stand_in.MODEL_CONFIG_MAPPING = {MODEL: _ModelConfig(underscore_to_dot=True)}  # type: ignore[attr-defined]
    sys.modules["bfcl_eval.constants.model_config"] = stand_in
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    return ast_checker


def language() -> Any:
    from bfcl_eval.constants.enums import Language

    return Language.PYTHON


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def bfcl_cases(category: str) -> list[dict[str, Any]]:
    """BFCL's cases of one category: id, function (BFCL's format), ground_truth."""
    data = ROOT / "bfcl_eval" / "data"
    questions = _lines(data / f"BFCL_v4_{category}.json")
    answers = {
        a["id"]: a["ground_truth"]
        for a in _lines(data / "possible_answer" / f"BFCL_v4_{category}.json")
    }
    return [
        {
            "id": q["id"],
            "category": category,
            "function": q["function"],
            "ground_truth": answers[q["id"]],
        }
        for q in questions
        if q["id"] in answers
    ]
