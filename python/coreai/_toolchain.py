"""Finding coreai-gen and the runtime sources, and turning a model file into
a loadable shared library (generate C, compile, link), cached by content.

Where the tools come from (first match wins):

* coreai-gen: ``COREAI_GEN`` (a path); ``COREAI_PREFIX/bin/coreai-gen``;
  ``coreai-gen`` on ``PATH``; in a source checkout (``pip install -e``), the
  newest ``build*/generator/coreai-gen``.
* runtime sources (``include/coreai/*.h``, ``src/*.c``): ``COREAI_RUNTIME_DIR``;
  ``COREAI_PREFIX/share/coreai-codegen/runtime``; the same directory of the
  prefix the chosen coreai-gen is installed in (``<prefix>/bin/coreai-gen``);
  in a source checkout, ``runtime-stubs/``.

``cmake --install BUILD --prefix P`` installs both (``P/bin/coreai-gen``,
``P/share/coreai-codegen/runtime``), so ``pip install`` of the Python package
plus ``COREAI_PREFIX=P`` (or ``P/bin`` on ``PATH``) is all the verification
flow (``asset.executable()``) needs."""
from __future__ import annotations

import concurrent.futures
import glob
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

_REPO = Path(__file__).resolve().parents[2]
# runtime sources of an installed tree, relative to its prefix
# (CMakeLists.txt: COREAI_INSTALL_RUNTIMEDIR)
_INSTALLED_RUNTIME = Path("share") / "coreai-codegen" / "runtime"
_INSTALL_HINT = ("build and install coreai-codegen (cmake -S SRC -B BUILD && cmake --build BUILD && "
                 "cmake --install BUILD --prefix PREFIX), then set COREAI_PREFIX=PREFIX or put PREFIX/bin on PATH")

_RESERVED = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
    "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
    "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
    "volatile", "while", "_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic", "_Imaginary",
    "_Noreturn", "_Static_assert", "_Thread_local", "bool", "true", "false", "asm", "typeof", "workspace", "ws",
}


class ToolchainError(RuntimeError):
    """coreai-gen or the C compiler could not be found or failed."""


def repo_root() -> Path:
    return _REPO


def source_tree() -> Path | None:
    """The coreai-codegen checkout this package is imported from (python/ of a
    source tree, as with ``pip install -e``), or None for an installed copy."""
    if (_REPO / "runtime-stubs" / "include" / "coreai" / "runtime.h").is_file() and (_REPO / "generator").is_dir():
        return _REPO
    return None


def _prefix_from_env() -> Path | None:
    env = os.environ.get("COREAI_PREFIX")
    return Path(env) if env else None


def find_coreai_gen() -> str:
    """COREAI_GEN (a path), else COREAI_PREFIX/bin/coreai-gen, else coreai-gen
    on PATH, else (in a source checkout) the newest build*/generator/coreai-gen."""
    env = os.environ.get("COREAI_GEN")
    if env:
        p = Path(env)
        if not p.is_file() or not os.access(p, os.X_OK):
            raise ToolchainError(f"COREAI_GEN={env} is not an executable file")
        return str(p.resolve())
    prefix = _prefix_from_env()
    if prefix is not None:
        p = prefix / "bin" / "coreai-gen"
        if not p.is_file() or not os.access(p, os.X_OK):
            raise ToolchainError(f"COREAI_PREFIX={prefix}: no executable {p}; {_INSTALL_HINT}, or set COREAI_GEN")
        return str(p.resolve())
    found = shutil.which("coreai-gen")
    if found:
        return found
    src = source_tree()
    if src is not None:
        candidates = [c for c in glob.glob(str(src / "build*" / "generator" / "coreai-gen"))
                      if os.access(c, os.X_OK)]
        if candidates:
            return max(candidates, key=lambda c: os.stat(c).st_mtime)
    hint = f"coreai-gen not found: {_INSTALL_HINT}, or set COREAI_GEN to the coreai-gen executable"
    if src is not None:
        hint += f" (in this checkout, {src}/scripts/demo builds {src}/build/generator/coreai-gen)"
    raise ToolchainError(hint)


def _is_runtime_dir(d: Path) -> bool:
    return (d / "include" / "coreai" / "runtime.h").is_file() and any((d / "src").glob("*.c"))


def runtime_dir(gen: str | None = None) -> Path:
    """The runtime sources for the generated C of ``gen`` (a coreai-gen path;
    default: find_coreai_gen()): COREAI_RUNTIME_DIR, else the installed runtime
    of COREAI_PREFIX or of the prefix gen is installed in, else runtime-stubs/
    of the source checkout."""
    env = os.environ.get("COREAI_RUNTIME_DIR")
    if env:
        d = Path(env)
        if not _is_runtime_dir(d):
            raise ToolchainError(f"COREAI_RUNTIME_DIR={env} has no runtime sources (expected "
                                 "include/coreai/runtime.h and src/*.c)")
        return d
    tried = []
    prefix = _prefix_from_env()
    if prefix is not None:
        tried.append(prefix / _INSTALLED_RUNTIME)
    if gen is None:
        try:
            gen = find_coreai_gen()
        except ToolchainError:
            gen = None
    if gen is not None:
        # <prefix>/bin/coreai-gen -> <prefix>/share/coreai-codegen/runtime
        tried.append(Path(gen).resolve().parent.parent / _INSTALLED_RUNTIME)
    src = source_tree()
    if src is not None:
        tried.append(src / "runtime-stubs")
    for d in tried:
        if _is_runtime_dir(d):
            return d
    looked = ", ".join(str(d) for d in tried) or "nowhere (no COREAI_PREFIX, no coreai-gen, no source checkout)"
    raise ToolchainError(f"coreai runtime sources not found (looked in {looked}): {_INSTALL_HINT} "
                         f"(the runtime sources go to PREFIX/{_INSTALLED_RUNTIME}), or set COREAI_RUNTIME_DIR "
                         "to a directory with include/coreai/runtime.h and src/*.c")


def c_compiler() -> list:
    cc = shlex.split(os.environ.get("CC", "cc"))
    if not cc or shutil.which(cc[0]) is None:
        raise ToolchainError(f"C compiler not found: {cc[0] if cc else '(empty CC)'}; install one "
                             "(Debian: apt-get install gcc) or set CC")
    return cc


def cache_root() -> Path:
    env = os.environ.get("COREAI_CACHE_DIR")
    d = Path(env) if env else Path(tempfile.gettempdir()) / f"coreai-py-cache-{os.getuid()}"
    d.mkdir(parents=True, exist_ok=True)
    return d


def c_prefix(model_path) -> str:
    """A C prefix from the model's file name (before the first '.'), like coreai-gen's default."""
    base = Path(model_path).name
    if "." in base[1:]:
        base = base[: base.index(".", 1)]
    s = re.sub(r"[^A-Za-z0-9]", "_", base)
    if not s or s[0].isdigit() or s[0] == "_":
        s = "t_" + s
    if s in _RESERVED:
        s += "_"
    return s


def _run(cmd, what: str) -> subprocess.CompletedProcess:
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        raise ToolchainError(f"{what}: cannot run {cmd[0]}: {e}") from None
    if r.returncode != 0:
        raise ToolchainError(f"{what} failed (exit {r.returncode}): {' '.join(map(str, cmd))}\n"
                             f"{r.stderr.strip() or r.stdout.strip()}")
    return r


def _hash_files(h, paths) -> None:
    for p in sorted(paths):
        h.update(str(p.name).encode() + b"\0")
        h.update(p.read_bytes())
        h.update(b"\0")


def _runtime_files(rt: Path) -> list:
    return list((rt / "src").glob("*.[ch]")) + list((rt / "include").rglob("*.h"))


# The runtime's ISA variants (runtime-stubs/CMakeLists.txt, COREAI_RUNTIME_DISPATCH):
# the sources that include isa_names.h are compiled once per variant with its
# suffix and flags, and isa_dispatch.c picks one at run time from cpuid.
ISA_VARIANT_FLAGS = {
    "baseline": [],
    "avx2": ["-mavx", "-mavx2", "-mfma", "-mf16c", "-mbmi", "-mbmi2", "-mlzcnt", "-mmovbe"],
}
ISA_VARIANT_FLAGS["avx512"] = ISA_VARIANT_FLAGS["avx2"] + ["-mavx512f", "-mavx512cd", "-mavx512bw", "-mavx512dq",
                                                           "-mavx512vl"]

_dispatch_ok_cache: dict = {}


def isa_dispatch_supported(cc: list | None = None) -> bool:
    """Whether the runtime can be built with run-time ISA dispatch, as the
    CMake build does by default: GCC or Clang for x86-64 (its predefined
    macros) accepting the AVX-512 variant's flags."""
    cc = c_compiler() if cc is None else cc
    key = tuple(cc)
    if key not in _dispatch_ok_cache:
        ok = False
        try:
            r = subprocess.run(cc + ["-dM", "-E", "-x", "c", os.devnull], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
            macros = set(line.split()[1] for line in r.stdout.splitlines() if line.startswith("#define "))
            if r.returncode == 0 and {"__GNUC__", "__x86_64__"} <= macros:
                r = subprocess.run(cc + ISA_VARIANT_FLAGS["avx512"] + ["-E", "-x", "c", os.devnull],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                ok = r.returncode == 0
        except OSError:
            ok = False
        _dispatch_ok_cache[key] = ok
    return _dispatch_ok_cache[key]


def _runtime_compiles(rt: Path, cc: list, flags: list) -> list:
    """(source, object name, extra flags) of every runtime object: with ISA
    dispatch, the isa_names.h sources once per variant."""
    sources = sorted((rt / "src").glob("*.c"))
    if not isa_dispatch_supported(cc):
        return [(s, s.stem + ".o", []) for s in sources]
    have = [f"-DCOREAI_ISA_HAVE_{v.upper()}=1" for v in ISA_VARIANT_FLAGS]
    out = []
    for s in sources:
        if '#include "isa_names.h"' in s.read_text(errors="replace"):
            for v, vflags in ISA_VARIANT_FLAGS.items():
                out.append((s, f"{s.stem}_{v}.o", [f"-DCOREAI_ISA_SUFFIX=_{v}"] + vflags))
        else:
            out.append((s, s.stem + ".o", ["-DCOREAI_ISA_DISPATCH=1"] + have))
    return out


def compile_flags(rt: Path) -> list:
    """The flags the runtime and a generated model are compiled with (the
    model adds model_compile_flags)."""
    return ["-std=c11", "-O2", "-fPIC", "-I", str(rt / "include")]


def runtime_objects() -> list:
    """The runtime objects build_library links (compiled into the cache, or
    found there): what a test session can build once before its models."""
    gen = find_coreai_gen()
    rt = runtime_dir(gen)
    return _runtime_objects(rt, c_compiler(), compile_flags(rt))


def _runtime_objects(rt: Path, cc: list, flags: list) -> list:
    """Compile the runtime sources once per (sources, compiler, flags); on
    x86-64 with GCC or Clang with run-time ISA dispatch (baseline, AVX2,
    AVX-512, chosen from cpuid), like the default CMake build."""
    compiles = _runtime_compiles(rt, cc, flags)
    h = hashlib.sha256()
    _hash_files(h, _runtime_files(rt))
    h.update(repr((cc, flags, [(c[1], c[2]) for c in compiles])).encode())
    d = cache_root() / f"runtime-{h.hexdigest()[:24]}"
    objs = [d / name for _, name, _ in compiles]
    if all(o.is_file() for o in objs):
        return objs
    tmp = Path(tempfile.mkdtemp(dir=cache_root(), prefix=".rt-"))
    try:
        # one compiler per CPU: the first build of a session waits for ~70
        # objects (three ISA variants of the kernels); pool.map raises the
        # first failure in source order, whatever finished first, and the
        # compiles not started by then are dropped
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1))
        try:
            list(pool.map(lambda c: _run(cc + flags + c[2] + ["-c", str(c[0]), "-o", str(tmp / c[1])],
                                         f"compiling {c[0].name}"), compiles))
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        try:
            os.replace(tmp, d)
        except OSError:  # another process won the race
            shutil.rmtree(tmp, ignore_errors=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return objs


WEIGHTS_FORMATS = ("c", "incbin", "external")

_incbin_ok_cache: dict = {}


def incbin_supported(cc: list | None = None) -> bool:
    """Whether the C compiler can link weights with the GNU assembler's
    .incbin: GCC or Clang (__GNUC__) for a little-endian ELF target (__ELF__),
    as its predefined macros say."""
    cc = c_compiler() if cc is None else cc
    key = tuple(cc)
    if key not in _incbin_ok_cache:
        try:
            r = subprocess.run(cc + ["-dM", "-E", "-x", "c", os.devnull], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
            macros = set(line.split()[1] for line in r.stdout.splitlines() if line.startswith("#define "))
            little = "#define __BYTE_ORDER__ __ORDER_LITTLE_ENDIAN__" in r.stdout
            _incbin_ok_cache[key] = r.returncode == 0 and {"__GNUC__", "__ELF__"} <= macros and little
        except OSError:
            _incbin_ok_cache[key] = False
    return _incbin_ok_cache[key]


def default_weights_format(cc: list | None = None) -> str:
    """incbin where the compiler supports it (incbin_supported), else c."""
    return "incbin" if incbin_supported(cc) else "c"


def model_sources(out_dir, prefix: str) -> list:
    """The C sources coreai-gen wrote for prefix in out_dir: NAME.c and the
    weights sources (NAME_weights.c, then NAME_weights_1.c, ...)."""
    out_dir = Path(out_dir)
    chunks = []
    for p in out_dir.glob(f"{glob.escape(prefix)}_weights_*.c"):
        k = p.stem[len(prefix) + len("_weights_"):]
        if k.isdigit():
            chunks.append((int(k), p))
    weights = out_dir / f"{prefix}_weights.c"
    return [out_dir / f"{prefix}.c"] + ([weights] if weights.is_file() else []) + [p for _, p in sorted(chunks)]


def model_compile_flags(out_dir) -> list:
    """What compiling the generated sources needs besides the runtime's
    include directory: the assembler finds the weights blob in out_dir."""
    return [f"-Wa,-I,{Path(out_dir)}"]


def build_library(model_path, prefix: str, composite_kernels: bool = True, weights_format: str | None = None,
                  int8_activations: bool = False, winograd_weights: bool = True,
                  conv_panels: bool = True) -> Path:
    """coreai-gen generate + cc -shared; returns the path of the cached .so.
    weights_format: "incbin", "c" or "external" (the blob NAME_weights.bin
    is then left beside the library); None: default_weights_format().
    int8_activations: generate with --int8-activations
    (docs/compression.md). winograd_weights False: generate with
    --no-winograd-weights (Winograd layers transform their weight on every
    call instead of reading it transformed from the weights). conv_panels
    False: generate with --no-conv-panels (small-map convolutions read their
    weight as stored instead of packed)."""
    model_path = Path(model_path)
    gen = find_coreai_gen()
    rt = runtime_dir(gen)
    cc = c_compiler()
    if weights_format is None:
        weights_format = default_weights_format(cc)
    if weights_format not in WEIGHTS_FORMATS:
        raise ValueError(f"weights_format {weights_format!r} is not one of {', '.join(WEIGHTS_FORMATS)}")
    if weights_format == "incbin" and not incbin_supported(cc):
        raise ToolchainError(f"weights_format 'incbin' needs GCC or Clang for a little-endian ELF target; "
                             f"{' '.join(cc)} is not (use weights_format='c')")
    flags = compile_flags(rt)
    h = hashlib.sha256()
    # the model text records the weights' SHA-256, so it pins the weights too
    h.update(model_path.read_bytes())
    h.update(Path(gen).read_bytes())
    _hash_files(h, _runtime_files(rt))
    h.update(repr((cc, flags, prefix, composite_kernels, weights_format, int8_activations,
                   winograd_weights, conv_panels)).encode())
    key = h.hexdigest()[:32]
    d = cache_root() / f"model-{key}"
    lib = d / f"lib{prefix}.so"
    if lib.is_file():
        return lib
    objs = _runtime_objects(rt, cc, flags)
    tmp = Path(tempfile.mkdtemp(dir=cache_root(), prefix=".model-"))
    try:
        cmd = [gen, "generate", str(model_path), "-o", str(tmp), "--prefix", prefix, "--weights-format", weights_format]
        if not composite_kernels:
            cmd.append("--no-composite-kernels")
        if int8_activations:
            cmd.append("--int8-activations")
        if not winograd_weights:
            cmd.append("--no-winograd-weights")
        if not conv_panels:
            cmd.append("--no-conv-panels")
        _run(cmd, "coreai-gen generate")
        _run(cc + flags + model_compile_flags(tmp) + ["-shared"] + [str(p) for p in model_sources(tmp, prefix)]
             + [str(o) for o in objs] + ["-o", str(tmp / lib.name), "-lm"], "compiling the generated model")
        try:
            os.replace(tmp, d)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    if not lib.is_file():
        raise ToolchainError(f"building {model_path} produced no library at {lib}")
    return lib


def coreai_gen(*args: str) -> subprocess.CompletedProcess:
    """Run coreai-gen with args; returns the completed process (never raises on exit status)."""
    return subprocess.run([find_coreai_gen(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
