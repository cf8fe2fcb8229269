"""pytest setup for the `coreai` package tests (tests/python/test_coreai_*.py).

Run: .venv/bin/python -m pytest tests/python (scripts/check sets up .venv/)
coreai-gen comes from COREAI_GEN, else PATH, else the newest build*/generator/coreai-gen
of this checkout; tests that need it (or xmllint, or a C compiler) are
skipped when it is missing. Compiled models are cached by content hash in
COREAI_CACHE_DIR (default: $TMPDIR/coreai-py-cache-UID).
"""
import asyncio
import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))


def _find_coreai_gen():
    """As coreai._toolchain.find_coreai_gen: COREAI_GEN, PATH, then the newest build*/generator/coreai-gen."""
    env = os.environ.get("COREAI_GEN")
    if env:
        return env if os.access(env, os.X_OK) else None
    on_path = shutil.which("coreai-gen")
    if on_path:
        return on_path
    found = [c for c in glob.glob(str(REPO / "build*" / "generator" / "coreai-gen")) if os.access(c, os.X_OK)]
    return max(found, key=lambda c: os.stat(c).st_mtime) if found else None


_GEN = _find_coreai_gen()
if _GEN:
    os.environ["COREAI_GEN"] = str(Path(_GEN).resolve())

SCHEMA = REPO / "schema" / "coreai-model.rng"


@pytest.fixture(scope="session")
def coreai_gen():
    if not _GEN:
        pytest.skip("coreai-gen not built (set COREAI_GEN or build build*/generator/coreai-gen)")
    return os.environ["COREAI_GEN"]


@pytest.fixture(scope="session")
def c_compiler():
    cc = os.environ.get("CC", "cc").split()[0]
    if not shutil.which(cc):
        pytest.skip("no C compiler")
    return cc


@pytest.fixture(scope="session")
def xmllint():
    exe = shutil.which("xmllint")
    if not exe:
        pytest.skip("xmllint not installed")

    def check(path):
        r = subprocess.run([exe, "--noout", "--relaxng", str(SCHEMA), str(path)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    return check


@pytest.fixture
def gen_print(coreai_gen):
    """`coreai-gen print MODEL` -> stdout (asserting success)."""
    def run(path):
        r = subprocess.run([coreai_gen, "print", str(path)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return r.stdout
    return run


@pytest.fixture
def gen_check(coreai_gen):
    def run(path):
        return subprocess.run([coreai_gen, "check", str(path)], capture_output=True, text=True)
    return run


@pytest.fixture
def run_async():
    return asyncio.run


_PROBE = """<?xml version="1.0" encoding="UTF-8"?>
<coreai-model format="1">
  <graph name="main">
    <arg id="x" dtype="f32" shape="4"/>
    <const id="i" dtype="i64" shape="1">0</const>
    <op kind="coreai.gather">
      <operand ref="x"/><operand ref="i"/>
      <attr name="axis" type="si64">0</attr>
      <result id="g" dtype="f32" shape="1"/>
    </op>
    <op kind="coreai.elementwise_kernel">
      <operand ref="g"/>
      <attr name="input_names" type="str[]">a</attr>
      <attr name="name" type="str">k</attr>
      <attr name="output_names" type="str[]">b</attr>
      <attr name="source" type="str">b[id] = a[id];</attr>
      <result id="k" dtype="f32" shape="1"/>
    </op>
    <output><value ref="k"/></output>
  </graph>
  <entrypoint name="main" graph="main"><input name="x"/><output name="y"/></entrypoint>
</coreai-model>
"""


@pytest.fixture(scope="session")
def extended_ops(coreai_gen, tmp_path_factory):
    """The coreai-gen under test; it must know the extended op table (and str[]
    attributes): a coreai-gen that rejects the probe fails the tests using it."""
    probe = tmp_path_factory.mktemp("probe") / "probe.xml"
    probe.write_text(_PROBE)
    r = subprocess.run([coreai_gen, "check", str(probe)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"{coreai_gen} rejects the extended-op probe model: {r.stderr.strip()}")
    return coreai_gen


def pytest_sessionfinish(session, exitstatus):
    """A skipped test is a check that did not run: the session fails on any
    skip unless COREAI_ALLOW_SKIPS=1 (e.g. a developer without a C compiler)."""
    if os.environ.get("COREAI_ALLOW_SKIPS") == "1":
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    if skipped and session.exitstatus == 0:
        for report in skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            print(f"\nunexpected skip: {report.nodeid}: {reason}")
        session.exitstatus = 1
