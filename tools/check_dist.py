#!/usr/bin/env python3
"""Check what `python -m build` put in dist/ (CI runs this after building both).

    python tools/check_dist.py [dist_dir]      # default: dist/

The wheel: one `cutlass_gemm-<version>-cp310-abi3-linux_x86_64.whl` holding exactly the package's
.py files, the generated `_build_info.py`, one `_C.abi3.so` and the dist-info (no csrc, tests,
objects, caches). The sdist: the build inputs (setup.py, pyproject, csrc, the generator, the
package) and no build products; its generated kernel files must match its kernel table. Prints
the sizes and the build info. Exit status 1 with the reasons on any mismatch.
"""

from __future__ import annotations

import ast
import glob
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = "cutlass_gemm"
WHEEL_TAG = "cp310-abi3-linux_x86_64"


def version() -> str:
    with open(os.path.join(ROOT, PKG, "_version.py")) as fh:
        return re.search(r'__version__ = "([^"]+)"', fh.read()).group(1)


def source_modules() -> set:
    """The package's tracked .py files (git if available, else the directory)."""
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", f"{PKG}/*.py"], capture_output=True, text=True,
                             check=True, timeout=60).stdout.split()
        if out:
            return set(out)
    except (OSError, subprocess.SubprocessError):
        pass
    return {f"{PKG}/{os.path.basename(p)}" for p in glob.glob(os.path.join(ROOT, PKG, "*.py"))} - {f"{PKG}/_build_info.py"}


PACKAGE_DATA = {f"{PKG}/default_rules.json"}  # setup.py package_data (the shipped selection rules)


def mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


def check_wheel(path: str, ver: str, errors: list) -> None:
    name = os.path.basename(path)
    if name != f"{PKG}-{ver}-{WHEEL_TAG}.whl":
        errors.append(f"wheel name {name!r}: expected {PKG}-{ver}-{WHEEL_TAG}.whl")
    with zipfile.ZipFile(path) as zf:
        infos = {i.filename: i for i in zf.infolist() if not i.is_dir()}
        distinfo = f"{PKG}-{ver}.dist-info/"
        want_py = source_modules() | {f"{PKG}/_build_info.py"}
        missing_data = PACKAGE_DATA - set(infos)
        if missing_data:
            errors.append(f"wheel lacks package data {sorted(missing_data)}")
        have_py = {n for n in infos if n.endswith(".py")}
        sos = [n for n in infos if n.endswith(".so")]
        meta = {n for n in infos if n.startswith(distinfo)}
        other = set(infos) - have_py - set(sos) - meta - PACKAGE_DATA
        if have_py != want_py:
            errors.append(f"wheel .py files differ from the package: missing {sorted(want_py - have_py)}, "
                          f"extra {sorted(have_py - want_py)}")
        if sos != [f"{PKG}/_C.abi3.so"]:
            errors.append(f"wheel shared objects {sos}: expected exactly {PKG}/_C.abi3.so")
        if other:
            errors.append(f"wheel has files that do not belong in it: {sorted(other)}")
        for req in ("METADATA", "WHEEL", "RECORD"):
            if distinfo + req not in meta:
                errors.append(f"wheel lacks {distinfo}{req}")
        wheel_meta = zf.read(distinfo + "WHEEL").decode() if distinfo + "WHEEL" in meta else ""
        if f"Tag: {WHEEL_TAG}" not in wheel_meta or "Root-Is-Purelib: false" not in wheel_meta:
            errors.append(f"{distinfo}WHEEL: expected 'Tag: {WHEEL_TAG}' and 'Root-Is-Purelib: false':\n{wheel_meta}")
        info = {}
        if f"{PKG}/_build_info.py" in infos:
            tree = ast.parse(zf.read(f"{PKG}/_build_info.py").decode())
            info = {t.id: ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                    for t in node.targets if isinstance(t, ast.Name)}
            if not info.get("KERNELS"):
                errors.append("wheel _build_info.py lists no kernels")
        so = infos.get(f"{PKG}/_C.abi3.so")
        print(f"wheel: {name}  {mib(os.path.getsize(path))} ({os.path.getsize(path)} bytes); "
              f"{len(infos)} files, {mib(sum(i.file_size for i in infos.values()))} unpacked"
              + (f"; _C.abi3.so {mib(so.file_size)}" if so else ""))
        for n in sorted(infos):
            print(f"  {infos[n].file_size:>12}  {n}")
        if info:
            per_arch = {}
            for k in info.get("KERNELS", []):
                per_arch[k.split("_")[0]] = per_arch.get(k.split("_")[0], 0) + 1
            print(f"  build info: archs {info.get('ARCHS')}, kernels {per_arch}, CUTLASS {info.get('CUTLASS_VERSION')}, "
                  f"torch {info.get('TORCH_VERSION')} (CUDA {info.get('CUDA_VERSION')}), nvcc {info.get('NVCC_VERSION')}, "
                  f"commit {info.get('GIT_COMMIT')}, filter {info.get('KERNEL_FILTER')}")


def check_sdist(path: str, ver: str, errors: list) -> None:
    name = os.path.basename(path)
    top = f"{PKG}-{ver}/"
    if name != f"{PKG}-{ver}.tar.gz":
        errors.append(f"sdist name {name!r}: expected {PKG}-{ver}.tar.gz")
    with tarfile.open(path) as tf:
        members = {m.name[len(top):] for m in tf.getmembers() if m.isfile() and m.name.startswith(top)}
        need = {"setup.py", "pyproject.toml", "README.md", "requirements.txt", "MANIFEST.in", "tools/generate.py"}
        need |= source_modules() | PACKAGE_DATA
        try:
            need |= set(subprocess.run(["git", "-C", ROOT, "ls-files", "csrc"], capture_output=True, text=True,
                                       check=True, timeout=60).stdout.split())
        except (OSError, subprocess.SubprocessError):
            pass
        missing = need - members
        if missing:
            errors.append(f"sdist lacks build inputs: {sorted(missing)}")
        bad = sorted(m for m in members if re.search(r"(\.so|\.o|\.pyc)$|(^|/)(build|dist|tests|bench|__pycache__)/", m)
                     or m == f"{PKG}/_build_info.py")
        if bad:
            errors.append(f"sdist has build products or files that do not belong in it: {bad}")
        print(f"sdist: {name}  {mib(os.path.getsize(path))}; {len(members)} files")
        with tempfile.TemporaryDirectory() as tmp:  # its generated files match its kernel table
            tf.extractall(tmp, filter="data") if hasattr(tarfile, "data_filter") else tf.extractall(tmp)
            r = subprocess.run([sys.executable, os.path.join(tmp, top, "tools", "generate.py"), "--check"],
                               capture_output=True, text=True, timeout=300)
            if r.returncode != 0:
                errors.append(f"sdist: tools/generate.py --check failed:\n{r.stdout}{r.stderr}")


def main() -> int:
    dist = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "dist")
    ver, errors = version(), []
    wheels, sdists = glob.glob(os.path.join(dist, "*.whl")), glob.glob(os.path.join(dist, "*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        errors.append(f"{dist}: expected one wheel and one sdist, found {wheels + sdists}")
    for w in wheels:
        check_wheel(w, ver, errors)
    for s in sdists:
        check_sdist(s, ver, errors)
    for e in errors:
        print(f"check_dist: ERROR: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
