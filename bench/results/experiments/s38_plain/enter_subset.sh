# Sourced by the experiment call scripts that run on a subset build copied to $X (s40_plain_twins, s41_fast_twins_ab,
# s41_stages):   source "$HERE/../s38_plain/enter_subset.sh" <kernel_table function> <what X should hold>
# On the device ($OUT set): enters $X, names its commit (X/.commit) and checks that the build compiled the function's
# kernels and their twins (require_twins.py); exits 2 otherwise.
: "${OUT:?run on the device (OUT unset)}"
cd "${X:?set X to the copy of the subset build}" || { echo "X=$X: no such folder (expected $2)"; exit 2; }
export PYTHONPATH=. CUTLASS_GEMM_COMMIT=${CUTLASS_GEMM_COMMIT:-$(cat .commit 2>/dev/null || echo unknown)}
python "$(dirname "${BASH_SOURCE[0]}")/require_twins.py" "$1" || { echo "X=$X: expected $2"; exit 2; }
