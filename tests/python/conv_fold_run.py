"""What the conv-folding tests (test_conv_bn_fold.py, test_conv_clamp_fold.py)
share: a model exported and converted, run through the generated C
(run_program) next to eager PyTorch, and the C that `coreai-gen generate`
writes for it."""
import subprocess

import torch

from coreai_torch import TorchConverter, get_decomp_table
from coreai_torch.testing import run_program


def generate(model, x, tmp_path, coreai_gen, *flags):
    """(got, want, C source, program text): got from the generated C, want
    from eager PyTorch; flags go to `coreai-gen generate` (with --stats)."""
    with torch.no_grad():
        want = model(x).numpy()
    ep = torch.export.export(model, (x,)).run_decompositions(get_decomp_table())
    program = TorchConverter().add_exported_program(ep).to_coreai()
    program.optimize()
    got = next(iter(run_program(program, [{"x": x}], workdir=str(tmp_path))[0].values()))
    path = program.save(tmp_path / "m")
    r = subprocess.run([coreai_gen, "generate", str(path), "-o", str(tmp_path / "out"), "--stats", *flags],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return got, want, (tmp_path / "out" / "m.c").read_text(), str(program)
