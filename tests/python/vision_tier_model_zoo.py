"""The model zoo's optional vision tier (torchvision / timm), run by a
second interpreter: torchvision needs torch 2.14.1 + torchvision 0.29.1
(a separate virtual environment, .venv-vision by default; see
docs/model-zoo.md; COREAI_ZOO_VISION_PYTHON overrides its path).  Not
collected by a plain ``pytest tests/python`` (the file name does not start
with ``test_``): ctest runs it as python.model_zoo_vision when configured
with -DCOREAI_ZOO_VISION=ON; a few minutes on 2 cores (the weights are
linked as binary blobs, --weights-format incbin).

Same rule as the Hugging Face tier: max|out - ref| <= 1e-5 * max(1, max|ref|).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PY = Path(os.environ.get("COREAI_ZOO_VISION_PYTHON", REPO / ".venv-vision" / "bin" / "python"))

MODELS = ["resnet18", "resnet18 int4", "mobilenet_v3_small", "efficientnet_b0", "convnext_tiny", "vit (torchvision)",
          "vit_tiny (timm)"]


def setup_module(module):
    assert PY.exists(), (f"the vision tier needs {PY}: python3 -m venv .venv-vision && .venv-vision/bin/pip install "
                         "torch==2.14.1 torchvision==0.29.1 timm numpy")


#: Models that fail today, with the text their error must contain (none:
#: convnext_tiny's 28.6 M weights, refused as C initializer text, build as a
#: linked binary blob, zoo_vision.WEIGHTS_FORMAT).
EXPECTED_ERRORS = {}


@pytest.mark.parametrize("model_id", MODELS)
def test_model_zoo_vision(model_id, coreai_gen, c_compiler):
    env = dict(os.environ, COREAI_GEN=coreai_gen, PYTHONWARNINGS="ignore")
    r = subprocess.run([str(PY), str(HERE / "zoo_vision.py"), "--json", model_id], capture_output=True, text=True,
                       env=env, timeout=900)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    assert lines, f"no result from {PY}:\n{r.stderr[-3000:]}"
    res = json.loads(lines[-1])
    if model_id in EXPECTED_ERRORS:
        assert EXPECTED_ERRORS[model_id] in res["error"], res["error"][-2000:]
        return
    assert not res["error"], res["error"]
    assert res["max_err"] <= res["tol"], res
