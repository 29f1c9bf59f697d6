#!/usr/bin/env python3
"""Stub: a persistent adapter (PROTOCOL.md §4.6) that misbehaves on chosen cases.

It wraps the reference adapter in persistent mode (`ninfer-ternary reader-adapter --persistent`,
binary from $NINFER_BIN) and forwards every request, except where $NINFER_FAULT says otherwise:
a comma-separated list of KIND@GLOB, GLOB matched against the request id (fnmatch). KIND:
  crash         die of SIGSEGV before answering
  exit          exit 0 before answering (a reader that quits mid-run)
  hang          never answer (sleep)
  wrong_id      answer correctly, but with another id
  garbage       answer with a line that is not JSON
  wrong_answer  stay alive and answer wrongly: reject a case the reference accepts, accept
                (empty observation) one it rejects
Without $NINFER_FAULT it is a correct persistent reader (the control). Standard library only.
Used by tests/persistent.rs; not part of scripts/conformance.sh's stub meta-test.
"""
import fnmatch
import json
import os
import signal
import subprocess
import sys
import time


def faults():
    out = []
    for item in filter(None, os.environ.get("NINFER_FAULT", "").split(",")):
        kind, _, glob = item.partition("@")
        out.append((kind, glob))
    return out


def main(argv):
    if argv[1:] != ["--persistent"]:
        sys.stderr.write("persistent_faulty: persistent mode only (argument --persistent)\n")
        return 2
    ref = subprocess.Popen([os.environ["NINFER_BIN"], "reader-adapter", "--persistent"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    sys.stdout.write(ref.stdout.readline())  # the reference's handshake
    sys.stdout.flush()
    plan = faults()
    for line in sys.stdin:
        if not line.strip():
            continue
        case_id = json.loads(line).get("id", "")
        kind = next((k for k, g in plan if fnmatch.fnmatchcase(case_id, g)), None)
        if kind == "crash":
            sys.stderr.write(f"persistent_faulty: crashing on {case_id}\n")
            sys.stderr.flush()
            os.kill(os.getpid(), signal.SIGSEGV)
        if kind == "exit":
            os._exit(0)
        if kind == "hang":
            time.sleep(3600)
        if kind == "garbage":
            sys.stdout.write("OK, looks fine to me\n")
            sys.stdout.flush()
            continue
        ref.stdin.write(line if line.endswith("\n") else line + "\n")
        ref.stdin.flush()
        ans = json.loads(ref.stdout.readline())
        if kind == "wrong_id":
            ans["id"] = case_id + "#other"
        if kind == "wrong_answer":
            if ans.get("result") == "accept":
                ans = {"id": case_id, "result": "reject", "class": None, "message": "wrong on purpose"}
            else:
                ans = {"id": case_id, "result": "accept", "observation": {}}
        sys.stdout.write(json.dumps(ans) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
