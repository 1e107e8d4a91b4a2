"""Release packaging (issue #9): the version in one place, build_info(), `python -m cutlass_gemm.env`
(also with a broken extension), the offline workflow check, and, in CI, that the tests run against
the installed wheel rather than the checkout."""

import os
import re
import shutil
import subprocess
import sys

import pytest
import torch

import cutlass_gemm
from cutlass_gemm import configs, kernel_table
from pkg_paths import PKG_PARENT, ROOT, installed, pythonpath

sys.path.insert(0, os.path.join(ROOT, "tools"))
import check_workflows  # noqa: E402

sys.path.pop(0)


def test_tests_import_the_package_under_test():
    """CI (.ci/run) sets CUTLASS_GEMM_TEST_INSTALLED=1: the tests must see the wheel installed in the
    fresh venv, never the source tree (which has no compiled extension in CI)."""
    where = os.path.abspath(cutlass_gemm.__file__)
    if os.environ.get("CUTLASS_GEMM_TEST_INSTALLED") == "1":
        assert installed(), f"cutlass_gemm imported from the checkout: {where}"
        assert os.path.abspath(sys.prefix) in where, f"cutlass_gemm {where} is not in this venv ({sys.prefix})"
        assert os.path.exists(os.path.join(PKG_PARENT, f"cutlass_gemm-{cutlass_gemm.__version__}.dist-info"))
    assert cutlass_gemm._C.__file__.endswith("_C.abi3.so")


@pytest.mark.skipif(not os.environ.get("CUTLASS_GEMM_TEST_REQUIRE_GPU"), reason="GPU runner only")
def test_gpu_runner_has_a_supported_gpu():
    """The GPU CI job sets CUTLASS_GEMM_TEST_REQUIRE_GPU=1 so that GPU tests cannot silently skip."""
    assert torch.cuda.is_available() and configs.current_arch() in kernel_table.ARCHS


def test_version_single_source():
    with open(os.path.join(ROOT, "cutlass_gemm", "_version.py")) as fh:
        assert re.search(r'__version__ = "([^"]+)"', fh.read()).group(1) == cutlass_gemm.__version__
    with open(os.path.join(ROOT, "pyproject.toml")) as fh:
        text = fh.read()
    assert 'dynamic = ["version"]' in text and "cutlass_gemm._version.__version__" in text
    assert not re.search(r"(?m)^version\s*=", text.split("[tool.")[0]), "a second version in [project]"


def test_build_info():
    info = cutlass_gemm.build_info()
    assert info["version"] == cutlass_gemm.__version__ and info["built"] and info["extension_loaded"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", info["cutlass_version"]), info["cutlass_version"]
    assert info["archs"] and set(info["archs"]) <= set(kernel_table.ARCHS)
    assert info["torch_version"] and info["cuda_version"]
    # The build's kernel list is what the loaded extension reports.
    names = sorted(n for ns in info["kernel_names"].values() for n in ns)
    assert names == sorted(configs.compiled_kernels()) and info["compiled_kernels"] == len(names)
    assert sum(info["kernels"].values()) == len(names)
    for arch, ns in info["kernel_names"].items():
        assert all(n.startswith(f"sm{arch}_") for n in ns)
    if info["kernel_filter"] is None:  # a full build: every kernel of the built archs
        assert len(names) == sum(1 for k in kernel_table.KERNELS if k.arch in info["archs"])


def test_readme_build_info_example_counts_the_table():
    """The README's build_info() example shows the default build (every arch): its kernel counts
    are the table's, so adding a kernel without updating it fails here."""
    with open(os.path.join(ROOT, "README.md")) as fh:
        text = fh.read()
    per_arch = re.search(r"'kernels': \{([^}]*)\}", text).group(1)
    shown = {int(a): int(c) for a, c in re.findall(r"(\d+): (\d+)", per_arch)}
    table = {arch: sum(1 for k in kernel_table.KERNELS if k.arch == arch) for arch in kernel_table.ARCHS}
    assert shown == table
    assert int(re.search(r"'compiled_kernels': (\d+)", text).group(1)) == len(kernel_table.KERNELS)


def test_readme_explain_examples_name_what_explain_returns(monkeypatch):
    """The README's `configs.explain(...)  # -> kernel (rule N ...)` lines show the shipped rules'
    answer: re-deriving the rules without updating them fails here. (The defaults alone: on a GPU with a
    shipped overlay its rules would come first and renumber them.)"""
    monkeypatch.setattr(configs, "_gpu_name_in_use", None)
    with open(os.path.join(ROOT, "README.md")) as fh:
        lines = [m.groups() for m in re.finditer(r"configs\.explain\((.*)\)\s+# .*?-> (\S+)(?: \((rule \d+) \(default\)\))?", fh.read())]
    assert len(lines) >= 2
    for args, kernel, rule in lines:
        got = eval(f"configs.explain({args}, arch=90)", {"configs": configs, "torch": torch})
        want = kernel.lstrip(".")
        assert got.kernel.endswith(want), f"README: explain({args}) -> {kernel}, the rules give {got.kernel}"
        if rule:
            assert f"{rule} (default)" in str(got), f"README: explain({args}) -> {rule}, the rules give {got}"


def _env(args=(), pythonpath_=None, cwd=None):
    env = dict(os.environ, PYTHONPATH=pythonpath_ or pythonpath(), CUDA_VISIBLE_DEVICES="")
    return subprocess.run([sys.executable, "-m", "cutlass_gemm.env", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


def test_env_report(tmp_path):
    r = _env(cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    out = r.stdout
    for want in (f"version: {cutlass_gemm.__version__}", "extension: loaded", f"version: {torch.__version__}",
                 "cuda_available: False", "cutlass_version: ", "archs: ", "kernels: {", "tuning_cache:", "driver:"):
        assert want in out, (want, out)
    import json

    data = json.loads(_env(["--json"], cwd=tmp_path).stdout)
    assert data["build"]["compiled_kernel_names"] == configs.compiled_kernels()
    assert data["tuning_cache"]["path"].endswith("tuned.json")


def test_env_report_with_a_broken_extension(tmp_path):
    """The package's Python files without the compiled extension: the report prints the import
    error (exit 0) instead of a traceback, while a plain import still raises."""
    pkg = tmp_path / "site" / "cutlass_gemm"
    shutil.copytree(os.path.dirname(cutlass_gemm.__file__), pkg,
                    ignore=shutil.ignore_patterns("*.so", "__pycache__", "_build_info.py"))
    path = str(tmp_path / "site")
    r = _env(pythonpath_=path, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "FAILED TO LOAD" in r.stdout and "compiled extension failed to load" in r.stdout, r.stdout
    assert f"version: {torch.__version__}" in r.stdout and "built: False" in r.stdout
    plain = subprocess.run([sys.executable, "-c", "import cutlass_gemm"], capture_output=True, text=True, cwd=tmp_path,
                           env=dict(os.environ, PYTHONPATH=path), timeout=300)
    assert plain.returncode != 0 and "compiled extension failed to load" in plain.stderr


def test_env_report_when_the_extension_loads_but_is_refused(tmp_path):
    """The .so imports but the package refuses it (built for another CUDA major): the report says
    FAILED TO LOAD and build_info agrees (extension_loaded False), not both at once (audit, session 10)."""
    if torch.version.cuda is None:
        pytest.skip("a CPU-only torch does not check the build's CUDA version")
    pkg = tmp_path / "site" / "cutlass_gemm"
    shutil.copytree(os.path.dirname(cutlass_gemm.__file__), pkg, ignore=shutil.ignore_patterns("__pycache__"))
    info = pkg / "_build_info.py"
    text = info.read_text()
    assert "CUDA_VERSION = " in text
    info.write_text(re.sub(r"CUDA_VERSION = '[^']*'", "CUDA_VERSION = '1.0'", text))
    r = _env(pythonpath_=str(tmp_path / "site"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "FAILED TO LOAD" in r.stdout and "built for CUDA 1.0" in r.stdout, r.stdout
    assert "extension_loaded: False" in r.stdout and "extension_loaded: True" not in r.stdout, r.stdout


def test_env_report_without_torch(tmp_path):
    """torch failing to import (a stub that raises stands in for it): the report still has the package,
    the build, Python, the driver, the tuning cache and the settings, and says what torch raised."""
    stub = tmp_path / "stub" / "torch"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text('raise ImportError("no torch in this environment")\n')
    r = _env(pythonpath_=os.pathsep.join([str(tmp_path / "stub"), pythonpath()]), cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    for want in (f"version: {cutlass_gemm.__version__}", "FAILED TO LOAD", "no torch in this environment",
                 "python:", "driver:", "tuning_cache:", "settings:"):
        assert want in r.stdout, (want, r.stdout)


def test_env_gpu_support_names_what_the_build_lacks():
    from cutlass_gemm.env import gpu_support

    assert gpu_support(90, [90, 100]) == "supported (sm_90 kernels)"
    assert gpu_support(100, [90]).startswith("not in this build (sm_100 kernels not compiled; built: sm_90")
    assert gpu_support(0, [90]) == "not supported"
    assert gpu_support(90, None) == "supported (sm_90 kernels)"  # no build info: the capability decides


def test_workflows_pass_the_offline_check():
    assert check_workflows.check_paths([os.path.join(ROOT, ".github", "workflows")]) == []


def test_workflow_check_catches_mistakes():
    good = {"on": {"push": None}, "jobs": {
        "a": {"runs-on": "ubuntu-24.04", "steps": [{"id": "s", "run": "echo hi"}]},
        "b": {"needs": "a", "runs-on": ["self-hosted", "gpu"], "steps": [
            {"uses": "actions/checkout@v4"}, {"run": "echo ${{ needs.a.result }}"}]}}}
    assert check_workflows.check_workflow(good, "w") == []
    assert check_workflows.check_workflow({True: {"push": None}, "jobs": good["jobs"]}, "w") == []  # YAML 1.1 `on`

    def bad(mutate):
        import copy

        doc = copy.deepcopy(good)
        mutate(doc)
        return check_workflows.check_workflow(doc, "w")

    assert any("needs unknown job" in e for e in bad(lambda d: d["jobs"]["b"].update(needs="zz")))
    assert any("exactly one of run / uses" in e for e in bad(lambda d: d["jobs"]["a"]["steps"][0].update(uses="x/y@v1")))
    assert any("no runs-on" in e for e in bad(lambda d: d["jobs"]["a"].pop("runs-on")))
    assert any("no steps" in e for e in bad(lambda d: d["jobs"]["a"].update(steps=[])))
    assert any("bad uses" in e for e in bad(lambda d: d["jobs"]["b"]["steps"][0].update(uses="actions/checkout")))
    assert any("bash -n" in e for e in bad(lambda d: d["jobs"]["a"]["steps"][0].update(run="if true; then echo")))
    assert any("unknown key" in e for e in bad(lambda d: d["jobs"]["a"].update({"runs_on": "x"})))
    assert any("cycle" in e for e in bad(lambda d: d["jobs"]["a"].update(needs="b")))
    assert any("needs.zz" in e for e in bad(lambda d: d["jobs"]["b"]["steps"][1].update(run="echo ${{ needs.zz.x }}")))
    assert any("no `on`" in e for e in bad(lambda d: d.pop("on")))
