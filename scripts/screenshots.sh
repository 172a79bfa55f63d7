#!/usr/bin/env bash
# Takes one screenshot per page of the real cephplan-gui window under a virtual X server:
# assets/screenshots/<page>.png. Installs the X/Mesa runtime packages when missing (root +
# apt-get), builds the release binary, then for each page starts Xvfb and the app with
# `--page NAME`, waits for the window, captures the screen and stops both (by PID). The
# calibration shot starts a fit on a subset of calibration-data (--fit-on-start); the
# prediction shot turns on simulated tails (--tails) and waits SCREENSHOT_TAILS_SECS for
# the p99 curve.
#
# usage: scripts/screenshots.sh [PAGE...]     (default: every page)
set -euo pipefail
cd "$(dirname "$0")/.."

pages=("$@")
if [ ${#pages[@]} -eq 0 ]; then
  pages=(designer prediction compare calibration validation network)
fi

need=()
for pkg in xvfb xauth x11-utils xdotool imagemagick libgl1 libglx-mesa0 libgl1-mesa-dri \
           libx11-xcb1 libxcursor1 libxi6 libxrandr2 libxkbcommon-x11-0; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing: ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    echo "missing packages: ${need[*]} (need root and apt-get to install them)" >&2
    exit 2
  fi
fi

# SCREENSHOT_PROFILE=dev reuses a debug build while iterating; release is the default.
profile=${SCREENSHOT_PROFILE:-release}
cargo build --profile "$profile" --features gui --bin cephplan-gui
target="${CARGO_TARGET_DIR:-target}"
dir=$profile; [ "$profile" = dev ] && dir=debug
bin="$target/$dir/cephplan-gui"
out=assets/screenshots
mkdir -p "$out"

display=:${SCREENSHOT_DISPLAY:-99}
runtime=$(mktemp -d)
# A private config dir so the saved window state of the user does not leak into the shots.
export XDG_RUNTIME_DIR="$runtime" XDG_DATA_HOME="$runtime/data" XDG_CONFIG_HOME="$runtime/config" HOME="$runtime"
export LIBGL_ALWAYS_SOFTWARE=1

xvfb_pid=""
app_pid=""
cleanup() {
  [ -n "$app_pid" ] && kill "$app_pid" 2>/dev/null || true
  [ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null || true
  rm -rf "$runtime"
}
trap cleanup EXIT

# Drives the real window with the pointer (coordinates of the 1280x800 layout; re-measure
# them from assets/screenshots/network.png if the Network page layout changes).
click() {
  DISPLAY="$display" xdotool mousemove "$1" "$2"; sleep 0.3
  DISPLAY="$display" xdotool click 1; sleep 0.5
}
prepare_compare() {
  click 282 295                       # Network page: "Add to Compare" (variant 1)
  click 55 263                        # "add station" (a third station, 1 ms demand)
  click 282 318                       # "Add to Compare" (variant 2), one row lower now
  click 238 12                        # the Prediction tab: wait for the seed-000 prediction
  sleep "${SCREENSHOT_PREDICT_SECS:-20}"
  click 214 43                        # "Add to Compare" (the Ceph scenario, with nodes and cores)
  click 319 12                        # the Compare tab
}

for page in "${pages[@]}"; do
  start_page=$page
  [ "$page" = compare ] && start_page=network
  Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
  xvfb_pid=$!
  sleep 1
  extra=()
  settle=${SCREENSHOT_SETTLE_SECS:-4}
  if [ "$page" = calibration ]; then
    # A finished fit with leave-one-out on three systems (about 10 s in a debug build;
    # all of calibration-data takes minutes).
    extra=(--calibration-data calibration-data/seed-000-ampere-altra-max.csv
           --calibration-data calibration-data/seed-001-xeon-8180-optane.csv
           --calibration-data calibration-data/seed-004-journal-ssd.csv --fit-on-start)
    settle=${SCREENSHOT_FIT_SECS:-30}
  fi
  if [ "$page" = prediction ]; then
    # With simulated tails (--tails): the MVA prediction, the headline simulation, then
    # the p99 curve, one simulation per iodepth (minutes in a debug build: raise
    # SCREENSHOT_TAILS_SECS with SCREENSHOT_PROFILE=dev).
    extra=(--tails)
    settle=${SCREENSHOT_TAILS_SECS:-90}
  fi
  DISPLAY="$display" "$bin" --page "$start_page" "${extra[@]}" >"$runtime/app.log" 2>&1 &
  app_pid=$!
  if ! DISPLAY="$display" timeout 30 xdotool search --sync --name '^cephplan$' >/dev/null; then
    echo "the window did not appear for page $page; app output:" >&2
    cat "$runtime/app.log" >&2
    exit 1
  fi
  sleep 2
  [ "$page" = compare ] && prepare_compare
  # Let background jobs finish and the layout settle; keep the pointer off the plots.
  sleep "$settle"
  DISPLAY="$display" xdotool mousemove 1279 799
  sleep 0.5
  DISPLAY="$display" import -window root "$out/$page.png"
  echo "wrote $out/$page.png"
  kill "$app_pid"; wait "$app_pid" 2>/dev/null || true; app_pid=""
  kill "$xvfb_pid"; wait "$xvfb_pid" 2>/dev/null || true; xvfb_pid=""
done
