# Sourced by test.sh: installs Chromium, which the dashboard's browser tests
# drive headless (dashboard/browser_test.go), from the Debian package, once
# per machine. Only as root with apt-get; otherwise it says so loudly, and
# those tests skip loudly too (as root without Chromium they fail).

# hone_chromium_install: installs the chromium package unless a Chromium
# or Chrome binary is on the PATH already.
hone_chromium_install() {
  local b
  for b in chromium chromium-browser google-chrome google-chrome-stable; do
    command -v "$b" >/dev/null 2>&1 && return 0
  done
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "!! Chromium is missing and cannot be installed here (needs root and apt-get): the dashboard's browser tests will skip" >&2
    return 0
  fi
  echo "== installing Chromium (Debian package, once per machine) for the dashboard's browser tests"
  local log
  log=$(mktemp "${TMPDIR:-/tmp}/hone-chromium-apt.XXXXXX")
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >"$log" 2>&1; then
    if ! { DEBIAN_FRONTEND=noninteractive apt-get update -q &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; } >>"$log" 2>&1; then
      tail -n 20 "$log" >&2
      echo "!! apt-get install chromium failed: the dashboard's browser tests will fail" >&2
    fi
  fi
  rm -f "$log"
}
