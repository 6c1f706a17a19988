#!/usr/bin/env bash
# The main job on the bundled softsign kernel (examples/softsign), as far as this machine allows.
#
#   bash scripts/demo.sh            # sets up .venv, then:
#                                   #   with an NVIDIA GPU: check → test → bench → profile → tune, with the figures
#                                   #   without one: check and build, a broken kernel's diagnostic, and what needs a GPU
#   bash scripts/demo.sh --editor   # VS Code (code-server) with the extension on a sample workspace, at 127.0.0.1
#
# No LLM is needed for any of it (tune sweeps `// cutegen: tunable` constants). Environment: CUTEGEN_PYTHON (a
# Python with CuTeGen importable: used instead of setting up .venv), CUTEGEN_DEMO_DIR (the demo's files; default
# ${TMPDIR:-/tmp}/cutegen-demo), CUTEGEN_DEMO_PORT (--editor; default 8080).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$PWD
KERNEL=examples/softsign/softsign.cu
DEMO=${CUTEGEN_DEMO_DIR:-${TMPDIR:-/tmp}/cutegen-demo}
PYTHON=${CUTEGEN_PYTHON:-}
failed=()

cutegen() { "$PYTHON" -m cutegen "$@"; }
in_dir() { (cd "$1" && shift && "$@"); }

step() {  # step TITLE COMMAND...: runs it, shows it, remembers a failure and goes on
  local title=$1; shift
  printf '\n== %s\n$ %s\n' "$title" "$*"
  "$@" || failed+=("$title")
}

has_gpu() {
  command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 &&
    "$PYTHON" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null
}

# softsign with its block size declared tunable, beside its problem: the bundled file stays as shipped.
tunable_copy() {
  mkdir -p "$DEMO/softsign/.cutegen"
  cp examples/softsign/softsign.py "$DEMO/softsign/"
  sed 's|^constexpr int kThreads = 512;.*|constexpr int kThreads = 512;  // cutegen: tunable 128,256,512,1024|' \
    "$KERNEL" > "$DEMO/softsign/softsign.cu"
  grep -q "cutegen: tunable" "$DEMO/softsign/softsign.cu" || { echo "demo: cannot mark kThreads tunable" >&2; return 1; }
}

gpu_loop() {
  echo "GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1). The whole loop on $KERNEL:"
  step "check (nvcc -ptx + ptxas: diagnostics and registers)" cutegen check --verbose "$KERNEL"
  step "test (5 trials against the PyTorch reference, outputs poisoned)" cutegen test "$KERNEL"
  step "bench (vs eager PyTorch and torch.compile, % of the GPU's ceilings)" cutegen bench "$KERNEL"
  step "profile (Nsight Compute: bottleneck and signals)" cutegen profile "$KERNEL"
  tunable_copy || failed+=("tune")
  [ -f "$DEMO/softsign/softsign.cu" ] &&
    step "tune (kThreads = 128, 256, 512, 1024: each verified and timed; no LLM)" \
      in_dir "$DEMO/softsign" cutegen tune softsign.cu
}

cpu_loop() {
  echo "No NVIDIA GPU here: what runs without one, on $KERNEL:"
  step "check (nvcc -ptx + ptxas: diagnostics and registers)" cutegen check --verbose "$KERNEL"
  step "build (the shared library the harness would load)" cutegen check --tier build "$KERNEL"
  printf '\n== a broken kernel (copy with mismatched ranks): one diagnostic at the line to blame\n'
  echo "\$ cutegen check tests/corpus/errors/copy_rank_mismatch.cu"
  cutegen check tests/corpus/errors/copy_rank_mismatch.cu
  [ $? -eq 1 ] || failed+=("the broken kernel was not reported")
  cat <<'MSG'

Needs an NVIDIA GPU (run this script on one to see them): `cutegen test` (correctness against the PyTorch
reference), `cutegen bench` (timing vs eager and torch.compile), `cutegen profile` (Nsight Compute) and
`cutegen tune`. Without a GPU they build the kernel and say "not run". In the editor: bash scripts/demo.sh --editor
MSG
}

# The settings of the e2e test's workbench (scripts/lib/vscode-settings.json: VS Code's own AI, its Chat panel and
# its quick fixes, tips and updates off) plus cutegen.python, in User/ and Machine/ (code-server is a remote setup:
# the machine-scoped cutegen.python counts only in Machine/).
editor_settings() {  # editor_settings USER_DATA_DIR
  "$PYTHON" - "$1" "$PYTHON" <<'PY'
import json, pathlib, sys
folder, python = pathlib.Path(sys.argv[1]), sys.argv[2]
settings = {**json.loads(pathlib.Path("scripts/lib/vscode-settings.json").read_text()), "cutegen.python": python}
for scope in ("User", "Machine"):
    (folder / scope).mkdir(parents=True, exist_ok=True)
    (folder / scope / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")
PY
}

editor() {
  source scripts/lib/vscode-tools.sh  # say, die, install_node, package_vsix, vsix_current, install_code_server
  install_node
  if vsix_current; then
    say "reusing vscode-client/cutegen.vsix (nothing it is built from changed; bash scripts/test-vscode.sh tests it)"
  else
    package_vsix --no-unit  # the demo shows the extension; test-vscode.sh runs its tests
  fi
  install_code_server
  local ws=$DEMO/workspace user=$DEMO/code-server/user exts=$DEMO/code-server/extensions
  local port=${CUTEGEN_DEMO_PORT:-8080}
  mkdir -p "$ws/.cutegen" "$exts"
  cp examples/softsign/softsign.cu examples/softsign/softsign.py "$ws/"
  cp tests/corpus/errors/copy_rank_mismatch.cu "$ws/broken_copy.cu"
  editor_settings "$user" || die "cannot write the editor's settings under $user"
  "$CODE_SERVER" --user-data-dir "$user" --extensions-dir "$exts" --install-extension vscode-client/cutegen.vsix --force \
    >/dev/null || die "the extension did not install into code-server"
  echo
  echo "CuTeGen in VS Code (code-server): http://127.0.0.1:$port/?folder=$ws"
  echo "Open broken_copy.cu for a diagnostic and its hover, softsign.cu for the CodeLens. Ctrl-C stops it."
  exec "$CODE_SERVER" --user-data-dir "$user" --extensions-dir "$exts" --auth none --bind-addr "127.0.0.1:$port" \
    --disable-telemetry --disable-update-check --disable-workspace-trust --disable-getting-started-override \
    --ignore-last-opened "$ws"
}

main() {
  if [ -z "$PYTHON" ]; then
    bash scripts/setup.sh || exit 1
    PYTHON=$REPO/.venv/bin/python
  fi
  if [ "${1:-}" = "--editor" ]; then
    editor
  elif has_gpu; then
    gpu_loop
  else
    cpu_loop
  fi
  if [ ${#failed[@]} -gt 0 ]; then
    printf '\ndemo: these steps failed: %s\n' "${failed[*]}" >&2
    exit 1
  fi
}

[ "${BASH_SOURCE[0]}" = "$0" ] && main "$@"  # (sourced: only the functions, for a test)
