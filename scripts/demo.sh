#!/usr/bin/env bash
# Opens a tmux session with the built-in example app (Notes) running as
# separate processes on one fresh simulation root, in a 2×2 grid:
#
#   main-app (the app's prompt)             | widget (its card, redrawn on change)
#   groupsim defaults watch (the app group) | a shell for intent-extension one-shots
#
# With --cloud, two devices signed in to one iCloud account instead, running
# the Notes app whose settings sync (scenarios/cloud/apps/synced-notes.yaml):
#
#   main-app on iPhone                      | widget on iPad
#   main-app on iPad                        | a shell (groupsim cloud status, network …)
#
# The cloud and each device's sync agent run in the session's second
# window ("cloud", their event lines), tied to it: they end with the session.
#
# Usage: scripts/demo.sh [--no-attach] [--cloud]
#   --no-attach   create the session detached and print how to attach
#   --cloud       the two-device iCloud demo
# GROUPSIM_ROOT is used if set, else a new temporary folder. The session is
# called groupsim-demo; an existing one is killed first. docs/demo.md walks
# through it.
set -euo pipefail
cd "$(dirname "$0")/.."

attach=1
cloud=0
for argument in "$@"; do
  case "$argument" in
    --no-attach) attach=0 ;;
    --cloud) cloud=1 ;;
    -h|--help) sed -n '2,23s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "usage: scripts/demo.sh [--no-attach] [--cloud]" >&2; exit 2 ;;
  esac
done

session=groupsim-demo
# Killing the old session from inside it would kill this script too.
if [ -n "${TMUX:-}" ] && [ "$(tmux display-message -p '#S' 2>/dev/null)" = "$session" ]; then
  echo "error: this shell is inside the $session session; run scripts/demo.sh from another terminal" >&2
  exit 1
fi

export GROUPSIM_NEED_TMUX=1
source scripts/setup.sh
echo "==> building"
swift build

group=group.com.example.notes
bin=.build/debug
repo=$(pwd)
export GROUPSIM_ROOT="${GROUPSIM_ROOT:-$(mktemp -d "${TMPDIR:-/tmp}/groupsim-demo.XXXXXX")}"

# Single-quotes a word for sh.
quote() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

# Every pane starts a shell with the simulation's variables exported (set
# explicitly: a tmux server that is already running would not pass on this
# script's environment).
environment="export GROUPSIM_ROOT=$(quote "$GROUPSIM_ROOT");"
if [ -n "${GROUPSIM_DEVICE:-}" ]; then environment+=" export GROUPSIM_DEVICE=$(quote "$GROUPSIM_DEVICE");"; fi
# The session runs the cloud itself (below): the apps must not start one
# in the background, which would outlive the session.
if [ "$cloud" = 1 ]; then environment+=" export GROUPSIM_CLOUD_AUTOSTART=0;"; fi
shell="$environment exec \"\${SHELL:-bash}\""

tips=(
  "Simulation root: $GROUPSIM_ROOT (GROUPSIM_ROOT is exported in every pane)"
  ""
  "Things to try here:"
  "  $bin/intent-extension AddNote text=hello"
  "  $bin/intent-extension CountNote"
  "  $bin/intent-extension SetLastNote 'text=buy milk'"
  "  $bin/groupsim defaults write $group theme dark"
  "  $bin/groupsim defaults read $group"
  "In the main-app pane: set theme dark, get theme, dump, help, quit."
)
if [ "$cloud" = 1 ]; then
  manifest=$repo/scenarios/cloud/apps/synced-notes.yaml
  for device in iPhone iPad; do
    "$bin/groupsim" device create "$device" 2>/dev/null || true
    "$bin/groupsim" cloud account sign-in alice --device "$device"
  done
  tips=(
    "Simulation root: $GROUPSIM_ROOT; iPhone and iPad are signed in to the iCloud account alice"
    ""
    "Things to try:"
    "  iPhone app pane: set sync-theme dark       (the bridge uploads it; the iPad widget shows it)"
    "  iPhone app pane: kvs set note hello        (the iPad app prints the iCloud server-change)"
    "  $bin/groupsim cloud status"
    "  $bin/groupsim cloud network --device iPad offline   (then write on the iPhone, then: online)"
    "  $bin/groupsim cloud network --device iPad latency 500"
    "  $bin/groupsim cloud account sign-out --device iPad"
    "The cloud and the agents print what they do in the window 'cloud' (Ctrl-b n)."
    "When done: tmux kill-session -t $session   (the cloud and the agents end with it)"
  )
fi
tip_command="printf '%s\\n'"
for line in "${tips[@]}"; do tip_command+=" $(quote "$line")"; done

tmux kill-session -t "$session" 2>/dev/null || true

size=()
if [ -t 1 ] && columns=$(tput cols 2>/dev/null) && lines=$(tput lines 2>/dev/null); then
  size=(-x "$columns" -y "$lines")
fi
app=$(tmux new-session -d -s "$session" -n notes -c "$repo" ${size[@]+"${size[@]}"} -P -F '#{pane_id}' "$shell")
widget=$(tmux split-window -h -t "$app" -c "$repo" -P -F '#{pane_id}' "$shell")
watch=$(tmux split-window -v -t "$app" -c "$repo" -P -F '#{pane_id}' "$shell")
console=$(tmux split-window -v -t "$widget" -c "$repo" -P -F '#{pane_id}' "$tip_command; $shell")
tmux set-environment -t "$session" GROUPSIM_ROOT "$GROUPSIM_ROOT"   # for windows opened later
if [ "$cloud" = 1 ]; then
  # The cloud and the agents in the foreground of a window of their own, each
  # tied to the window's shell (GROUPSIM_OWNER_PID: the kernel ends them when
  # it ends), so closing the session, however it is closed, ends them too.
  daemons="$environment export GROUPSIM_OWNER_PID=\$\$; $bin/groupsim cloud serve &"
  for device in iPhone iPad; do daemons+=" $bin/groupsim cloud agent --device $device &"; done
  tmux new-window -d -t "$session" -n cloud -c "$repo" "$daemons wait"
fi

# Pane titles on the borders, where this tmux supports them (2.6 and later).
if [ "$cloud" = 1 ] && tmux select-pane -t "$app" -T "main-app on iPhone" 2>/dev/null; then
  tmux select-pane -t "$widget" -T "widget on iPad"
  tmux select-pane -t "$watch" -T "main-app on iPad"
  tmux select-pane -t "$console" -T "shell: groupsim cloud"
  tmux set-option -w -t "$session" pane-border-status top 2>/dev/null || true
  tmux set-option -w -t "$session" pane-border-format ' #{pane_title} ' 2>/dev/null || true
elif tmux select-pane -t "$app" -T main-app 2>/dev/null; then
  tmux select-pane -t "$widget" -T widget
  tmux select-pane -t "$watch" -T "defaults watch $group"
  tmux select-pane -t "$console" -T "shell: intent-extension"
  tmux set-option -w -t "$session" pane-border-status top 2>/dev/null || true
  tmux set-option -w -t "$session" pane-border-format ' #{pane_title} ' 2>/dev/null || true
fi

# Waits (up to 5 s) until a pane shows PATTERN (by default anything: the
# shell's prompt), so that what is typed next is neither echoed twice nor lost.
wait_for() {
  for _ in $(seq 50); do
    if tmux capture-pane -p -t "$1" | grep -q -- "${2:-[^[:space:]]}"; then return; fi
    sleep 0.1
  done
}
# Typed into each pane's shell, so a program can be quit and started again.
for pane in "$widget" "$watch" "$app"; do wait_for "$pane"; done
if [ "$cloud" = 1 ]; then
  tmux send-keys -t "$app" "$bin/main-app --device iPhone --manifest $(quote "$manifest")" Enter
  wait_for "$app" "type 'help'"
  tmux send-keys -t "$watch" "$bin/main-app --device iPad --manifest $(quote "$manifest")" Enter
  wait_for "$watch" "type 'help'"
  tmux send-keys -t "$widget" "$bin/widget --device iPad --manifest $(quote "$manifest")" Enter
else
  tmux send-keys -t "$widget" "$bin/widget" Enter
  tmux send-keys -t "$watch" "$bin/groupsim defaults watch $group" Enter
  tmux send-keys -t "$app" "$bin/main-app" Enter
fi
tmux select-pane -t "$console"

printf '%s\n' "${tips[@]}"
if [ "$attach" = 0 ]; then
  echo
  echo "Session $session is ready: tmux attach -t $session"
  echo "When done: tmux kill-session -t $session"
elif [ -n "${TMUX:-}" ]; then
  tmux switch-client -t "$session"
else
  tmux attach-session -t "$session"
fi
