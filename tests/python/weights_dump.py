"""The bytes of a generated model's weights as a program (or the external
blob) reads them, for tests that check a form of the weights byte by byte
against an oracle of their own."""
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SIZES = {"uint8_t": 1, "int8_t": 1, "float": 4}


def generate(coreai_gen, program, out, fmt, *flags):
    """coreai-gen generate of program into out (prefix m, weights format
    fmt, --stats): NAME.c's text and the stats' weight and workspace
    bytes."""
    path = program.save(out.parent / f"{out.name}_model")
    r = subprocess.run([coreai_gen, "generate", str(path), "-o", str(out), "--prefix", "m", "--weights-format", fmt,
                        "--stats", *flags], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    stats = dict(ln.split()[:2] for ln in r.stdout.splitlines() if ln.split()[0] in ("weight_bytes", "workspace_bytes"))
    return (out / "m.c").read_text(), {k: int(v) for k, v in stats.items()}


def linked_arrays(src):
    """The arrays NAME.c declares (linked weights): symbol -> (C type, count)."""
    return {m[2]: (m[1], int(m[3])) for m in re.finditer(r"extern const (\w+) (\w+)\[(\d+)\];", src)}


def linked_bytes(c_compiler, out, arrays, fmt):
    """Every array's bytes as a program linked with the generated weights
    reads them (the compiler's initializers, or the assembler's .incbin)."""
    decls = "".join(f"extern const {t} {n}[{c}];\n" for n, (t, c) in arrays.items())
    dumps = "".join(f'    dump("{n}", {n}, sizeof {n});\n' for n in arrays)
    (out / "dump.c").write_text(f"""#include <stdint.h>
#include <stdio.h>
{decls}
static void dump(const char *name, const void *p, size_t n)
{{
    printf("%s ", name);
    for (size_t i = 0; i < n; i++)
        printf("%02x", ((const unsigned char *)p)[i]);
    printf("\\n");
}}
int main(void)
{{
{dumps}    return 0;
}}
""")
    exe = out / "dump"
    flags = ["-Wa,-I," + str(out)] if fmt == "incbin" else []
    r = subprocess.run([c_compiler, "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", str(REPO / "runtime-stubs" / "include"),
                        *flags, str(out / "m_weights.c"), str(out / "dump.c"), "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
    return {ln.split()[0]: bytes.fromhex(ln.split()[1]) for ln in r.stdout.splitlines()}


def external_bytes(out, src):
    """Every constant's bytes in the external blob, at the offset NAME.c gives."""
    blob = (out / "m_weights.bin").read_bytes()
    found = {m[1]: (m[2], int(m[3])) for m in re.finditer(r"#define (m_\w+) \(\(const (\w+) \*\)\(coreai_w \+ (\d+)\)\)", src)}
    offsets = sorted(off for _, off in found.values()) + [len(blob)]
    # each one's bytes run to the next one's offset at most (its padding after)
    return {n: blob[off:offsets[offsets.index(off) + 1]] for n, (_, off) in found.items()}
