#!/usr/bin/env python3
"""Draw the image of our own multimodal OmniMatBench demo item (CAL c21).

Writes benchmarks/data/omnimat_images/awp_demo_c21_img.png: one unit cell of a two-dimensional
centred square crystal, a black square outline with grey discs at its four corners and at
its centre, the discs touching along the diagonals. 96 x 96 pixels, 8-bit grey, standard
library only (zlib), so the bytes are the same wherever it runs. Run from the repository
root: python3 scripts/omnimat-demo-image.py
"""

import struct
import zlib

SIZE = 96
LO, HI = 20, 76  # the cell's corners (pixels)
SIDE = HI - LO
RADIUS = SIDE * 2**0.5 / 4  # discs touch along the diagonals
CENTRES = [(LO, LO), (HI, LO), (LO, HI), (HI, HI), ((LO + HI) / 2, (LO + HI) / 2)]


def grey(x, y):
    """The pixel's grey level: the outline over the discs over the white page."""
    on_outline = (LO - 1 <= x <= HI + 1 and LO - 1 <= y <= HI + 1) and (
        min(abs(x - LO), abs(x - HI)) <= 1 and LO - 1 <= y <= HI + 1
        or min(abs(y - LO), abs(y - HI)) <= 1 and LO - 1 <= x <= HI + 1
    )
    if on_outline:
        return 0
    for cx, cy in CENTRES:
        d = ((x - cx) ** 2 + (y - cy) ** 2) ** 0.5
        if d <= RADIUS - 1:
            return 150
        if d <= RADIUS:
            return 60
    return 255


def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


rows = b"".join(b"\x00" + bytes(grey(x, y) for x in range(SIZE)) for y in range(SIZE))
png = (
    b"\x89PNG\r\n\x1a\n"
    + chunk(b"IHDR", struct.pack(">IIBBBBB", SIZE, SIZE, 8, 0, 0, 0, 0))
    + chunk(b"IDAT", zlib.compress(rows, 9))
    + chunk(b"IEND", b"")
)
with open("benchmarks/data/omnimat_images/awp_demo_c21_img.png", "wb") as f:
    f.write(png)
print(len(png), "bytes")
