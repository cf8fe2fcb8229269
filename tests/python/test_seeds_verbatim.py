"""The seed documents' code, verbatim, as whole programs (tests/seeds/).

Each tests/seeds/NNN_*.py holds the code of one example of a seed page
(../shared/seeds/NNN_*.txt, the user's specification) between
"# === verbatim: <seed file>, <section> ===" and "# === end verbatim ==="
markers, joined into a whole program only by what the page leaves implied
("# === implied by the page ... ===" preludes) and followed by a
"# === check ... ===" epilogue that runs the converted program through the
generated C and compares it with eager PyTorch
(max|out - ref| <= 1e-5 * max(1, max|ref|)).  See tests/seeds/SOURCES.md.

test_seed_program runs each file as a program of its own with this Python,
the repository's python/ on PYTHONPATH and COREAI_GEN, and checks its exit
status and printed lines.  The programs of a session run concurrently
(three at a time), each in a process forked from one that has already
imported torch, torch.export and coreai_torch (preloaded_run.py): those
imports were ~7 s of each program's ~10 s.

test_verbatim_regions checks every verbatim region against the seed text
(modulo whitespace) when ../shared/seeds exists next to the repository,
and otherwise that every region is non-empty and compiles.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SEEDS_DIR = REPO / "tests" / "seeds"
SEED_TEXTS = REPO.parent / "shared" / "seeds"  # the seeds, outside the repository (absent on a fresh clone)
PROGRAMS = sorted(p.name for p in SEEDS_DIR.glob("[0-9][0-9][0-9]_*.py"))
PARALLEL = 3
TIMEOUT = 600

# Lines (regular expressions, full-line match) each program must print, besides "SEED CHECK OK: <name>".
EXPECTED_LINES = {
    "001_validation.py": [r"ValueError: .*composite_attrs.*composite_op_name.*", r"UserWarning: .*Unused.*"],
    "003_feedforward_verify.py": [r"Max abs error: \S+", r"Outputs match: True",
                                  r"weight of ones: 'Max abs error: \S+\\nOutputs match: True'",
                                  r"random weight: 'Max abs error: \S+\\nOutputs match: True'"],
    "004_constructor.py": [r"empty converter: ValueError: .*"],
    "004_clear.py": [r"encoder: max abs error .*", r"decoder: max abs error .*",
                     r"decoder after clear\(entrypoints=\['encoder'\]\): max abs error .*",
                     r"custom lowering kept across clear: ValueError: .*",
                     r"after clear\(\): ValueError: .*"],
    "004_register_torch_lowering_custom_op.py": (
        [rf"register_torch_lowering\('{re.escape(n)}'\): ValueError: .*not of the form 'namespace::op_name'.*"
         for n in ["scaled_add", "my_lib.scaled_add", "my_lib:scaled_add", "::scaled_add", "my_lib::"]]
        + [rf"register_torch_lowering\('{ns}::my_op'\): ValueError: .*namespace '{ns}' is reserved.*"
           for ns in ["aten", "higher_order", "coreai", "coreaix"]]
        + [r"register_torch_lowering\('my_lib::scaled_add.default'\): ValueError: .*already registered.*"]),
    "004_io_naming_stateless.py": [r"named: inputs=\['features'\] outputs=\['logits'\] states=\[\]",
                                   r"default: inputs=\['x'\] outputs=\['addmm'\] states=\[\] .*"],
    "004_io_naming_stateful.py": [
        r"named: states=\['kv_cache', 'pos_idx', 'y_state'\] inputs=\['query', 'context'\] "
        r"outputs=\['attn_out', 'scaled'\]",
        r"default: states=\['b_kv_cache', 'b_pos_idx', 'y'\] inputs=\['x', 'z'\] outputs=\['add_2', 'mul_1'\] .*"],
    "004_io_naming_defaults.py": [
        r"InputsAndBuffer: inputs=\['x', 'z'\] outputs=\['mul'\] states=\['b_kv_cache'\]",
        r"Outputs: inputs=\['a', 'b', 'c', 'd'\] outputs=\['add', 'mul'\] states=\[\]",
        r"MutatedInput: inputs=\[\] outputs=\['sub'\] states=\['y'\]"],
}
# Programs of a page's prose or table rather than its code: no verbatim region of their own.
NO_VERBATIM = {"004_io_naming_defaults.py"}

_BEGIN = re.compile(r"^# === verbatim: (?P<seed>\d{3}_[0-9a-f]+\.txt), (?P<section>.*) ===$")
_END = "# === end verbatim ==="
_ASYNCIO_RUN = re.compile(r"^(\s*)asyncio\.run\((.*)\)\s*$")


def verbatim_regions(path):
    """[(seed file, section, code, first line number)] of a seed program."""
    regions, current = [], None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        m = _BEGIN.match(line)
        if m:
            assert current is None, f"{path.name}:{number}: nested verbatim region"
            current = (m.group("seed"), m.group("section"), [], number + 1)
        elif line == _END:
            assert current is not None, f"{path.name}:{number}: end marker without a region"
            regions.append((current[0], current[1], "\n".join(current[2]) + "\n", current[3]))
            current = None
        elif current is not None:
            current[2].append(line)
    assert current is None, f"{path.name}: unterminated verbatim region"
    return regions


def _squash(text):
    return re.sub(r"\s+", "", text)


def _as_on_page(code):
    """The region as the page writes it: a top-level `asyncio.run(f(...))` is the page's `await f(...)`."""
    return "\n".join(_ASYNCIO_RUN.sub(r"\1await \2", line) for line in code.splitlines())


@pytest.fixture(scope="module")
def seed_runs(request, coreai_gen, tmp_path_factory):
    """Runs the seed programs this session selected; {file name: CompletedProcess}.

    Each runs in its own process, PARALLEL at a time, forked by
    preloaded_run.py after it has imported torch, torch.export and
    coreai_torch (the ~7 s each program would otherwise spend importing
    them): the program runs as __main__ from its directory, as
    `python PROGRAM` runs it."""
    selected = [item.callspec.params["program"] for item in request.session.items
                if getattr(item, "originalname", None) == "test_seed_program" and hasattr(item, "callspec")]
    env = dict(os.environ)
    env["COREAI_GEN"] = coreai_gen
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "python")] + [p for p in [env.get("PYTHONPATH")] if p])
    env["PYTHONWARNINGS"] = "ignore::FutureWarning"
    out = tmp_path_factory.mktemp("seed_runs")
    runner = subprocess.run([sys.executable, str(Path(__file__).with_name("preloaded_run.py")), str(PARALLEL),
                             str(TIMEOUT), str(out)] + [str(SEEDS_DIR / name) for name in selected],
                            cwd=str(SEEDS_DIR), env=env, capture_output=True, text=True,
                            timeout=TIMEOUT * (len(selected) // PARALLEL + 2))
    assert runner.returncode == 0, f"preloaded_run.py exited with {runner.returncode}:\n{runner.stderr[-6000:]}"
    runs = {}
    for name in selected:
        status = (out / f"{name}.rc").read_text().strip()
        rc = None if status == "timeout" else int(status)
        runs[name] = subprocess.CompletedProcess(name, rc, (out / f"{name}.out").read_text(errors="replace"),
                                                 (out / f"{name}.err").read_text(errors="replace"))
    return runs


def test_programs_found():
    assert len(PROGRAMS) >= 20, PROGRAMS
    assert set(EXPECTED_LINES) <= set(PROGRAMS), set(EXPECTED_LINES) - set(PROGRAMS)


@pytest.mark.parametrize("program", PROGRAMS)
def test_seed_program(program, seed_runs):
    r = seed_runs[program]
    tail = f"\n--- stdout (tail) ---\n{r.stdout[-4000:]}\n--- stderr (tail) ---\n{r.stderr[-6000:]}"
    assert r.returncode is not None, f"{program} ran longer than {TIMEOUT} s{tail}"
    assert r.returncode == 0, f"{program} exited with {r.returncode}{tail}"
    lines = r.stdout.splitlines()
    name = program[:-3]
    for pattern in [re.escape(f"SEED CHECK OK: {name}")] + EXPECTED_LINES.get(program, []):
        assert any(re.fullmatch(pattern, line) for line in lines), f"{program}: no line matching {pattern!r}{tail}"


@pytest.mark.parametrize("program", PROGRAMS)
def test_verbatim_regions(program):
    regions = verbatim_regions(SEEDS_DIR / program)
    if program in NO_VERBATIM:
        assert not regions, f"{program} is listed in NO_VERBATIM but has verbatim regions"
    else:
        assert regions, f"{program} has no verbatim region"
    for seed, section, code, line in regions:
        where = f"{program}:{line} ({seed}, {section})"
        assert code.strip(), f"{where}: empty verbatim region"
        compile(code, where, "exec")
        if SEED_TEXTS.is_dir():
            seed_path = SEED_TEXTS / seed
            assert seed_path.is_file(), f"{where}: {seed_path} does not exist"
            assert _squash(_as_on_page(code)) in _squash(seed_path.read_text()), \
                f"{where}: the region is not in {seed} (modulo whitespace)"
        else:
            # the seeds are not next to this checkout: the committed provenance must still name the file
            assert seed in (SEEDS_DIR / "SOURCES.md").read_text(), f"{where}: {seed} not in SOURCES.md"
