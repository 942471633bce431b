#!/usr/bin/env bash
# Runs every check hone has: formatting, vet, the Go tests under the race
# detector, and short fuzzing of the parsers. It installs nothing that the
# Go toolchain does not fetch by itself (module downloads), but Slurm and
# munge from the Debian packages (apt-get, once per machine, as root),
# Chromium the same way for the dashboard's browser tests, and
# python3-optuna the same way for the Optuna baselines of the search-quality
# benchmark, whose smoke run installs it (skipped loudly where it cannot); the
# S3 server the object-store tests use is built with `go install` into a
# per-machine cache (scripts/s3server.sh), and the Slurm cluster the Slurm
# tests use is started over a temporary directory (scripts/slurm.sh); both
# run only while this script does.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v go >/dev/null 2>&1; then
  export PATH="$PATH:/usr/local/go/bin"
fi
command -v go >/dev/null || { echo "test.sh: go not found (install Go 1.26+)" >&2; exit 1; }

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "not gofmt-formatted:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...

# A real S3 server for the object-store tests (skipped loudly if it cannot
# be built).
. scripts/s3server.sh
hone_s3_start

# A real two-node Slurm cluster for the Slurm tests (skipped loudly if it
# cannot be installed or started). Sourced after the S3 server: its EXIT
# trap stops both.
. scripts/slurm.sh
hone_slurm_start

# Chromium for the dashboard's browser tests (scripts/chromium.sh).
. scripts/chromium.sh
hone_chromium_install

echo "== go test -race"
go test -race -count=1 -timeout 20m ./...

echo "== benchmarks (smoke mode; their own module; the search-quality smoke run, docs/QUALITY.md, takes about a minute)"
(cd bench && go vet ./... && go test -race -count=1 -timeout 20m ./...)

echo "== examples with plots (their own module)"
(cd examples/pbt_toy && go vet ./... && go test -race -count=1 -timeout 10m ./...)

echo "== python client"
command -v python3 >/dev/null || { echo "test.sh: python3 not found" >&2; exit 1; }
PYTHONDONTWRITEBYTECODE=1 python3 -m unittest discover -s clients/python
# pip installs the client offline (its build backend is in the repository),
# at hone's version.
venv=$(mktemp -d)
python3 -m venv "$venv/env"
"$venv/env/bin/pip" install --no-index --no-cache-dir --disable-pip-version-check -q ./clients/python
want=$(go run ./cmd/hone --version | cut -d' ' -f2)
got=$(cd "$venv" && PYTHONDONTWRITEBYTECODE=1 "$venv/env/bin/python" -c 'import hone; print(hone.__version__)')
rm -rf "$venv"
[ "$got" = "$want" ] || { echo "test.sh: pip installed the python client at version $got, hone is $want" >&2; exit 1; }
echo "pip install ./clients/python: hone $got"

echo "== chaos (short): real experiments killed and resumed; docs/RELIABILITY.md"
go run ./scripts/chaos -q

echo "== fuzz (short)"
go test -run '^$' -fuzz '^FuzzDecode$' -fuzztime 30000x ./space/
go test -run '^$' -fuzz '^FuzzDecode$' -fuzztime 30000x ./wire/
go test -run '^$' -fuzz '^FuzzParse$' -fuzztime 5000x ./spec/

echo "all checks passed"
