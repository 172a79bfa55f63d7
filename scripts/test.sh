#!/usr/bin/env bash
# The whole test suite, on a fresh machine or a developer's: installs what the tests need
# (Debian's Ceph 16.2 and fio for the real-cluster validation tests) when it is missing,
# then checks formatting, lints and the API docs' links, and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."

need_pkgs=()
command -v ceph-mon >/dev/null 2>&1 || need_pkgs+=(ceph-mon)
command -v ceph-osd >/dev/null 2>&1 || need_pkgs+=(ceph-osd)
command -v ceph-mgr >/dev/null 2>&1 || need_pkgs+=(ceph-mgr)
command -v rbd >/dev/null 2>&1 || need_pkgs+=(ceph-common)
command -v fio >/dev/null 2>&1 || need_pkgs+=(fio)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing: ${need_pkgs[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      ceph-mon ceph-osd ceph-mgr ceph-common fio >/dev/null
  elif [ "${CEPHPLAN_SKIP_LAB:-}" = 1 ]; then
    echo "warning: ${need_pkgs[*]} missing; CEPHPLAN_SKIP_LAB=1: the real-cluster test is skipped" >&2
  else
    echo "error: ${need_pkgs[*]} missing and cannot be installed here (need root and apt-get)." \
         "Install Debian's ceph-mon ceph-osd ceph-mgr ceph-common fio, or run with" \
         "CEPHPLAN_SKIP_LAB=1 to skip the real-cluster test knowingly" >&2
    exit 1
  fi
fi

# fio without its rbd engine (a build other than Debian's) cannot run the real-cluster test.
if command -v fio >/dev/null 2>&1 && ! fio --enghelp 2>/dev/null | grep -qx "$(printf '\trbd')"; then
  if [ "${CEPHPLAN_SKIP_LAB:-}" = 1 ]; then
    echo "warning: this fio has no rbd engine; CEPHPLAN_SKIP_LAB=1: the real-cluster test is skipped" >&2
  else
    echo "error: $(command -v fio) has no rbd engine (fio --enghelp does not list it): install" \
         "Debian's fio (built with librbd), or run with CEPHPLAN_SKIP_LAB=1 to skip the" \
         "real-cluster test knowingly" >&2
    exit 1
  fi
fi

cargo fmt --all -- --check
cargo clippy --all-targets --all-features -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --all-features
cargo test --all-features --no-fail-fast
