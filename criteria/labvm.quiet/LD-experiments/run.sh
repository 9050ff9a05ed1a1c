#!/bin/bash
# session 33 experiments on one lab VM booted with w1's code (port 10122, workdir /var/tmp/iogate-exp)
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD
echo "=== up $(date +%T)"
.venv/bin/python -m iogate labvm up --workdir /var/tmp/iogate-exp --port 10122 || exit 1
echo "=== second up on the same port (must be refused) $(date +%T)"
.venv/bin/python -m iogate labvm up --workdir /var/tmp/iogate-exp2 --port 10122; echo "rc=$?"
ssh -i /var/cache/iogate/labvm/id_ed25519 -p 10122 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR root@127.0.0.1 cat /proc/cmdline
echo "=== starve $(date +%T)"
timeout 400 .venv/bin/python criteria/labvm.quiet/LD-experiments/starve.py
echo "=== warmup $(date +%T)"
timeout 400 .venv/bin/python criteria/labvm.quiet/LD-experiments/warmup.py
echo "=== down $(date +%T)"
.venv/bin/python -m iogate labvm down --workdir /var/tmp/iogate-exp
.venv/bin/python -m iogate cleanup --workdir /var/tmp/iogate-exp
echo "=== done $(date +%T)"
