#!/usr/bin/env bash
# On the GPU machine: captures real run records (check, test, bench, profile) as the engine writes them, for the
# record readers' tests (tests/records/h200/). Writes $OUT/records.tgz.   device run: bash scripts/gpu-records.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/cutegen-gpu-out}; mkdir -p "$OUT"
work=$(mktemp -d); cp -r --parents examples/softsign examples/softsign_tail examples/gemm_bf16 tests/kernels "$work/"
state=$work/.cutegen
cg() { python3 -m cutegen "$@" --state-dir "$state"; echo "exit $?"; }
cg check "$work/examples/softsign/softsign.cu"
cg bench "$work/examples/softsign/softsign.cu"
cg bench "$work/examples/gemm_bf16/gemm_bf16.cu"
cg test "$work/tests/kernels/tail_bug.cu"
cg test "$work/tests/kernels/zero_output.cu"
cg profile "$work/examples/softsign/softsign.cu"
# Machine paths out: the fixtures name the files as $WORK/...
find "$state/runs" -name 'latest-*.json' | while read -r f; do
  d=$OUT/records/$(basename "$(dirname "$f")"); mkdir -p "$d"; sed "s#$work#\$WORK#g" "$f" > "$d/$(basename "$f")"
done
tar czf "$OUT/records.tgz" -C "$OUT" records && rm -rf "$OUT/records"
