#!/usr/bin/env python3
"""Offline check of the GitHub Actions workflows (CI has no network for a schema download, and
actionlint is not a pip package): YAML syntax (PyYAML), the workflow structure GitHub requires,
and `bash -n` on every `run:` script.

    python tools/check_workflows.py [.github/workflows ...]     # files or folders; exit 1 on errors

Checked: top-level keys; `on` present; every job has `runs-on` (or `uses` of a reusable workflow)
and non-empty `steps`; `needs` name existing jobs and form no cycle; each step has exactly one of
`run` / `uses`, known keys only, unique ids; `uses` is `owner/repo[/path]@ref`, `./path` or
`docker://...`; `${{ }}` expressions are closed and their `needs.<job>` / `steps.<id>` references
exist; `timeout-minutes` is a positive number; bash scripts parse.
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
import tempfile
from typing import Dict, List

import yaml

TOP_KEYS = {"name", "run-name", "on", "permissions", "env", "defaults", "concurrency", "jobs"}
JOB_KEYS = {"name", "needs", "permissions", "runs-on", "environment", "concurrency", "outputs", "env", "defaults",
            "if", "steps", "timeout-minutes", "strategy", "continue-on-error", "container", "services", "uses",
            "with", "secrets"}
STEP_KEYS = {"id", "if", "name", "uses", "run", "working-directory", "shell", "with", "env", "continue-on-error",
             "timeout-minutes"}
USES = re.compile(r"^(\./\S+|docker://\S+|[\w.-]+/[\w.-]+(/[\w./-]+)?@[\w.-]+)$")
EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def _expr_errors(text: str, where: str, jobs: Dict, needs: List[str], step_ids: List[str]) -> List[str]:
    errors = []
    if text.count("${{") != len(EXPR.findall(text)):
        errors.append(f"{where}: unclosed ${{{{ expression")
    for body in EXPR.findall(text):
        for job in re.findall(r"\bneeds\.([\w-]+)", body):
            if job not in needs:
                errors.append(f"{where}: `needs.{job}` but the job does not need {job!r}")
        for sid in re.findall(r"\bsteps\.([\w-]+)", body):
            if sid not in step_ids:
                errors.append(f"{where}: `steps.{sid}` names no earlier step id")
    return errors


def _bash_errors(script: str, where: str) -> List[str]:
    # Expressions are substituted by GitHub before bash runs: replace them with a plain word.
    text = EXPR.sub("EXPR", script)
    with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as fh:
        fh.write(text)
    try:
        r = subprocess.run(["bash", "-n", fh.name], capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(fh.name)
    return [] if r.returncode == 0 else [f"{where}: bash -n: {r.stderr.strip()}"]


def _cycle(graph: Dict[str, List[str]]) -> List[str]:
    state: Dict[str, int] = {}

    def visit(n, path):
        if state.get(n) == 1:
            return path[path.index(n):] + [n]
        if state.get(n) == 2:
            return []
        state[n] = 1
        for m in graph.get(n, []):
            found = visit(m, path + [n])
            if found:
                return found
        state[n] = 2
        return []

    for n in graph:
        found = visit(n, [])
        if found:
            return found
    return []


def check_workflow(doc: object, name: str) -> List[str]:
    """Errors of one parsed workflow (PyYAML reads the key `on` as True: YAML 1.1)."""
    if not isinstance(doc, dict):
        return [f"{name}: not a mapping"]
    if True in doc:
        doc = {("on" if k is True else k): v for k, v in doc.items()}
    errors = [f"{name}: unknown top-level key {k!r}" for k in doc if k not in TOP_KEYS]
    if "on" not in doc:
        errors.append(f"{name}: no `on` (trigger)")
    jobs = doc.get("jobs")
    if not isinstance(jobs, dict) or not jobs:
        return errors + [f"{name}: no jobs"]
    graph = {}
    for jid, job in jobs.items():
        where = f"{name}: job {jid}"
        if not re.fullmatch(r"[A-Za-z_][\w-]*", str(jid)):
            errors.append(f"{where}: invalid job id")
        if not isinstance(job, dict):
            errors.append(f"{where}: not a mapping")
            continue
        errors += [f"{where}: unknown key {k!r}" for k in job if k not in JOB_KEYS]
        needs = job.get("needs", [])
        needs = [needs] if isinstance(needs, str) else list(needs or [])
        graph[jid] = needs
        errors += [f"{where}: needs unknown job {n!r}" for n in needs if n not in jobs]
        tm = job.get("timeout-minutes")
        if tm is not None and not (isinstance(tm, (int, float)) and tm > 0) and "${{" not in str(tm):
            errors.append(f"{where}: timeout-minutes must be a positive number")
        if "uses" in job:  # a reusable workflow call has no steps
            continue
        if "runs-on" not in job:
            errors.append(f"{where}: no runs-on")
        steps = job.get("steps")
        if not isinstance(steps, list) or not steps:
            errors.append(f"{where}: no steps")
            continue
        ids: List[str] = []
        for i, step in enumerate(steps):
            sw = f"{where} step {i + 1}" + (f" ({step.get('name')})" if isinstance(step, dict) and step.get("name") else "")
            if not isinstance(step, dict):
                errors.append(f"{sw}: not a mapping")
                continue
            errors += [f"{sw}: unknown key {k!r}" for k in step if k not in STEP_KEYS]
            if ("run" in step) == ("uses" in step):
                errors.append(f"{sw}: needs exactly one of run / uses")
            if "uses" in step and not USES.match(str(step["uses"])):
                errors.append(f"{sw}: bad uses {step['uses']!r} (owner/repo@ref, ./path or docker://image)")
            if "with" in step and not isinstance(step["with"], dict):
                errors.append(f"{sw}: with must be a mapping")
            if "run" in step and "uses" not in step:
                if not isinstance(step["run"], str) or not step["run"].strip():
                    errors.append(f"{sw}: empty run")
                elif step.get("shell", (job.get("defaults") or {}).get("run", {}).get("shell", "bash")).startswith("bash"):
                    errors += _bash_errors(step["run"], sw)
            errors += _expr_errors(yaml.safe_dump(step), sw, jobs, needs, ids)
            if "id" in step:
                if step["id"] in ids:
                    errors.append(f"{sw}: duplicate step id {step['id']!r}")
                ids.append(step["id"])
        rest = {k: v for k, v in job.items() if k != "steps"}
        errors += _expr_errors(yaml.safe_dump(rest), where, jobs, needs, [])
    cyc = _cycle(graph)
    if cyc:
        errors.append(f"{name}: needs cycle {' -> '.join(cyc)}")
    return errors


def check_paths(paths: List[str]) -> List[str]:
    files: List[str] = []
    for p in paths:
        files += sorted(glob.glob(os.path.join(p, "*.yml")) + glob.glob(os.path.join(p, "*.yaml"))) if os.path.isdir(p) else [p]
    if not files:
        return [f"no workflow files under {paths}"]
    errors = []
    for f in files:
        try:
            with open(f) as fh:
                doc = yaml.safe_load(fh)
        except yaml.YAMLError as e:
            errors.append(f"{f}: YAML: {e}")
            continue
        found = check_workflow(doc, f)
        errors += found
        if not found:
            print(f"check_workflows: {f}: ok ({len(doc.get('jobs', {}))} jobs)")
    return errors


def main() -> int:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    errors = check_paths(sys.argv[1:] or [os.path.join(root, ".github", "workflows")])
    for e in errors:
        print(f"check_workflows: ERROR: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
