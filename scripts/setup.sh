#!/usr/bin/env bash
# Installs what the project needs that Swift packages cannot bring: the
# libinotifytools headers and library (Debian), tmux for the demo and the
# test that runs the widget in a real terminal, chromium for the test that
# looks at the timeline in a real browser, and iproute2's ip for the
# test that runs the cloud and its devices on two network namespaces, and
# strace for the test that checks what a durable commit flushes.
# Safe to run again: it installs only what is missing.
set -euo pipefail

need_apt=()
if ! dpkg -s libinotifytools0-dev >/dev/null 2>&1 && ! dpkg -s libinotifytools-dev >/dev/null 2>&1; then
  need_apt+=(inotify)
fi
if [ "${GROUPSIM_NEED_TMUX:-0}" = 1 ] && ! command -v tmux >/dev/null 2>&1; then
  need_apt+=(tmux)
fi
if [ "${GROUPSIM_NEED_CHROMIUM:-0}" = 1 ] && ! command -v chromium >/dev/null 2>&1; then
  need_apt+=(chromium)
fi
if [ "${GROUPSIM_NEED_IP:-0}" = 1 ] && ! command -v ip >/dev/null 2>&1 && [ ! -x /usr/sbin/ip ] && [ ! -x /sbin/ip ]; then
  need_apt+=(iproute2)
fi

if [ "${GROUPSIM_NEED_STRACE:-0}" = 1 ] && ! command -v strace >/dev/null 2>&1; then
  need_apt+=(strace)
fi

if [ ${#need_apt[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "==> installing system packages: ${need_apt[*]}"
  $sudo apt-get update -qq
  for want in "${need_apt[@]}"; do
    case "$want" in
      # The -dev package was renamed in newer Debian releases.
      inotify) $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libinotifytools0-dev \
                 || $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libinotifytools-dev ;;
      tmux) $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux ;;
      chromium) $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium ;;
      iproute2) $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 ;;
      strace) $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq strace ;;
    esac
  done
fi

if ! command -v swift >/dev/null 2>&1; then
  if [ -x /opt/swift/usr/bin/swift ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
  else
    echo "error: the Swift toolchain (6.0 or newer) is not on PATH; install it from swift.org and try again" >&2
    exit 1
  fi
fi
