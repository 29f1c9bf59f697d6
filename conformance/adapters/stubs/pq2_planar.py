#!/usr/bin/env python3
"""Stub 'pq2_planar': py_ninfer (../py_ninfer/reader.py, unchanged) with the PQ2_0 code layout
replaced by a planar one -- within each 32-element group, byte j holds elements j, j+8, j+16,
j+24 (bits 0-1, 2-3, 4-5, 6-7), the layout another fork uses for its own 2-bit type (Q2_0S
planar, spec/codecs.md; py_ninfer's dec_q2s_planar) -- instead of PQ2_0's sequential one (byte
j//4, bits 2*(j%4)). Every reader of the PQ2_0 code bytes goes through pq2_codes: PQ2_0 and
Q2_0-g64 codec blocks and PQ2_0_G128 .ninfer objects."""
import importlib.util
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "reader", os.path.join(HERE, "..", "py_ninfer", "reader.py"))
reader = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reader)


def pq2_codes_planar(qs):
    n = qs.shape[1] * 4
    e = np.arange(n)
    byte = (e // 32) * 8 + e % 8
    shift = (2 * ((e % 32) // 8)).astype(np.uint8)
    return ((qs[:, byte] >> shift) & 3).astype(np.int8)


reader.pq2_codes = pq2_codes_planar
sys.exit(reader.main(sys.argv))
