#!/bin/sh
# Stub: dies of SIGSEGV before answering.
cat >/dev/null
kill -SEGV $$
