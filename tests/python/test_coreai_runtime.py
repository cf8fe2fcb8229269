"""End to end: programs built with the builder, saved as assets, generated
with coreai-gen, compiled, loaded with ctypes and run, against NumPy float64
oracles. Only ops the C back end has supported from the start are used here
(the extended op table is cross-checked in test_new_ops_match_reference)."""
import asyncio
import tempfile
from pathlib import Path

import numpy as np
import pytest

from coreai import AIAsset, AIProgram
from coreai import _toolchain
from coreai._compiler import ir
from coreai._compiler.dialects import coreai as cai
from coreai.runtime import NDArray, RuntimeCallError

pytestmark = pytest.mark.usefixtures("coreai_gen", "c_compiler")

EPS = 1e-5
TOL = 1e-5


def T(shape, dtype=ir.f32):
    return ir.TensorType(shape, dtype)


# ---------------------------------------------------------------- the program

class Weights:
    def __init__(self, seed=0, d_in=16, d_hidden=32, d_out=10):
        rng = np.random.default_rng(seed)
        f = lambda *s: (rng.standard_normal(s) / np.sqrt(s[-1])).astype(np.float32)  # noqa: E731
        self.scale = (1 + 0.1 * rng.standard_normal(d_in)).astype(np.float32)
        self.w1, self.b1 = f(d_hidden, d_in), f(d_hidden)
        self.w2, self.b2 = f(d_out, d_hidden), f(d_out)
        self.dims = (d_in, d_hidden, d_out)


def rms_norm_graph(shape, eps=EPS):
    g = ir.Graph("mlp.norm.rms_norm_1a2b3c4d", private=True, noinline=True,
                 composite=ir.CompositeDecl("rms_norm", ["input", "scale"], ["output"],
                                            {"axes": -1, "eps": eps, "version": 1}))
    x = g.add_argument(T(shape), "input")
    s = g.add_argument(T(shape[-1:]), "scale")
    with ir.InsertionPoint(g):
        inv = cai.rsqrt(cai.add(cai.reduce_mean(cai.mul(x, x), [-1], keep_dims=True), eps))
        y = cai.mul(cai.mul(x, inv), s)
    g.set_outputs([y])
    return g


def build_mlp(w: Weights, batch=4):
    """main(x) = softmax(fc2(relu(fc1(rms_norm(x))))), plus a stateful
    entrypoint `accumulate` that keeps a running sum and a step counter."""
    d_in, d_hidden, d_out = w.dims
    m = ir.Module()
    norm = m.add_graph(rms_norm_graph((batch, d_in)))
    main = m.add_graph(ir.Graph("main"))
    x = main.add_argument(T((batch, d_in)), "x")
    with ir.InsertionPoint(main):
        (h,) = cai.invoke(norm, [x, cai.constant(w.scale)], loc="norm")
        h = cai.relu(cai.linear(h, cai.constant(w.w1), cai.constant(w.b1), loc="fc1"))
        logits = cai.matmul(h, cai.constant(w.w2.T.copy()))          # fc2 as matmul + add
        logits = cai.add(logits, cai.constant(w.b2))
        probs = cai.softmax(logits, -1)
    main.set_outputs([probs, logits])
    m.add_entrypoint("main", main, inputs=["x"], outputs=["probs", "logits"])

    acc = m.add_graph(ir.Graph("accumulate_graph"))
    total = acc.add_argument(T((batch, d_out)), "total")
    steps = acc.add_argument(T(()), "steps")
    xin = acc.add_argument(T((batch, d_in)), "x")
    with ir.InsertionPoint(acc):
        probs, _ = cai.invoke(main, [xin])
        new_total = cai.add(total, probs)
        new_steps = cai.add(steps, 1.0)
        mean = cai.div(new_total, new_steps)
        flat = cai.reshape(cai.transpose(mean, [1, 0]), (-1,))
    acc.set_outputs([new_total, new_steps, mean, flat])
    m.add_entrypoint("accumulate", acc, states=["total", "steps"], inputs=["x"], outputs=["mean", "flat"],
                     initial_states={"steps": np.float32(0.0)})
    return AIProgram(m)


def oracle(w: Weights, x):
    X = x.astype(np.float64)
    h = X / np.sqrt((X * X).mean(-1, keepdims=True) + EPS) * w.scale
    h = np.maximum(h @ w.w1.T.astype(np.float64) + w.b1, 0)
    logits = h @ w.w2.T.astype(np.float64) + w.b2
    e = np.exp(logits - logits.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True), logits


@pytest.fixture(scope="module")
def mlp_asset(tmp_path_factory):
    w = Weights()
    p = build_mlp(w)
    return w, p, p.save_asset(tmp_path_factory.mktemp("mlp") / "mlp.aimodel")


# ---------------------------------------------------------------- tests

@pytest.mark.parametrize("composite_kernels", [True, False])
def test_mlp_matches_float64_oracle(mlp_asset, run_async, composite_kernels):
    w, p, asset = mlp_asset
    x = np.random.default_rng(1).standard_normal((4, 16)).astype(np.float32) * 2

    async def go():
        async with asset.executable(composite_kernels=composite_kernels) as m:
            f = m.load_function("main")
            return await f({"x": NDArray(x)}), m

    out, m = run_async(go())
    probs, logits = oracle(w, x)
    assert list(out) == ["probs", "logits"]
    np.testing.assert_allclose(out["probs"].numpy(), probs, atol=TOL, rtol=0)
    np.testing.assert_allclose(out["logits"].numpy(), logits, atol=TOL, rtol=TOL)
    assert m.composite_ops == ["rms_norm"] and m.entrypoints == ["main", "accumulate"]
    assert m.workspace_alignment == 64 and m.weights_size > 0 and m.generator_version


def test_external_weights(mlp_asset, run_async, tmp_path):
    """weights_format="external": the blob is read, checked and passed to
    every call; the outputs are the same bits as with linked weights (the
    oracle bounds both), and a damaged, short or missing blob is refused."""
    w, p, asset = mlp_asset
    x = np.random.default_rng(1).standard_normal((4, 16)).astype(np.float32) * 2

    async def go(**kw):
        async with asset.executable(**kw) as m:
            return await m.load_function("main")({"x": NDArray(x)}), m

    linked, _ = run_async(go())
    ext, m = run_async(go(weights_format="external"))
    assert m.external_weights and m.weights_size > 0
    np.testing.assert_allclose(ext["probs"].numpy(), oracle(w, x)[0], atol=TOL, rtol=0)
    for k in ("probs", "logits"):
        assert ext[k].numpy().tobytes() == linked[k].numpy().tobytes()

    blob = Path(m.library_path).parent / "mlp_weights.bin"
    data = bytearray(blob.read_bytes())
    data[len(data) // 2] ^= 0x01
    (tmp_path / "flipped.bin").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="SHA-256 differs"):
        run_async(go(weights_format="external", weights=tmp_path / "flipped.bin"))
    (tmp_path / "short.bin").write_bytes(blob.read_bytes()[:-1])
    with pytest.raises(ValueError, match=f"{len(data) - 1} bytes, the model's are {len(data)}"):
        run_async(go(weights_format="external", weights=tmp_path / "short.bin"))
    with pytest.raises(ValueError, match="needs weights_format='external'"):
        asset.executable(weights=blob)


def test_stateful_entrypoint(mlp_asset, run_async):
    w, p, asset = mlp_asset
    rng = np.random.default_rng(2)
    xs = [rng.standard_normal((4, 16)).astype(np.float32) for _ in range(3)]

    async def go():
        async with asset.executable() as m:
            f = m.load_function("accumulate")
            assert [s.name for s in f.states] == ["total", "steps"]
            assert [s.name for s in f.inputs] == ["x"] and [s.name for s in f.outputs] == ["mean", "flat"]
            assert f.state["steps"].numpy() == 0.0
            outs = [await f({"x": NDArray(x)}) for x in xs]
            assert f.state["steps"].numpy() == 3.0
            after3 = f.state["total"].numpy()
            f.reset_state()
            assert f.state["steps"].numpy() == 0.0 and not f.state["total"].numpy().any()
            again = await f({"x": NDArray(xs[0])})
            # a state passed in the call replaces the current value first
            forced = await f({"x": NDArray(xs[0]), "steps": NDArray(np.float32(9.0)),
                              "total": NDArray(np.zeros((4, 10), np.float32))})
            return outs, after3, again, forced

    outs, after3, again, forced = run_async(go())
    running = np.zeros((4, 10))
    for i, (x, out) in enumerate(zip(xs, outs, strict=True)):
        running += oracle(w, x)[0]
        assert list(out) == ["mean", "flat", "total", "steps"]      # outputs first, then updated states
        np.testing.assert_allclose(out["mean"].numpy(), running / (i + 1), atol=TOL)
        np.testing.assert_allclose(out["flat"].numpy(), (running / (i + 1)).T.reshape(-1), atol=TOL)
        np.testing.assert_allclose(out["total"].numpy(), running, atol=TOL)
        assert out["steps"].numpy() == i + 1
    np.testing.assert_allclose(after3, running, atol=TOL)
    np.testing.assert_allclose(again["mean"].numpy(), oracle(w, xs[0])[0], atol=TOL)
    assert forced["steps"].numpy() == 10.0
    np.testing.assert_allclose(forced["mean"].numpy(), oracle(w, xs[0])[0] / 10, atol=TOL)


def test_seed_workflow(run_async):
    """The composite-ops guide's verification flow, verbatim in shape."""
    w = Weights(seed=3)
    coreai_program = build_mlp(w)
    coreai_program.optimize()
    x = np.random.default_rng(4).standard_normal((4, 16)).astype(np.float32)

    async def run_and_compare():
        with tempfile.TemporaryDirectory() as tmpdir:
            asset = coreai_program.save_asset(Path(tmpdir) / "rms_norm_example.aimodel")
            async with asset.executable() as ai_model:
                function = ai_model.load_function("main")
                coreai_out = await function({"x": NDArray(x)})
                return list(coreai_out.values())[0].numpy()

    coreai_np = run_async(run_and_compare())
    assert np.abs(oracle(w, x)[0] - coreai_np).max() < TOL


def test_torch_tensors_in_and_out(mlp_asset):
    torch = pytest.importorskip("torch")
    w, p, asset = mlp_asset
    x = torch.randn(4, 16, generator=torch.Generator().manual_seed(0))
    with asset.executable() as m:
        out = m.load_function("main").call({"x": NDArray(x)})
    t = out["probs"].torch()
    assert isinstance(t, torch.Tensor) and t.dtype == torch.float32
    np.testing.assert_allclose(t.numpy(), oracle(w, x.numpy())[0], atol=TOL)


def test_optimized_program_gives_the_same_results(tmp_path):
    w = Weights(seed=5)
    p = build_mlp(w)
    x = np.random.default_rng(6).standard_normal((4, 16)).astype(np.float32)
    with p.save_asset(tmp_path / "a").executable() as m:
        a = m.load_function("main").call({"x": NDArray(x)})
    p.optimize()
    with p.save_asset(tmp_path / "b").executable() as m:
        b = m.load_function("main").call({"x": NDArray(x)})
    np.testing.assert_array_equal(a["probs"].numpy(), b["probs"].numpy())


def test_folded_constants_match_c(tmp_path):
    """A constant subgraph folded in Python equals the same subgraph run in C."""
    rng = np.random.default_rng(8)
    a = rng.standard_normal((3, 5)).astype(np.float32)
    b = rng.standard_normal((5, 4)).astype(np.float32)

    def build():
        m = ir.Module()
        g = m.add_graph(ir.Graph("main"))
        x = g.add_argument(T((3, 4)))
        with ir.InsertionPoint(g):
            c = cai.softmax(cai.matmul(cai.exp(cai.neg(cai.constant(a))), cai.constant(b)), -1)
            c = cai.div(c, cai.sqrt(cai.reduce_sum(cai.mul(c, c), [1], keep_dims=True)))
            y = cai.add(x, cai.transpose(cai.reshape(c, (4, 3)), [1, 0]))
        g.set_outputs([y])
        m.add_entrypoint("main", g, inputs=["x"], outputs=["y"])
        return AIProgram(m)

    x = np.zeros((3, 4), np.float32)
    with build().save_asset(tmp_path / "plain").executable() as m:
        c_run = m.load_function("main").call({"x": NDArray(x)})["y"].numpy()
    folded = build().optimize()
    assert [op.kind for op in folded.module.graphs[0].operations] == ["coreai.constant", "coreai.add"]
    with folded.save_asset(tmp_path / "folded").executable() as m:
        f_run = m.load_function("main").call({"x": NDArray(x)})["y"].numpy()
    np.testing.assert_allclose(f_run, c_run, rtol=1e-6, atol=1e-6)


def test_dtypes_through_the_runtime(tmp_path):
    """Inputs/outputs of every dtype, and constants of every dtype (inline and external)."""
    m = ir.Module()
    g = m.add_graph(ir.Graph("main"))
    xi = g.add_argument(T((3,), ir.i64))
    xb = g.add_argument(T((2, 2), ir.bool_))
    xh = g.add_argument(T((4,), ir.f16))
    with ir.InsertionPoint(g):
        f = cai.cast(xi, ir.f32)
        big_h = cai.cast(cai.constant(np.linspace(-4, 4, 40).astype(np.float16)), ir.f32)
        bf = cai.cast(cai.constant(np.linspace(-4, 4, 20), dtype=ir.bf16), ir.f32)
        i32 = cai.cast(cai.constant(np.arange(-8, 8, dtype=np.int32)), ir.f32)
        outs = [cai.cast(f, ir.i32), cai.transpose(xb, [1, 0]), cai.cast(cai.cast(xh, ir.f32), ir.bf16),
                cai.cast(cai.reshape(xb, (4,)), ir.f32), big_h, bf, i32,
                cai.cast(cai.constant(np.array([True, False, True])), ir.i64)]
    g.set_outputs(outs)
    m.add_entrypoint("main", g, inputs=["i", "b", "h"], outputs=[f"o{k}" for k in range(len(outs))])
    xb_val = np.array([[True, False], [False, False]])
    h_val = np.array([1.5, -2.0, 65504.0, 1e-3], np.float16)
    inputs = {"i": NDArray(np.array([3, -1, 2 ** 40])), "b": NDArray(xb_val), "h": NDArray(h_val)}
    p = AIProgram(m)
    with p.save_asset(tmp_path / "dt").executable() as ex:
        fn = ex.load_function("main")
        assert [s.dtype for s in fn.inputs] == [ir.i64, ir.bool_, ir.f16]
        out = fn.call(inputs)
    ref = p.interpret("main", inputs)
    for k, v in out.items():
        assert v.numpy_storage().dtype == ref[k].dtype and v.numpy_storage().tobytes() == ref[k].tobytes(), k
    assert out["o0"].dtype is ir.i32 and out["o0"].numpy().tolist() == [3, -1, 2 ** 31 - 1]  # saturates
    assert out["o1"].numpy().tolist() == xb_val.T.tolist()
    assert out["o2"].dtype is ir.bf16
    # f16 -> f32 -> bf16 rounds to nearest even: 65504 -> 65536, f16(1e-3) = 0.0010004 -> 0.00099945
    np.testing.assert_array_equal(out["o2"].numpy(), np.array([1.5, -2.0, 65536.0, 0.00099945068359375],
                                                              np.float32))
    assert out["o3"].numpy().tolist() == [1.0, 0.0, 0.0, 0.0]
    np.testing.assert_array_equal(out["o4"].numpy(), np.linspace(-4, 4, 40).astype(np.float16).astype(np.float32))
    assert out["o6"].numpy().tolist() == list(range(-8, 8))
    assert out["o7"].numpy().tolist() == [1, 0, 1]


def test_call_errors(mlp_asset, run_async):
    w, p, asset = mlp_asset
    x = np.zeros((4, 16), np.float32)
    with asset.executable() as m:
        with pytest.raises(KeyError, match="no entrypoint 'nope'.*main, accumulate"):
            m.load_function("nope")
        f = m.load_function("main")
        assert m.load_function("main") is f
        with pytest.raises(ValueError, match="missing input.*'x'.*f32\\[4, 16\\]"):
            f.call({})
        with pytest.raises(ValueError, match="no input or state named 'y'"):
            f.call({"x": NDArray(x), "y": NDArray(x)})
        with pytest.raises(ValueError, match="input 'x' of 'main' has dtype float64, but the model expects "
                                             r"f32\[4, 16\]"):
            f.call({"x": NDArray(x.astype(np.float64))})
        with pytest.raises(ValueError, match=r"has shape \[4, 15\], but the model expects f32\[4, 16\]"):
            f.call({"x": NDArray(x[:, :15])})
        with pytest.raises(TypeError, match="must be an NDArray"):
            f.call({"x": [[0.0] * 16] * 4})
        with pytest.raises(TypeError, match="dict"):
            f.call([NDArray(x)])
        acc = m.load_function("accumulate")
        with pytest.raises(ValueError, match="state 'steps'.*shape"):
            acc.call({"x": NDArray(x), "steps": NDArray(np.zeros(2, np.float32))})
        with pytest.raises(KeyError, match="no state 'nope'"):
            acc.state["nope"]
        f.call({"x": NDArray(x)})          # a plain ndarray works too via NDArray; errors left no damage
    with pytest.raises(RuntimeError, match="closed"):
        f.call({"x": NDArray(x)})


def test_concurrent_calls_are_serialised(mlp_asset, run_async):
    w, p, asset = mlp_asset
    rng = np.random.default_rng(9)
    xs = [rng.standard_normal((4, 16)).astype(np.float32) for _ in range(8)]

    async def go():
        async with asset.executable() as m:
            f = m.load_function("main")
            return await asyncio.gather(*[f({"x": NDArray(x)}) for x in xs])

    for x, out in zip(xs, run_async(go()), strict=True):
        np.testing.assert_allclose(out["probs"].numpy(), oracle(w, x)[0], atol=TOL)


def test_library_cache(mlp_asset):
    w, p, asset = mlp_asset
    with asset.executable() as a:
        pa = a.library_path
    with AIAsset(asset.model_path).executable() as b:
        assert b.library_path == pa
        # an asset opened from the path alone starts states at zero
        assert b.load_function("accumulate").state["steps"].numpy() == 0.0


def test_executable_runtime_dispatches(mlp_asset):
    """asset.executable() links the runtime as the default CMake build does:
    on x86-64 with GCC / Clang, every ISA variant with the run-time choice
    (coreai_runtime_config lists the variants built and picks one the CPU
    runs); elsewhere the compiler's own ISA."""
    import ctypes

    w, p, asset = mlp_asset
    with asset.executable() as m:
        lib = ctypes.CDLL(str(m.library_path))
        lib.coreai_runtime_config.restype = ctypes.c_char_p
        config = lib.coreai_runtime_config().decode()
    if _toolchain.isa_dispatch_supported():
        assert "built: baseline avx2 avx512" in config.replace("(no cpu)", ""), config
        assert config.startswith(("isa avx512 ", "isa avx2 ", "isa baseline ")), config
    else:
        assert "built: " in config, config


def test_toolchain_errors(tmp_path, monkeypatch):
    p = build_mlp(Weights(seed=11))
    asset = p.save_asset(tmp_path / "m")
    monkeypatch.setenv("COREAI_GEN", str(tmp_path / "missing-coreai-gen"))
    with pytest.raises(_toolchain.ToolchainError, match="COREAI_GEN=.* is not an executable"):
        with asset.executable():
            pass
    monkeypatch.setenv("COREAI_GEN", "/bin/false")
    with pytest.raises(_toolchain.ToolchainError, match="coreai-gen generate failed"):
        with asset.executable():
            pass


def test_c_prefix():
    assert _toolchain.c_prefix("a/rms_norm_example.aimodel.xml") == "rms_norm_example"
    assert _toolchain.c_prefix("9lives.xml") == "t_9lives"
    assert _toolchain.c_prefix("my-model.v2.xml") == "my_model"
    assert _toolchain.c_prefix("int.xml") == "int_"


def test_ndarray():
    a = NDArray(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert a.dtype is ir.i32 and a.shape == (2, 3) and np.asarray(a).sum() == 15
    b = NDArray([1.0, 2.5], dtype=ir.bf16)
    assert b.dtype is ir.bf16 and b.numpy_storage().tolist() == [0x3F80, 0x4020]
    assert b.numpy().tolist() == [1.0, 2.5] and b.numpy().dtype == np.float32
    assert NDArray(np.zeros(2)).dtype is None                  # float64: no Core AI dtype
    assert NDArray(np.zeros(2), dtype="f32").dtype is ir.f32
    assert "f32[2]" in repr(NDArray(np.zeros(2, np.float32)))
    torch = pytest.importorskip("torch")
    t = NDArray(torch.tensor([1.0, 2.0], dtype=torch.bfloat16))
    assert t.dtype is ir.bf16 and t.numpy().tolist() == [1.0, 2.0]
    assert t.torch().dtype == torch.bfloat16


def test_new_ops_match_reference(tmp_path, extended_ops):
    """The extended op table run in C against the NumPy reference semantics
    (AIProgram.interpret). Skipped while coreai-gen cannot generate them."""
    from test_coreai_serialize import build_new_ops
    import coreai._compiler.evaluate as ev

    p = build_new_ops()
    asset = p.save_asset(tmp_path / "newops")
    x = np.random.default_rng(12).standard_normal((1, 3, 8, 8)).astype(np.float32)
    with asset.executable() as m:
        out = m.load_function("main").call({"x": NDArray(x)})
    orig = ev.evaluate_op

    def with_kernel(op, ins):   # the test's user kernel: y = 2 * x
        if op.kind == "coreai.elementwise_kernel":
            return [(2 * ins[0]).astype(np.float32)]
        return orig(op, ins)

    ev.evaluate_op = with_kernel
    try:
        ref = p.interpret("main", {"x": x})
    finally:
        ev.evaluate_op = orig
    for name, v in out.items():
        got = v.numpy_storage()
        want = ref[name]
        assert got.dtype == want.dtype and got.shape == want.shape, name
        if got.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=name)
        else:
            np.testing.assert_array_equal(got, want, err_msg=name)


def test_failed_call_raises_and_keeps_state(tmp_path, extended_ops):
    """A gather index out of range makes the C call fail (COREAI_STATUS_INVALID_ARGUMENT):
    RuntimeCallError, and the state keeps its value from before the call."""
    m = ir.Module()
    g = m.add_graph(ir.Graph("main"))
    s = g.add_argument(T((3,)))
    idx = g.add_argument(T((2,), ir.i64))
    with ir.InsertionPoint(g):
        s2 = cai.add(s, 1.0)
        y = cai.gather(s, idx, 0)
    g.set_outputs([s2, y])
    m.add_entrypoint("main", g, states=["s"], inputs=["idx"], outputs=["y"])
    with AIProgram(m).save_asset(tmp_path / "gather").executable() as ex:
        f = ex.load_function("main")
        out = f.call({"idx": NDArray(np.array([0, -1]))})
        assert out["y"].numpy().tolist() == [0.0, 0.0] and out["s"].numpy().tolist() == [1.0] * 3
        with pytest.raises(RuntimeCallError, match="status 1 \\(invalid argument\\)") as e:
            f.call({"idx": NDArray(np.array([0, 3]))})
        assert e.value.status == 1
        assert f.state["s"].numpy().tolist() == [1.0] * 3
