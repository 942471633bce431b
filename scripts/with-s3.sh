#!/usr/bin/env bash
# Runs a command with the S3 server the tests use (versitygw, built once per
# machine into ~/.cache/hone/bin) up on 127.0.0.1, and stops it afterwards:
#
#   bash scripts/with-s3.sh sh -c 'go run ./cmd/hone run --storage "$HONE_TEST_S3_URL" examples/asha.yaml'
#
# The command sees HONE_TEST_S3_URL (s3://BUCKET?endpoint=...&region=...&
# use_path_style=true, a URL to pass as storage) and the server's
# credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY. The server's
# data lives in a temporary directory and goes with it.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$#" -eq 0 ]; then
  echo "usage: bash scripts/with-s3.sh COMMAND [ARG...]" >&2
  exit 2
fi
if ! command -v go >/dev/null 2>&1; then
  export PATH="$PATH:/usr/local/go/bin"
fi
. scripts/s3server.sh
hone_s3_start
if [ -z "${HONE_TEST_S3_URL:-}" ]; then
  echo "with-s3.sh: the S3 server is not available" >&2
  exit 1
fi
status=0
"$@" || status=$?
exit "$status"
