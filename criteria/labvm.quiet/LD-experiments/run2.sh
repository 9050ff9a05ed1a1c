#!/bin/bash
# session 34: LD-2 cause (SCRIPT: sched.py, sizes.py) on one lab VM booted with w1's code (port 10122, workdir /var/tmp/iogate-exp)
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
echo "=== up $(date +%T)"
.venv/bin/python -m iogate labvm up --workdir /var/tmp/iogate-exp --port 10122 || exit 1
echo "=== ${SCRIPT:-sched.py} $(date +%T)"
timeout 500 .venv/bin/python criteria/labvm.quiet/LD-experiments/${SCRIPT:-sched.py} "$@"
echo "=== down $(date +%T)"
.venv/bin/python -m iogate labvm down --workdir /var/tmp/iogate-exp
.venv/bin/python -m iogate cleanup --workdir /var/tmp/iogate-exp
echo "=== done $(date +%T)"
