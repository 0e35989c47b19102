#!/usr/bin/env python3
"""tests/samples/write_mnist_like.py OUT_DIR [TRAIN] [TEST] — MNIST's four IDX files, with made-up images.

The real MNIST is a download and CI has no network, so `train_images --mnist DIR` is tested on files in exactly
MNIST's format (magic 0x00000803 images, 0x00000801 labels, big-endian dims, ubyte pixels, 28x28, labels 0..9),
whose images are easy to learn: class k is a bright 6x6 square at one of ten places, jittered by up to 2 pixels,
over noise. Standard library only.
"""
import os
import random
import struct
import sys


def write(out, train, test):
    os.makedirs(out, exist_ok=True)
    rng = random.Random(0)
    for prefix, n in (("train", train), ("t10k", test)):
        pixels = bytearray()
        labels = bytearray()
        for i in range(n):
            k = i % 10
            img = [rng.randrange(0, 40) for _ in range(28 * 28)]
            r0 = 3 + (k // 5) * 12 + rng.randrange(-2, 3)
            c0 = 1 + (k % 5) * 5 + rng.randrange(-1, 2)
            for r in range(r0, r0 + 6):
                for c in range(c0, min(c0 + 6, 28)):
                    img[r * 28 + c] = 200 + rng.randrange(0, 56)
            pixels += bytes(img)
            labels.append(k)
        with open(os.path.join(out, prefix + "-images-idx3-ubyte"), "wb") as f:
            f.write(struct.pack(">IIII", 0x803, n, 28, 28) + pixels)
        with open(os.path.join(out, prefix + "-labels-idx1-ubyte"), "wb") as f:
            f.write(struct.pack(">II", 0x801, n) + labels)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: write_mnist_like.py OUT_DIR [TRAIN] [TEST]")
    write(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1024, int(sys.argv[3]) if len(sys.argv) > 3 else 256)
