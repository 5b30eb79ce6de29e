#!/usr/bin/env bash
# Benchmark-only dependencies, kept out of .venv so `pip check` stays clean:
#   .bench/bfcl   the bfcl-eval wheel (BFCL's ast_checker and its data files), installed
#                 without its dependencies: they pin numpy, filelock and networkx against
#                 ours and pull in every model vendor's SDK, none of which the AST checker
#                 uses (bench/bfcl_arm.py says what stands in for its model registry).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || scripts/setup.sh
if [ ! -f .bench/bfcl/bfcl_eval/eval_checker/ast_eval/ast_checker.py ]; then
  rm -rf .bench/bfcl
  .venv/bin/python -m pip install --quiet --no-deps --target .bench/bfcl "bfcl-eval==2026.3.23"
fi
echo "bench-deps: bfcl-eval in .bench/bfcl"
