#!/usr/bin/env bash
# compute-sanitizer over every kernel family (issue #8), through tools/sanitize_cases.py:
#   memcheck  - every compiled kernel forced once (partial tiles, full epilogue) plus the
#               host-side paths (K/N padding, K = 0, M = 1, misaligned / non-contiguous operand
#               copies, 3-D inputs, blockwise scale conversion, forced 1-block blockwise)
#   racecheck - one kernel per family (dtypes, output, scale mode, accumulation), CUTLASS
#               kernels only (--kernel-name kns=cutlass)
# Every case is also checked against a float64 CPU reference. Prints a summary and exits
# non-zero on any sanitizer error, failed case or uncovered kernel.
#
#   tools/sanitize.sh                  # memcheck, then racecheck (a few minutes on an H200)
#   tools/sanitize.sh memcheck         # one tool; extra args after it go to sanitize_cases.py
#   COMPUTE_SANITIZER=/path/to/compute-sanitizer SANITIZE_LOG_DIR=/tmp/san tools/sanitize.sh
set -uo pipefail
cd "$(dirname "$0")/.."

SAN="${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}"
if [ ! -x "$SAN" ]; then
  echo "sanitize.sh: compute-sanitizer not found (put it on PATH or set COMPUTE_SANITIZER)" >&2
  exit 2
fi
PY="${PYTHON:-python}"
LOG_DIR="${SANITIZE_LOG_DIR:-$(mktemp -d -t cutlass_gemm_sanitize.XXXXXX)}"
mkdir -p "$LOG_DIR"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
# The caching allocator hands out pieces of larger blocks: an out-of-bounds access that stays
# inside the block would go unseen. Without it every tensor is its own cudaMalloc.
export PYTORCH_NO_CUDA_MEMORY_CACHING=1
# quantize_fp8 (input preparation only) stays eager: no Inductor/Triton compile under the sanitizer.
export CUTLASS_GEMM_QUANT_COMPILE="${CUTLASS_GEMM_QUANT_COMPILE:-0}"

if [ $# -gt 0 ]; then TOOLS=("$1"); shift; else TOOLS=(memcheck racecheck); fi
EXTRA=("$@")

status=0
lines=()
for tool in "${TOOLS[@]}"; do
  case "$tool" in
    memcheck) flags=(--tool memcheck); args=() ;;
    racecheck) flags=(--tool racecheck --kernel-name kns=cutlass); args=(--racecheck) ;;
    *) echo "sanitize.sh: unknown tool '$tool' (memcheck or racecheck)" >&2; exit 2 ;;
  esac
  log="$LOG_DIR/$tool.log"
  echo "==== $tool: $SAN ${flags[*]} $PY tools/sanitize_cases.py ${args[*]-} ${EXTRA[*]-}  (log: $log)"
  start=$(date +%s)
  # API errors are left out: torch probes the driver with calls that fail on purpose; our own
  # API failures surface as exceptions (failed cases) anyway.
  "$SAN" "${flags[@]}" --error-exitcode 86 --report-api-errors no --print-limit 100 \
    "$PY" tools/sanitize_cases.py ${args[@]+"${args[@]}"} ${EXTRA[@]+"${EXTRA[@]}"} 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  secs=$(( $(date +%s) - start ))
  errors=$(grep -Eo 'ERROR SUMMARY: [0-9]+' "$log" | tail -1 | grep -Eo '[0-9]+$' || true)
  race=$(grep -Eo 'RACECHECK SUMMARY: .*' "$log" | tail -1 || true)
  if [ -z "$errors" ] && [ -n "$race" ]; then
    errors=$(echo "$race" | grep -Eo '\(([0-9]+) errors?' | grep -Eo '[0-9]+' || true)
  fi
  cases=$(grep -E '^cases: ' "$log" | tail -1)
  kernels=$(grep -E '^kernels covered: ' "$log" | tail -1 | cut -d'(' -f1)
  verdict=PASS
  if [ "$rc" -ne 0 ] || [ -z "$errors" ] || [ "$errors" != 0 ]; then verdict=FAIL; status=1; fi
  lines+=("$tool: $verdict (exit $rc, sanitizer errors: ${errors:-no summary line}${race:+; $race}; ${cases:-no case summary}; ${kernels:-}; ${secs} s)")
done

echo
echo "==== sanitize.sh summary (logs in $LOG_DIR) ===="
for l in "${lines[@]}"; do echo "$l"; done
exit $status
