#!/usr/bin/env bash
# The linter (ruff) and the type checker (mypy) on server/, against a baseline that may only shrink.
# Each tool's findings are compared, as a multiset of `path: code: message` lines (no line numbers, so that an
# unrelated edit does not churn them), with scripts/lint-baseline/{ruff,mypy}.txt. A finding not in the baseline
# fails the run and is printed; findings that are gone are counted, and `--update` rewrites the baseline to what
# is found now. `--update` refuses to add a finding unless `--allow-growth` is given as well.
# Configuration: [tool.ruff] and [tool.mypy] in pyproject.toml. VENV=path picks another virtual environment.
set -uo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
RAW=$(mktemp -d)
trap 'rm -rf "$RAW"' EXIT
"$VENV/bin/ruff" check server/ --output-format json --exit-zero >"$RAW/ruff.json" || { echo "lint.sh: ruff failed to run" >&2; exit 2; }
"$VENV/bin/mypy" --no-error-summary --no-pretty --hide-error-context --show-error-codes >"$RAW/mypy.txt" 2>&1
rc=$?
if [ "$rc" -gt 1 ]; then cat "$RAW/mypy.txt" >&2; echo "lint.sh: mypy failed to run (exit $rc)" >&2; exit 2; fi
exec "$VENV/bin/python" scripts/lib/lint_baseline.py --ruff "$RAW/ruff.json" --mypy "$RAW/mypy.txt" \
  --baseline scripts/lint-baseline "$@"
