#!/usr/bin/env python3
"""Punch holes (fallocate --punch-hole) over the payloads of a template's PRODUCED objects.

`pack` reads a template's directory for every object but the payload bytes of borrowed objects
only (it writes produced objects from the GGUF), so a template with its produced payloads turned
into holes packs to the same artifact while taking only its borrowed objects' room on disk
(scripts/measure-diff.sh: a 27B template is 17.5 GB written, ~1 GB kept).

    punch-produced.py INSPECT_JSON TEMPLATE       (INSPECT_JSON from `inspect TEMPLATE --json`)
"""
import json
import os
import subprocess
import sys

spec = json.load(open(os.path.join(os.path.dirname(__file__), "..", "spec", "mapping.json")))
produced = spec["produced_namespaces"]
borrowed_inside = [b["prefix"] for b in spec["borrowed_in_produced"]]


def is_borrowed(name):
    """The packer's rule (src/mapping is_borrowed): outside text/, or a documented exception."""
    return not any(name.startswith(p) for p in produced) or any(
        name.startswith(b) for b in borrowed_inside
    )


report, template = json.load(open(sys.argv[1])), sys.argv[2]
punched = 0
for o in report["objects"]:
    if is_borrowed(o["name"]) or o["bytes"] == 0:
        continue
    subprocess.run(
        ["fallocate", "--punch-hole", "--offset", str(o["file_offset"]),
         "--length", str(o["bytes"]), template],
        check=True,
    )
    punched += o["bytes"]
print(f"punched {punched} B of produced payloads in {template}")
