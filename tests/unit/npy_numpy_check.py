#!/usr/bin/python3
"""Cross-check the runner's .npy reader/writer against numpy.

usage: npy_numpy_check.py TOOL WORKDIR

TOOL is npy_roundtrip_tool (reads IN.npy, writes OUT.npy). For each case numpy
writes a file, TOOL round-trips it, and numpy must load TOOL's file identically
(dtype, shape, bytes); the file must also be byte-for-byte what np.save writes.
Files numpy writes that the runner must refuse (big-endian, Fortran order,
unsupported dtypes) must make TOOL fail with a message.
"""
import os
import shutil
import subprocess
import sys
import warnings

try:
    import numpy as np
except ImportError:
    sys.exit("npy_numpy_check.py: numpy is required (apt-get install python3-numpy)")

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL: " + msg)


def run_tool(tool, src, dst):
    return subprocess.run([tool, src, dst], capture_output=True, text=True)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    tool, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rng = np.random.default_rng(1234)

    names = {"<f4": "f32", "<f2": "f16", "<u2": "bf16", "<i8": "i64", "<i4": "i32", "|b1": "bool", "|i1": "i8",
             "|u1": "u8"}
    shapes = [(), (1,), (7,), (0,), (2, 3), (0, 3), (3, 0, 2), (2, 1, 5), (1, 2, 3, 4),
              (1, 2, 1, 3, 1, 2, 1, 2), (1000,), (12345678901, 0)]

    def make(dtype, shape):
        if dtype == np.bool_:
            return rng.integers(0, 2, size=shape).astype(np.bool_)
        if dtype in (np.int64, np.int32, np.uint16, np.int8, np.uint8):
            info = np.iinfo(dtype)
            return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
        a = rng.standard_normal(size=shape).astype(dtype)
        if a.size >= 4:  # special values survive bit-exactly
            flat = a.reshape(-1)
            flat[:4] = [np.inf, -np.inf, -0.0, np.nan]
        return a

    n = 0
    for dtype in (np.float32, np.float16, np.uint16, np.int64, np.int32, np.bool_, np.int8, np.uint8):
        for shape in shapes:
            for version in (None, (1, 0), (2, 0), (3, 0)):
                if version is not None and shape not in ((2, 3), ()):
                    continue
                arr = make(dtype, shape)
                src = os.path.join(work, "in_%d.npy" % n)
                dst = os.path.join(work, "out_%d.npy" % n)
                n += 1
                label = "%s%s v%s" % (np.dtype(dtype).str, shape, version)
                if version is None:
                    np.save(src, arr)
                else:
                    with open(src, "wb") as f, warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        np.lib.format.write_array(f, arr, version=version)
                r = run_tool(tool, src, dst)
                if r.returncode != 0:
                    check(False, "%s: tool failed: %s" % (label, r.stderr.strip()))
                    continue
                want = "%s %d%s" % (names[np.dtype(dtype).str], len(shape),
                                    "".join(" %d" % d for d in shape))
                check(r.stdout.strip() == want,
                      "%s: tool saw %r, expected %r" % (label, r.stdout.strip(), want))
                back = np.load(dst)
                check(back.dtype == arr.dtype, "%s: dtype %s != %s" % (label, back.dtype, arr.dtype))
                check(back.shape == arr.shape, "%s: shape %s != %s" % (label, back.shape, arr.shape))
                check(back.tobytes() == arr.tobytes(), "%s: data differs" % label)
                with open(dst, "rb") as f:
                    ours = f.read()
                ref = os.path.join(work, "ref.npy")
                np.save(ref, arr)
                with open(ref, "rb") as f:
                    theirs = f.read()
                check(ours == theirs, "%s: file differs from np.save's (%r vs %r)"
                      % (label, ours[:128], theirs[:128]))

    # Non-contiguous arrays are saved C-ordered by numpy and must read as such.
    src = os.path.join(work, "t.npy")
    dst = os.path.join(work, "t_out.npy")
    arr = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]
    np.save(src, arr)
    r = run_tool(tool, src, dst)
    check(r.returncode == 0 and np.array_equal(np.load(dst), arr), "strided array round trip")

    rejected = [
        ("big-endian f4", np.arange(4, dtype=">f4"), "big-endian"),
        ("big-endian i8", np.arange(4, dtype=">i8"), "big-endian"),
        ("float64", np.arange(4, dtype=np.float64), "unsupported dtype '<f8'"),
        ("uint32", np.arange(4, dtype=np.uint32), "unsupported dtype '<u4'"),
        ("int16", np.arange(4, dtype=np.int16), "unsupported dtype '<i2'"),
        ("complex64", np.arange(4, dtype=np.complex64), "unsupported dtype '<c8'"),
        ("unicode", np.array(["ab", "c"]), "unsupported dtype '<U2'"),
        ("structured", np.zeros(3, dtype=[("a", "<f4"), ("b", "<i4")]), "structured"),
        ("fortran order", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)),
         "fortran_order=True"),
        ("rank 9", np.zeros((1,) * 9, dtype=np.float32), "rank"),
    ]
    for label, arr, needle in rejected:
        src = os.path.join(work, "bad.npy")
        dst = os.path.join(work, "bad_out.npy")
        if os.path.exists(dst):
            os.remove(dst)
        np.save(src, arr)
        r = run_tool(tool, src, dst)
        check(r.returncode == 1, "%s: expected exit 1, got %d" % (label, r.returncode))
        check(needle in r.stderr, "%s: expected %r in %r" % (label, needle, r.stderr))
        check(not os.path.exists(dst), "%s: output written despite the error" % label)

    # Truncated and padded data.
    src = os.path.join(work, "trunc.npy")
    np.save(src, np.arange(10, dtype=np.int32))
    with open(src, "rb") as f:
        data = f.read()
    for label, blob, needle in (("truncated", data[:-1], "truncated data"),
                                ("trailing", data + b"\0", "trailing bytes")):
        with open(src, "wb") as f:
            f.write(blob)
        r = run_tool(tool, src, os.path.join(work, "x.npy"))
        check(r.returncode == 1 and needle in r.stderr, "%s: %r" % (label, r.stderr))

    print("npy_numpy_check: %d round trips, numpy %s, %d failure(s)"
          % (n, np.__version__, len(failures)))
    if not failures:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
