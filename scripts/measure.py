#!/usr/bin/env python3
"""Runs a command and reports wall time, peak anonymous (heap) and file-backed resident memory,
and bytes read/written, sampled from /proc every 20 ms (Linux).

Usage: measure.py CMD [ARGS...]
"""
import subprocess
import sys
import time


def sample(pid):
    st, io = {}, {}
    try:
        for line in open(f"/proc/{pid}/status"):
            k, _, v = line.partition(":")
            if k in ("RssAnon", "RssFile", "VmHWM"):
                st[k] = int(v.split()[0]) * 1024
        for line in open(f"/proc/{pid}/io"):
            k, _, v = line.partition(":")
            io[k] = int(v)
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return st, io


def main() -> int:
    t0 = time.perf_counter()
    p = subprocess.Popen(sys.argv[1:])
    peak = {"RssAnon": 0, "RssFile": 0}
    last_io = {}
    while p.poll() is None:
        st, io = sample(p.pid)
        for k in peak:
            peak[k] = max(peak[k], st.get(k, 0))
        last_io = io or last_io
        time.sleep(0.02)
    wall = time.perf_counter() - t0
    gib = 1 << 30
    print(f"measure: wall {wall:.2f} s, peak heap (RssAnon) {peak['RssAnon'] / gib:.3f} GiB, "
          f"peak file-backed (RssFile, pages of mapped inputs touched) {peak['RssFile'] / gib:.2f} GiB, "
          f"write() bytes {last_io.get('wchar', 0) / 1e9:.2f} GB, exit {p.returncode}", file=sys.stderr)
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
