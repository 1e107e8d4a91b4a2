"""The tuned cache and the config file never break user code (CPU-runnable).

Concurrent writers (processes) leave a valid file holding every writer's entries; readers never
see a partial file; corrupt, truncated, foreign or malformed files are ignored with a warning;
an unwritable location warns and keeps the rules for the process; an unknown or unqueryable GPU
name only matches its own cache; a bad $CUTLASS_GEMM_CONFIG_FILE / cache does not break import.
"""

import json
import multiprocessing as mp
import os
import subprocess
import sys
import warnings
from types import SimpleNamespace

import pytest
import torch

from cutlass_gemm import autotune as tune
from cutlass_gemm import configs
from pkg_paths import pythonpath

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = ["sm90_bf16_t128x128x64_c1x1_coop", "sm90_bf16_t64x128x64_c1x1_pingpong_st7",
           "sm90_f16_t128x256x64_c2x1_coop", "sm90_e4m3_scaled_fast_t64x128x128_c1x1_pingpong"]
WRITERS, WRITES = 4, 10


@pytest.fixture(autouse=True)
def _restore_rules():
    yield
    configs.clear_rules()


def _rule(i: int, n: int = 512, k: int = 256) -> configs.Rule:
    return configs.Rule(KERNELS[i % len(KERNELS)], m=(1, 100 + i), n=(n, n), k=(k, k))


# ---------------------------------------------------------------------------------------------
# Concurrent writers and readers (separate processes, each with its own lock fd).

def _writer(path: str, wid: int, start) -> None:
    start.wait()
    mine = []
    for j in range(WRITES):  # like tune(): each write carries all of this writer's rules so far
        mine.insert(0, configs.Rule(KERNELS[wid % len(KERNELS)], m=(1, 10 + j), n=(1000 + wid, 1000 + wid),
                                    k=(64 * (j + 1), 64 * (j + 1))))
        assert tune.write_cache(mine, path) == path


def _reader(path: str, start, stop, out) -> None:
    start.wait()
    reads = bad = 0
    while not stop.is_set():
        try:
            with open(path) as fh:
                data = json.load(fh)
            tune._parse(data)
            reads += 1
        except FileNotFoundError:
            pass
        except Exception:  # noqa: BLE001 - any partial/corrupt read is the failure being counted
            bad += 1
    out.put((reads, bad))


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_concurrent_writers_merge_into_a_valid_file(tmp_path, monkeypatch):
    # fork (cheap: no torch import per child) where available; children never touch CUDA: the
    # GPU name is fixed here, before the fork. spawn elsewhere (children key "cpu").
    monkeypatch.setattr(tune, "_gpu_name", lambda: "test GPU")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    path = str(tmp_path / "tuned.json")
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    start, stop, out = ctx.Event(), ctx.Event(), ctx.Queue()
    # Spawned children need everything importable: this process's cutlass_gemm and this module (tests/).
    monkeypatch.setenv("PYTHONPATH", pythonpath(os.path.dirname(__file__)))
    writers = [ctx.Process(target=_writer, args=(path, w, start)) for w in range(WRITERS)]
    reader = ctx.Process(target=_reader, args=(path, start, stop, out))
    for p in writers + [reader]:
        p.start()
    start.set()
    for p in writers:
        p.join(120)
    stop.set()
    reads, bad = out.get(timeout=60)
    reader.join(60)
    assert [p.exitcode for p in writers] == [0] * WRITERS
    assert bad == 0, f"a reader saw a partial or corrupt cache {bad} times (of {reads + bad} reads)"
    with open(path) as fh:
        data = json.load(fh)
    rules = tune._parse(data)
    # Merged under the lock: every writer's newest rule set survives, nothing twice.
    got = {(r.n[0], r.k[0]) for r in rules}
    want = {(1000 + w, 64 * (j + 1)) for w in range(WRITERS) for j in range(WRITES)}
    assert got == want and len(rules) == len(want)
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")], "temp files left behind"


def test_threads_in_one_process_merge(tmp_path):
    import threading

    path = str(tmp_path / "tuned.json")
    errors = []

    def work(i):
        try:
            for j in range(5):
                tune.write_cache([_rule(i, n=2000 + i, k=64 * (j + 1))], path)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    rules = tune._parse(json.load(open(path)))
    assert {(r.n[0], r.k[0]) for r in rules} == {(2000 + i, 64 * (j + 1)) for i in range(4) for j in range(5)}


def test_a_tune_writes_only_what_it_tuned(tmp_path):
    """install_tuned (tune()'s last step) merges only its new rules into the file: a stale copy this
    process loaded at import does not overwrite another process's newer tune of the same (N, K), and
    rules from CUTLASS_GEMM_CONFIG_FILE / configs.load() never become cache entries (audit, session 10)."""
    path = str(tmp_path / "tuned.json")
    stale, newer = configs.Rule(KERNELS[0], n=(512, 512), k=(256, 256)), configs.Rule(KERNELS[1], n=(512, 512), k=(256, 256))
    from_file = configs.Rule(KERNELS[1])  # a catch-all from a config file
    configs._tuned_rules[:] = [stale, from_file]  # what this process loaded
    tune.write_cache([newer], path)  # another process re-tuned (512, 256) since
    mine = configs.Rule(KERNELS[0], m=(1, 64), n=(1024, 1024), k=(256, 256))
    tune.install_tuned([mine], "any", save=True, path=path)
    with open(path) as fh:
        saved = {(r["kernel"], tuple(r["n"])) for r in json.load(fh)["rules"]}
    assert saved == {(KERNELS[1], (512, 512)), (KERNELS[0], (1024, 1024))}
    assert configs._tuned_rules[0] == mine and configs.explain(16, 1024, 256).kernel == KERNELS[0]


def test_a_config_file_with_a_mistake_is_an_error(tmp_path):
    """A file without a 'rules' list, or a rule with a key it does not know (a misspelt axis would make
    it a catch-all), is refused naming what is expected; nothing is installed."""
    before = configs.rules()
    bad = {"no_rules.json": {"rule": [{"kernel": KERNELS[0]}]},
           "families.json": {"families": []},
           "list.json": [{"kernel": KERNELS[0]}],
           "typo.json": {"rules": [{"kernel": KERNELS[0], "M": [1, 16], "epilog": "fused"}]}}
    msgs = {"no_rules.json": "an object with a 'rules' list", "families.json": "an object with a 'rules' list",
            "list.json": "got a JSON list", "typo.json": "unknown key\\(s\\) 'M', 'epilog'"}
    for name, doc in bad.items():
        p = tmp_path / name
        p.write_text(json.dumps(doc))
        with pytest.raises(ValueError, match=msgs[name]):
            configs.load(str(p))
        assert configs.rules() == before


def test_merge_replaces_same_nk_and_drops_foreign_files(tmp_path):
    path = str(tmp_path / "tuned.json")
    tune.write_cache([_rule(0, n=512, k=256), _rule(1, n=1024, k=256)], path)
    newer = configs.Rule(KERNELS[1], m=(1, 7), n=(512, 512), k=(256, 256))  # same family as _rule(0)
    tune.write_cache([newer], path)
    rules = tune._parse(json.load(open(path)))
    assert rules[0] == newer and len(rules) == 2 and rules[1].n == (1024, 1024)
    # A file for another GPU is replaced, not merged.
    data = json.load(open(path))
    data["gpu"] = "NVIDIA Something Else"
    open(path, "w").write(json.dumps(data))
    tune.write_cache([_rule(3)], path)
    assert tune._parse(json.load(open(path))) == [_rule(3)]
    # merge=False: last writer wins.
    tune.write_cache([_rule(1, n=64)], path, merge=False)
    assert tune._parse(json.load(open(path))) == [_rule(1, n=64)]


# ---------------------------------------------------------------------------------------------
# Corrupt, truncated and malformed files: ignored with a warning, defaults stay.

def _valid_text() -> str:
    return json.dumps(dict(tune._cache_key(), rules=[{"kernel": KERNELS[0], "m": [1, 2], "n": [3, 4], "k": [5, 6]}]))


def _with_rule(**fields) -> str:
    rule = {"kernel": KERNELS[0], "m": [1, 2], "n": [3, 4], "k": [5, 6]}
    rule.update(fields)
    return json.dumps(dict(tune._cache_key(), rules=[rule]))


BAD_FILES = {
    "empty": lambda: "",
    "truncated": lambda: _valid_text()[: len(_valid_text()) // 2],
    "truncated_one_byte": lambda: _valid_text()[:-1],
    "not_json": lambda: "{not json",
    "binary": lambda: b"\x00\xff\xfe\x80garbage",
    "json_list": lambda: "[1, 2, 3]",
    "json_null": lambda: "null",
    "json_string": lambda: '"tuned"',
    "rules_not_list": lambda: json.dumps(dict(tune._cache_key(), rules={"a": 1})),
    "rules_missing": lambda: json.dumps(tune._cache_key()),
    "rule_not_object": lambda: json.dumps(dict(tune._cache_key(), rules=[42])),
    "unknown_kernel": lambda: _with_rule(kernel="sm90_gone"),
    "kernel_not_str": lambda: _with_rule(kernel=7),
    "range_reversed": lambda: _with_rule(m=[5, 1]),
    "range_negative": lambda: _with_rule(n=[-1, 4]),
    "range_huge": lambda: _with_rule(k=[1, 2**70]),
    "range_float": lambda: _with_rule(m=[1.5, 2]),
    "range_bool": lambda: _with_rule(m=[True, 2]),
    "range_str": lambda: _with_rule(m="1-2"),
    "range_short": lambda: _with_rule(m=[1]),
    "range_missing": lambda: json.dumps(dict(tune._cache_key(), rules=[{"kernel": KERNELS[0]}])),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_bad_cache_file_is_ignored_with_a_warning(case, tmp_path):
    path = tmp_path / "tuned.json"
    content = BAD_FILES[case]()
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    before = configs.rules()
    with pytest.warns(UserWarning, match="ignoring unreadable tuned cache"):
        assert tune.load_cache(str(path)) == 0
    assert configs.rules() == before
    # A writer replaces the bad file with a valid one.
    assert tune.write_cache([_rule(0)], str(path)) == str(path)
    assert tune.load_cache(str(path)) == 1


def test_valid_cache_loads_and_directory_in_place_of_file(tmp_path):
    path = tmp_path / "tuned.json"
    path.write_text(_valid_text())
    assert tune.load_cache(str(path)) == 1
    os.remove(path)
    os.mkdir(path)
    with pytest.warns(UserWarning, match="ignoring unreadable tuned cache"):
        assert tune.load_cache(str(path)) == 0
    with pytest.warns(UserWarning, match="could not save the tuned cache"):
        assert tune.write_cache([_rule(0)], str(path)) is None


def test_missing_cache_is_silent(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tune.load_cache(str(tmp_path / "nothing.json")) == 0


# ---------------------------------------------------------------------------------------------
# Unwritable locations.

def test_cache_dir_under_a_file_warns(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("CUTLASS_GEMM_CACHE_DIR", str(blocker / "sub"))
    with pytest.warns(UserWarning, match="could not save the tuned cache"):
        assert tune.write_cache([_rule(0)]) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tune.load_cache() == 0  # nothing there: silent


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root ignores directory permissions")
def test_read_only_cache_dir_warns(tmp_path, monkeypatch):
    d = tmp_path / "ro"
    d.mkdir()
    monkeypatch.setenv("CUTLASS_GEMM_CACHE_DIR", str(d))
    os.chmod(d, 0o555)
    try:
        with pytest.warns(UserWarning, match="could not save the tuned cache"):
            assert tune.write_cache([_rule(0)]) is None
    finally:
        os.chmod(d, 0o755)


def test_failed_replace_leaves_old_file_and_no_temp(tmp_path, monkeypatch):
    """A write that fails half-way (disk full, read-only remount) keeps the old file intact."""
    path = str(tmp_path / "tuned.json")
    tune.write_cache([_rule(0)], path)
    old = open(path).read()

    def boom(*a, **k):
        raise PermissionError(30, "Read-only file system")

    monkeypatch.setattr(tune.os, "replace", boom)
    with pytest.warns(UserWarning, match="could not save the tuned cache"):
        assert tune.write_cache([_rule(1, n=64)], path) is None
    assert open(path).read() == old
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_tune_survives_an_unwritable_cache(tmp_path, monkeypatch):
    """tune() installs its rules and warns when the cache cannot be saved (timer and GPU faked)."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("CUTLASS_GEMM_CACHE_DIR", str(blocker / "sub"))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: False)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "fake GPU")
    monkeypatch.setattr(configs, "current_arch", lambda: 90)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda *a: SimpleNamespace(multi_processor_count=132))
    ref = torch.ones(2, 2)
    monkeypatch.setattr(tune, "_inputs", lambda m, n, k, dtype, scale, fused=False: ((lambda cfg: ref), ref, 1e-3))
    monkeypatch.setattr(tune, "_family_kernels", lambda *a: [configs.Rule(KERNELS[0]).spec])
    with pytest.warns(UserWarning, match="could not save the tuned cache"):
        rules = tune.tune([(16, 640, 320)], torch.bfloat16, timer=lambda fn: 1.0)
    assert len(rules) == 1
    assert configs.explain(16, 640, 320, torch.bfloat16, arch=90).source == "tuned"


# ---------------------------------------------------------------------------------------------
# GPU names.

def test_unknown_gpu_name_only_matches_its_own_cache(tmp_path, monkeypatch):
    path = str(tmp_path / "tuned.json")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "NVIDIA Future GPU 9000 (engineering sample)")
    tune.write_cache([_rule(0)], path)
    assert tune.load_cache(path) == 1
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "NVIDIA H200")
    with pytest.warns(UserWarning, match="written for another gpu"):
        assert tune.load_cache(path) == 0


def test_gpu_name_query_failure_does_not_raise(tmp_path, monkeypatch):
    def broken(*a):
        raise RuntimeError("CUDA driver error: unknown error")

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", broken)
    assert tune._cache_key()["gpu"] == "unknown"
    path = str(tmp_path / "tuned.json")
    assert tune.write_cache([_rule(0)], path) == path
    assert tune.load_cache(path) == 1


# ---------------------------------------------------------------------------------------------
# configs.save / load and import with bad files.

def test_configs_save_is_atomic_and_load_validates(tmp_path, monkeypatch):
    path = str(tmp_path / "rules.json")
    configs.save(path, [_rule(0)])
    assert configs.load(path) == 1
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
    # An explicit load of a bad file raises (the user asked for it) and installs nothing.
    before = configs.rules()
    open(path, "w").write(json.dumps({"rules": [{"kernel": KERNELS[0], "m": [1, 2**70]}]}))
    with pytest.raises((ValueError, RuntimeError, OverflowError)):
        configs.load(path)
    assert configs.rules() == before


def _import_with(env_extra) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=pythonpath(), CUDA_VISIBLE_DEVICES="", **env_extra)
    code = ("import warnings; warnings.simplefilter('always')\n"
            "import cutlass_gemm, torch\n"
            "a = torch.randn(4, 8, dtype=torch.bfloat16); b = torch.randn(3, 8, dtype=torch.bfloat16)\n"
            "print('ok', tuple(cutlass_gemm.gemm(a, b).shape), len(cutlass_gemm.configs.rules()))")
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_import_survives_bad_config_file_and_cache(tmp_path):
    cfg = tmp_path / "rules.json"
    cfg.write_text('{"rules": [{"kernel": "nope"}')
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "tuned.json").write_text("[]")
    r = _import_with({"CUTLASS_GEMM_CONFIG_FILE": str(cfg), "CUTLASS_GEMM_CACHE_DIR": str(cache)})
    assert r.returncode == 0, r.stderr
    assert f"ok (4, 3) {len(configs.DEFAULT_RULES)}" in r.stdout
    assert "ignoring CUTLASS_GEMM_CONFIG_FILE" in r.stderr and "ignoring unreadable tuned cache" in r.stderr


def test_a_bad_gpu_overlay_setting_warns_and_import_goes_on(tmp_path):
    """CUTLASS_GEMM_GPU_OVERLAY other than 0 or 1 warns at import, naming what is expected, and the library works."""
    r = _import_with({"CUTLASS_GEMM_GPU_OVERLAY": "off", "CUTLASS_GEMM_CACHE_DIR": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    assert f"ok (4, 3) {len(configs.DEFAULT_RULES)}" in r.stdout
    assert "expected CUTLASS_GEMM_GPU_OVERLAY 0 or 1, got 'off'" in r.stderr
