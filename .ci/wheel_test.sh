#!/usr/bin/env bash
# Install the built wheel into a fresh virtual environment and run the test suite against it from
# outside the checkout (used by .ci/run and by the GPU job of .github/workflows/ci.yml).
#
#   bash .ci/wheel_test.sh DIST_DIR VENV_DIR [pytest args...]
#
# The venv gets only the wheel. Its dependencies (torch, 2+ GB with its CUDA libraries) and the
# test tools come from the environment that built the wheel, through one .pth file appending that
# environment's site-packages *after* the venv's own: reinstalling torch would cost minutes and
# gigabytes and test nothing of ours, while the package under test still comes only from the wheel
# (tests/test_packaging.py asserts it under CUTLASS_GEMM_TEST_INSTALLED=1). Unlike
# `venv --system-site-packages` this works when the build Python is itself a venv, and the build
# environment's own .pth hooks (e.g. an editable cutlass_gemm of a developer) do not run.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
DIST=$(cd "$1" && pwd)
VENV=$2
shift 2
wheels=("$DIST"/cutlass_gemm-*.whl)
[ ${#wheels[@]} -eq 1 ] && [ -f "${wheels[0]}" ] || { echo "wheel_test: expected one wheel in $DIST, found: ${wheels[*]}"; exit 1; }

rm -rf "$VENV"
python3 -m venv --without-pip "$VENV"  # the build environment's pip installs into it (--python)
VENV=$(cd "$VENV" && pwd)
purelib=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
python3 -c 'import os, sys; print("\n".join(p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages")))' \
  > "$purelib/_build_env.pth"
# --no-index: the wheel's dependencies must already be satisfied (nothing is downloaded here).
# No pip or setuptools of its own in the venv: an old bundled setuptools would shadow the build
# environment's and fail torch's `setuptools>=77` requirement.
python3 -m pip --python "$VENV/bin/python" install -q --no-index --disable-pip-version-check "${wheels[0]}"

work=$(mktemp -d)  # outside the checkout: the cwd must not put the source tree on sys.path
cd "$work"
"$VENV/bin/python" -c 'import cutlass_gemm, json; print("testing", cutlass_gemm.__file__); print(json.dumps({k: v for k, v in cutlass_gemm.build_info().items() if k != "kernel_names"}))'
CUTLASS_GEMM_TEST_INSTALLED=1 "$VENV/bin/python" -m pytest "$REPO/tests" -p no:cacheprovider "$@"
cd /
rm -rf "$work"
