# Sourced by scripts/test.sh: builds a real S3 server (versitygw) once per
# machine, starts it on a free port of 127.0.0.1 over a temporary directory
# with one bucket, and exports what the object-store tests need:
#
#   HONE_TEST_S3_URL       s3://BUCKET?endpoint=...&region=...&use_path_style=true
#   AWS_ACCESS_KEY_ID      credentials of the server's root account
#   AWS_SECRET_ACCESS_KEY
#   HONE_TEST_VERSITYGW    the server binary (tests that kill and restart a
#                          server start their own)
#
# With HONE_S3_NICE=N set, the server runs at nice value N.
#
# The server is stopped by its pid when the sourcing script exits, also on
# failure. If the server cannot be built or started, it says so loudly and
# exports nothing: the object-store tests then skip, loudly too.

hone_s3_version=v1.8.0
hone_s3_bucket=hone-test

hone_s3_stop() {
  if [ -n "${hone_s3_pid:-}" ]; then
    kill "$hone_s3_pid" 2>/dev/null || true
    wait "$hone_s3_pid" 2>/dev/null || true
    hone_s3_pid=
  fi
  if [ -n "${hone_s3_dir:-}" ]; then
    rm -rf "$hone_s3_dir"
    hone_s3_dir=
  fi
}

hone_s3_loud() {
  echo "########################################################################" >&2
  echo "## S3 TEST SERVER NOT AVAILABLE: $*" >&2
  echo "## The object-store tests against a real S3 server will SKIP." >&2
  echo "########################################################################" >&2
}

hone_s3_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null \
    || echo $((20000 + RANDOM % 20000))
}

hone_s3_start() {
  local cache="${XDG_CACHE_HOME:-$HOME/.cache}/hone/bin"
  local bin="$cache/versitygw"
  if [ ! -x "$bin" ]; then
    echo "== building the S3 test server (versitygw $hone_s3_version, once per machine, into $cache)"
    mkdir -p "$cache"
    if ! (cd / && GOBIN="$cache" go install "github.com/versity/versitygw/cmd/versitygw@$hone_s3_version"); then
      hone_s3_loud "building versitygw $hone_s3_version failed (no module download?)"
      return 0
    fi
  fi
  hone_s3_dir=$(mktemp -d "${TMPDIR:-/tmp}/hone-s3.XXXXXX")
  mkdir -p "$hone_s3_dir/data/$hone_s3_bucket"
  local port key secret
  port=$(hone_s3_free_port)
  key=hone-test-$RANDOM$RANDOM
  secret=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
  # HONE_S3_NICE=19 runs the server at that nice value: it then uses only
  # the CPU hone leaves idle, as a server on another machine would
  # (benchmarks of hone's own latency use it).
  ROOT_ACCESS_KEY_ID=$key ROOT_SECRET_ACCESS_KEY=$secret \
    nice -n "${HONE_S3_NICE:-0}" "$bin" --port "127.0.0.1:$port" posix "$hone_s3_dir/data" >"$hone_s3_dir/server.log" 2>&1 &
  hone_s3_pid=$!
  trap hone_s3_stop EXIT
  local i
  for i in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      export HONE_TEST_S3_URL="s3://$hone_s3_bucket?endpoint=http://127.0.0.1:$port&region=us-east-1&use_path_style=true"
      export AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret AWS_EC2_METADATA_DISABLED=true
      export HONE_TEST_VERSITYGW=$bin
      echo "== S3 test server up on 127.0.0.1:$port (pid $hone_s3_pid)"
      return 0
    fi
    if ! kill -0 "$hone_s3_pid" 2>/dev/null; then
      break
    fi
    sleep 0.1
  done
  tail -n 20 "$hone_s3_dir/server.log" >&2 || true
  hone_s3_loud "versitygw did not come up on 127.0.0.1:$port"
  hone_s3_stop
  return 0
}
