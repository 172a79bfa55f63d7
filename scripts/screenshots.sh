#!/usr/bin/env bash
# Takes one screenshot per page and window size of the real cephplan-gui window under a
# virtual X server: assets/screenshots/<page>-<W>x<H>.png, at 1024x640 and 1600x1000 (or
# SCREENSHOT_SIZES="WxH ..."). Installs the X/Mesa runtime packages when missing (root +
# apt-get), builds the release binary, then for each size and page starts Xvfb with a
# screen of that size and the app with `--page NAME --size WxH` on the seed-000 example,
# waits, captures the screen and stops both (by PID). Pages are reached by flags, not by
# pointer coordinates: the calibration shot starts a fit on a subset of calibration-data
# (--fit-on-start), the transfer shot the same page's transfer evaluation on all of it
# (--evaluate-on-start); the prediction shot turns on simulated tails (--tails) and waits
# SCREENSHOT_TAILS_SECS for the p99 curve; the compare shot files three example scenarios
# (--compare); the sizing shot runs the design search (--search-on-start); the
# open-dialog shot opens the designer's Browse… dialog (--browse-on-start), which under a
# bare X server (no D-Bus session, so no XDG desktop portal) is rfd's zenity fallback: it
# installs zenity, and waits for the window named "zenity".
#
# usage: scripts/screenshots.sh [PAGE...]     (default: every page)
set -euo pipefail
cd "$(dirname "$0")/.."

pages=("$@")
if [ ${#pages[@]} -eq 0 ]; then
  pages=(designer prediction compare sizing calibration transfer validation network open-dialog)
fi
read -r -a sizes <<<"${SCREENSHOT_SIZES:-1024x640 1600x1000}"
scenario=models/examples/seed-000-ampere-altra-max.toml

need=()
for pkg in xvfb xauth x11-utils xdotool imagemagick libgl1 libglx-mesa0 libgl1-mesa-dri \
           libx11-xcb1 libxcursor1 libxi6 libxrandr2 libxkbcommon-x11-0; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [[ " ${pages[*]} " == *" open-dialog "* ]] && ! command -v zenity >/dev/null 2>&1; then
  need+=(zenity)
fi
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
export XDG_RUNTIME_DIR="$runtime" LIBGL_ALWAYS_SOFTWARE=1

xvfb_pid=""
app_pid=""
cleanup() {
  [ -n "$app_pid" ] && kill "$app_pid" 2>/dev/null || true
  [ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null || true
  rm -rf "$runtime"
}
trap cleanup EXIT

# The Compare shot files three scenarios at the start (--compare), so no pointer driving.
compare_files=(models/examples/seed-000-ampere-altra-max.toml
               models/examples/scale-out-vs-scale-up/scale-out-9x8.toml
               models/examples/scale-out-vs-scale-up/scale-up-3x24.toml)

for size in "${sizes[@]}"; do
for page in "${pages[@]}"; do
  w=${size%x*}; h=${size#*x}
  # A fresh app state per shot: neither the user's saved window (size, page, edits) nor
  # the previous shot's leaks in.
  home="$runtime/$page-$size"
  mkdir -p "$home"
  export XDG_DATA_HOME="$home/data" XDG_CONFIG_HOME="$home/config" HOME="$home"
  Xvfb "$display" -screen 0 "${size}x24" -nolisten tcp >/dev/null 2>&1 &
  xvfb_pid=$!
  sleep 1
  extra=()
  settle=${SCREENSHOT_SETTLE_SECS:-4}
  app_page=$page
  case $page in
    open-dialog)
      app_page=designer
      extra=(--browse-on-start) ;;
    calibration)
      # A finished fit with leave-one-out on three systems (about 10 s in a debug build;
      # all of calibration-data takes minutes).
      extra=(--calibration-data calibration-data/seed-000-ampere-altra-max.csv
             --calibration-data calibration-data/seed-001-xeon-8180-optane.csv
             --calibration-data calibration-data/seed-004-journal-ssd.csv --fit-on-start)
      settle=${SCREENSHOT_FIT_SECS:-30} ;;
    transfer)
      # The Calibration page's transfer evaluation over the whole corpus (cephplan
      # evaluate: about 20 s in a release build since its fits evaluate every run).
      app_page=calibration
      extra=(--calibration-data calibration-data --evaluate-on-start)
      settle=${SCREENSHOT_EVALUATE_SECS:-70} ;;
    prediction)
      # With simulated tails (--tails): the MVA prediction, the headline simulation, then
      # the p99 curve, one simulation per iodepth (minutes in a debug build: raise
      # SCREENSHOT_TAILS_SECS with SCREENSHOT_PROFILE=dev).
      extra=(--tails)
      settle=${SCREENSHOT_TAILS_SECS:-90} ;;
    compare)
      for f in "${compare_files[@]}"; do extra+=(--compare "$f"); done
      settle=${SCREENSHOT_COMPARE_SECS:-20} ;;
    sizing)
      # Sizing opens with the shipped requirements example; the search starts at once.
      extra=(--search-on-start)
      settle=${SCREENSHOT_SIZING_SECS:-30} ;;
  esac
  DISPLAY="$display" "$bin" --page "$app_page" --size "$size" "${extra[@]}" "$scenario" \
    >"$runtime/app.log" 2>&1 &
  app_pid=$!
  if ! DISPLAY="$display" timeout 30 xdotool search --sync --name '^cephplan$' >/dev/null; then
    echo "the window did not appear for page $page at $size; app output:" >&2
    cat "$runtime/app.log" >&2
    exit 1
  fi
  if [ "$page" = open-dialog ] &&
     ! DISPLAY="$display" timeout 30 xdotool search --sync --name '^zenity$' >/dev/null; then
    echo "no file dialog appeared at $size; app output:" >&2
    cat "$runtime/app.log" >&2
    exit 1
  fi
  if [ "$page" = open-dialog ]; then
    # Xvfb has no window manager to stack a new dialog over the app's window: raise it.
    sleep 2
    DISPLAY="$display" xdotool search --name '^zenity$' windowraise %@ 2>/dev/null || true
  fi
  # Let background jobs finish and the layout settle; keep the pointer off the plots.
  sleep "$settle"
  DISPLAY="$display" xdotool mousemove $((w - 1)) $((h - 1))
  sleep 0.5
  shot="$out/$page-$size.png"
  DISPLAY="$display" import -window root "$shot"
  # Fewer colours keep the files small (egui draws flat colours; text stays legible).
  if command -v pngquant >/dev/null 2>&1; then
    pngquant --force --skip-if-larger --quality 70-95 --output "$shot" -- "$shot" || true
  fi
  echo "wrote $shot"
  kill "$app_pid"; wait "$app_pid" 2>/dev/null || true; app_pid=""
  kill "$xvfb_pid"; wait "$xvfb_pid" 2>/dev/null || true; xvfb_pid=""
done
done
