#!/usr/bin/python3
"""Write the superres example's test image: a deterministic synthetic
grayscale pattern, binary PGM (P5, maxval 255).

  make_test_image.py [--size N] [OUT.pgm]     default: 128, test_image.pgm next to this script

The picture (no randomness, only numpy arithmetic on a pixel grid) has the
features an upscaler is judged by: a zone plate (rings whose frequency grows
towards the corner, so aliasing shows), hard-edged bars of
decreasing width, a filled disc and a diagonal edge (smooth curves and
slanted lines), and a horizontal gradient (banding).
"""

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def pattern(n):
    y, x = np.mgrid[0:n, 0:n].astype(np.float64) + 0.5
    u, v = x / n, y / n
    img = 0.15 + 0.7 * u                                    # gradient background
    # top-left quadrant: zone plate centred on the image corner
    r2 = (u ** 2 + v ** 2)
    zone = 0.5 + 0.5 * np.cos(np.pi * r2 * n * 0.45)
    tl = (u < 0.5) & (v < 0.5)
    img = np.where(tl, zone, img)
    # top-right quadrant: hard-edged vertical bars whose period shrinks
    # from 12 pixels on the left to 2 on the right (a square-wave chirp)
    tr = (u >= 0.5) & (v < 0.5)
    c = x - n / 2                                           # 0.5 .. n/2 - 0.5
    half = n / 2
    f0, f1 = 1.0 / 12.0, 1.0 / 2.0
    phase = 2 * np.pi * (f0 * c + (f1 - f0) * c * c / (2 * half))
    bars = (np.cos(phase) >= 0).astype(np.float64)
    img = np.where(tr, 0.1 + 0.8 * bars, img)
    # bottom-left: a disc
    bl = (u < 0.5) & (v >= 0.5)
    disc = ((u - 0.25) ** 2 + (v - 0.75) ** 2) < 0.17 ** 2
    img = np.where(bl, np.where(disc, 0.9, 0.2), img)
    # bottom-right: a diagonal edge with a thin line across it
    br = (u >= 0.5) & (v >= 0.5)
    edge = np.where((u - 0.5) + 0.6 * (v - 0.5) < 0.4, 0.85, 0.25)
    line = np.abs((v - 0.5) - 0.8 * (u - 0.5) - 0.05) < 0.6 / n
    img = np.where(br, np.where(line, 0.0, edge), img)
    return np.clip(np.rint(img * 255.0), 0, 255).astype(np.uint8)


def write_pgm(path, img):
    h, w = img.shape
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (w, h))
        f.write(np.ascontiguousarray(img, dtype=np.uint8).tobytes())


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", nargs="?", default=os.path.join(HERE, "test_image.pgm"))
    parser.add_argument("--size", type=int, default=128)
    args = parser.parse_args(argv)
    write_pgm(args.output, pattern(args.size))
    print(f"wrote {args.output} ({args.size}x{args.size})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
