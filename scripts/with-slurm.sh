#!/usr/bin/env bash
# Runs a command with the Slurm cluster the tests use (two nodes on
# 127.0.0.1, scripts/slurm.sh; Slurm and munge installed from the Debian
# packages once per machine; root only) up, and stops it afterwards:
#
#   bash scripts/with-slurm.sh go test -race -count=1 ./executor/slurm/...
#   bash scripts/with-slurm.sh sh -c 'sinfo; srun -N2 hostname'
#
# The command sees SLURM_CONF, so Slurm's commands talk to the cluster, and
# the HONE_TEST_SLURM* variables scripts/slurm.sh describes. The cluster's
# state lives in a temporary directory and goes with it.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$#" -eq 0 ]; then
  echo "usage: bash scripts/with-slurm.sh COMMAND [ARG...]" >&2
  exit 2
fi
if ! command -v go >/dev/null 2>&1; then
  export PATH="$PATH:/usr/local/go/bin"
fi
. scripts/slurm.sh
hone_slurm_start
if [ -z "${HONE_TEST_SLURM:-}" ]; then
  echo "with-slurm.sh: the Slurm cluster is not available" >&2
  exit 1
fi
status=0
"$@" || status=$?
exit "$status"
