#!/usr/bin/env bash
# The long checks, run before a release and not in CI: the property tests
# at full size (HONE_LONG=1: every byte offset of a cut journal, thousands
# of controller histories, HyperBand runs of up to 2,000 trials), the chaos
# program with at least 100 kills, and, with --bench, the whole performance
# suite (about 15 minutes more). Needs what scripts/test.sh needs; the
# disk-full experiments of the chaos program need root, and its experiments
# on S3 the server scripts/s3server.sh builds.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v go >/dev/null 2>&1; then
  export PATH="$PATH:/usr/local/go/bin"
fi

echo "== property tests at full size (HONE_LONG=1)"
HONE_LONG=1 go test -count=1 -timeout 60m ./controller/ ./runner/ ./scheduler/... ./cmd/hone/

echo "== chaos, long mode"
# A real S3 server for the experiments on object storage (skipped loudly
# if it cannot be built).
. scripts/s3server.sh
hone_s3_start
go run ./scripts/chaos -q -kills "${CHAOS_KILLS:-100}"

if [ "${1:-}" = "--bench" ]; then
  echo "== performance suite"
  (cd bench && go run ./cmd/perfbench)
fi
echo "long checks passed"
