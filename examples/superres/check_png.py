#!/usr/bin/python3
"""check_png.py FILE.png FILE.pgm: the PNG superres-app wrote is well formed
(signature, chunk CRCs, zlib stream with its Adler-32, IHDR 8-bit grayscale)
and holds the same pixels as the PGM. Standard library only."""

import struct
import sys
import zlib


def read_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "bad signature"
    pos, chunks = 8, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(kind + body) == crc, f"bad CRC in {kind!r}"
        chunks.append((kind, body))
        pos += 12 + length
    assert chunks[0][0] == b"IHDR" and chunks[-1] == (b"IEND", b""), "bad chunk order"
    w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    assert (depth, colour, interlace) == (8, 0, 0), "not 8-bit grayscale, non-interlaced"
    raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    assert len(raw) == h * (w + 1), "wrong amount of image data"
    rows = [raw[y * (w + 1):(y + 1) * (w + 1)] for y in range(h)]
    assert all(r[0] == 0 for r in rows), "unexpected filter type"
    return w, h, b"".join(r[1:] for r in rows)


def read_pgm(path):
    data = open(path, "rb").read()
    fields = data.split(maxsplit=4)
    assert fields[0] == b"P5" and fields[3] == b"255"
    w, h = int(fields[1]), int(fields[2])
    return w, h, data[len(data) - w * h:]


def main(argv):
    png, pgm = read_png(argv[1]), read_pgm(argv[2])
    assert png[:2] == pgm[:2], f"sizes differ: {png[:2]} vs {pgm[:2]}"
    assert png[2] == pgm[2], "pixels differ"
    print(f"{argv[1]}: valid {png[0]}x{png[1]} grayscale PNG, same pixels as {argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
