#!/usr/bin/env bash
# One-shot validation of te-doctor on a lent GPU machine: no network, no pip, no install.
#
#   benchmarks/gpu_session.sh [--dry-run] [--python PY] [--te-wheels DIR] OUT
#
# Runs te-doctor from this checkout (PYTHONPATH, nothing installed) with PY (default python3,
# which must have torch, click, packaging and nvidia-ml-py) and leaves at most 8 files in OUT:
#   real-<gpu>-<driver>-<torch>.json     redacted `probe --smoke` (a fixture to commit)
#   check.json, check.txt                 `check` of that snapshot, JSON and text
#   nvidia-smi.txt                        raw `nvidia-smi`, `-q` and `--query-gpu ... csv`
#   bench.json, bench.png                 `bench` of the torch paths at llama-3-8b shapes
#   pytest-gpu.txt                        `pytest -m gpu` (tests/test_gpu.py)
#   session.log                           each step's exit status and time
# Every step has a time limit inside an overall budget of 8 minutes; a step that fails is
# logged and the session goes on, so it always exits 0 with whatever it got.
# --te-wheels DIR: install the TE wheels in DIR (`pip --no-index --no-deps --target`) into a
# scratch directory first, so the TE paths are checked and benchmarked too.
# --dry-run: the same steps with the GPUs hidden (CUDA_VISIBLE_DEVICES empty) and a short
# bench, so that a CPU machine (CI) runs it in a couple of minutes.
set -uo pipefail

usage() { echo "usage: $0 [--dry-run] [--python PY] [--te-wheels DIR] OUT" >&2; exit 2; }
DRY_RUN=0 PY=python3 TE_WHEELS="" OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY_RUN=1 ;;
    --python) [ $# -ge 2 ] || usage; PY=$2; shift ;;
    --te-wheels) [ $# -ge 2 ] || usage; TE_WHEELS=$2; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    -*) usage ;;
    *) [ -z "$OUT" ] || usage; OUT=$1 ;;
  esac
  shift
done
[ -n "$OUT" ] || usage
REPO=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/te-doctor-gpu-session.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT
LOG="$OUT/session.log"
DEADLINE=$(( $(date +%s) + 480 ))
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
# The bench saves its result as this machine's latest: keep that in the scratch directory.
export XDG_CACHE_HOME="$SCRATCH/cache"
if [ "$DRY_RUN" = 1 ]; then
  export CUDA_VISIBLE_DEVICES=""
  BENCH_LIMITS=(--warmup 1 --repeats 2 --time-budget 2)
else
  BENCH_LIMITS=(--warmup 3 --repeats 10 --time-budget 20)
fi

log() { echo "$*" >> "$LOG"; }

# step NAME LIMIT_S OUTFILE CMD...: run CMD with stdout to OUTFILE (or the log when "-"),
# stderr to the log, within LIMIT_S and the overall deadline; log its exit status and time.
step() {
  local name=$1 limit=$2 outfile=$3; shift 3
  local left=$(( DEADLINE - $(date +%s) ))
  if [ "$left" -le 5 ]; then log "step $name: not run (the 8-minute budget is spent)"; return; fi
  [ "$limit" -le "$left" ] || limit=$left
  local started status
  started=$(date +%s.%N)
  log "--- step $name (limit ${limit} s): $*"
  if [ "$outfile" = "-" ]; then
    timeout --kill-after=5 "$limit" "$@" >> "$LOG" 2>&1
  else
    timeout --kill-after=5 "$limit" "$@" > "$outfile" 2>> "$LOG"
  fi
  status=$?
  [ "$status" -eq 124 ] && log "step $name: killed at its time limit"
  log "step $name: exit $status in $(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s"
}

TE_DOCTOR=("$PY" -m te_doctor)

: > "$LOG"
log "te-doctor GPU session, $(date -u +%Y-%m-%dT%H:%M:%SZ), dry run: $DRY_RUN"
log "repository: $REPO ($(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo 'not a git checkout'))"
log "host: $(uname -srm); python: $PY"
step environment 60 - "$PY" -c "import sys, click, packaging; print(sys.version.split()[0]); import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'available', torch.cuda.is_available())"

if [ -n "$TE_WHEELS" ]; then
  step te-wheels 180 - "$PY" -m pip install --no-index --no-deps --no-compile --target "$SCRATCH/te" "$TE_WHEELS"/*.whl
  export PYTHONPATH="$SCRATCH/te:$PYTHONPATH"
fi

SNAPSHOT="$SCRATCH/snapshot.json"
step probe 180 - "${TE_DOCTOR[@]}" probe --smoke --redact --format json -o "$SNAPSHOT"
if [ -s "$SNAPSHOT" ]; then
  NAME=$("$PY" "$REPO/benchmarks/fixture_name.py" "$SNAPSHOT" 2>> "$LOG" || echo real-unnamed)
  cp "$SNAPSHOT" "$OUT/$NAME.json"
  log "snapshot: $NAME.json"
  step check-json 60 "$OUT/check.json" "${TE_DOCTOR[@]}" check --snapshot "$SNAPSHOT" --format json --fail-on never
  step check-text 60 "$OUT/check.txt" "${TE_DOCTOR[@]}" check --snapshot "$SNAPSHOT" --color never --fail-on never
fi

{
  for query in "" "-q" "--query-gpu=index,name,uuid,pci.bus_id,driver_version,compute_cap,memory.total,mig.mode.current,persistence_mode --format=csv"; do
    echo "==> nvidia-smi $query <=="
    # shellcheck disable=SC2086 -- the query is several words on purpose
    if command -v nvidia-smi > /dev/null; then timeout 30 nvidia-smi $query 2>&1; echo "(exit $?)"; else echo "nvidia-smi: not found"; fi
    echo
  done
} > "$OUT/nvidia-smi.txt"
log "step nvidia-smi: $(grep -c '^==> ' "$OUT/nvidia-smi.txt") outputs written"

PLOT=(--plot "$OUT/bench.png")
if ! "$PY" -c "import matplotlib" 2>/dev/null; then
  PLOT=(); log "bench: matplotlib is not installed, so no plot"
fi
BENCH_PATHS=(--paths torch-fp8,torch-amp-bf16,torch-fp32)
[ -n "$TE_WHEELS" ] && BENCH_PATHS=()  # every viable path, TE's included
step bench 300 - "${TE_DOCTOR[@]}" bench --model llama-3-8b "${BENCH_PATHS[@]}" "${BENCH_LIMITS[@]}" --format json -o "$OUT/bench.json" "${PLOT[@]}" -q

step pytest-gpu 240 "$OUT/pytest-gpu.txt" "$PY" -m pytest -m gpu -rA -q -p no:cacheprovider "$REPO/tests/test_gpu.py"

log "files: $(cd "$OUT" && ls | tr '\n' ' ')"
exit 0
