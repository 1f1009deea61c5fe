#!/usr/bin/env bash
# Builds the libFuzzer targets (Fuzz/) and runs each for a bounded time.
#
#   scripts/fuzz.sh                       # about a minute in all (CI)
#   scripts/fuzz.sh --minutes 30          # a longer run, shared between the targets
#   scripts/fuzz.sh --seconds 120 xml     # some targets only
#   scripts/fuzz.sh --jobs 2              # two targets at a time (each keeps its share of the time)
#   scripts/fuzz.sh --reproduce xml FILE  # run one input through a target
#   scripts/fuzz.sh --build-only          # build the fuzz targets and stop
#
# Targets: binary, xml, old-style, launch-arguments, control-protocol, scenario, sync-message, cloud-file.
# Each starts from its seed corpus (Fuzz/corpus/<target>, kept in the
# repository) plus what earlier runs found (.build-fuzz/corpus/<target>).
# Exits non-zero if any target crashed, hung or broke a property, and prints
# where the failing input was saved and how to replay it. Docs: docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/.."

all_targets=(binary xml old-style launch-arguments control-protocol scenario sync-message cloud-file)
total_seconds=60
jobs=1
targets=()
reproduce=()
build_only=0
whole_number() {
  [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "error: $1 needs a whole number" >&2; exit 2; }
}
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) whole_number "$@"; total_seconds=$(( $2 * 60 )); shift 2 ;;
    --seconds) whole_number "$@"; total_seconds=$2; shift 2 ;;
    --jobs) whole_number "$@"; jobs=$2; [ "$jobs" -ge 1 ] || jobs=1; shift 2 ;;
    --reproduce)
      [ $# -ge 3 ] || { echo "error: --reproduce needs a target and a file" >&2; exit 2; }
      reproduce=("$2" "$3"); shift 3 ;;
    --build-only) build_only=1; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    -*) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
    *)
      if [[ " ${all_targets[*]} " != *" $1 "* ]]; then
        echo "error: unknown target '$1'; targets: ${all_targets[*]}" >&2; exit 2
      fi
      targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")

source scripts/setup.sh
# Swift's own crash reporter would take the signal before libFuzzer, which
# then saves no failing input.
export SWIFT_BACKTRACE=enable=no

scratch=.build-fuzz
fuzzer="$scratch/release/groupsim-fuzz"
echo "==> building the fuzz targets (release, -sanitize=fuzzer, in $scratch)"
build_start=$SECONDS
GROUPSIM_FUZZ=1 swift build -c release --sanitize=fuzzer --scratch-path "$scratch" --product groupsim-fuzz
echo "    built in $(( SECONDS - build_start ))s"
[ "$build_only" = 0 ] || exit 0

if [ ${#reproduce[@]} -gt 0 ]; then
  GROUPSIM_FUZZ_TARGET="${reproduce[0]}" exec "$fuzzer" "${reproduce[1]}"
fi

per_target=$(( total_seconds / ${#targets[@]} ))
[ "$per_target" -ge 1 ] || per_target=1
# One target's run: its log, its verdict in $scratch/results/<target> ("ok …" or
# "FAILED …"), and what to do about a failure on stdout, printed as one block.
fuzz_one() {
  local target=$1
  local corpus="$scratch/corpus/$target" crashes="$scratch/crashes/$target" log="$scratch/logs/$target.log"
  mkdir -p "$corpus" "$crashes" "$(dirname "$log")"
  local seeds=("Fuzz/corpus/$target")
  # The scenario library is the scenario target's best seed, with the hostile ones beside it.
  [ "$target" = scenario ] && seeds=(scenarios "Fuzz/corpus/scenario")
  local dict=()
  [ -f "Fuzz/dictionaries/$target.dict" ] && dict=("-dict=Fuzz/dictionaries/$target.dict")
  local status=0
  # New inputs go to the first folder (under $scratch); the seed folders are only read.
  GROUPSIM_FUZZ_TARGET="$target" "$fuzzer" \
    -max_total_time="$per_target" -timeout=30 -rss_limit_mb=4096 -max_len=16384 \
    -print_final_stats=1 -artifact_prefix="$crashes/" "${dict[@]}" \
    "$corpus" "${seeds[@]}" > "$log" 2>&1 || status=$?
  local runs
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  local report="==> fuzzed $target for ${per_target}s"
  if [ "$status" -ne 0 ]; then
    local artifact
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    report+=$'\n'"    FAILED (exit $status) after ${runs:-?} runs; log: $log"
    report+=$'\n'"$(grep -E "Fatal error|property broken|ERROR: libFuzzer|==ERROR|SUMMARY" "$log" | head -5 | sed 's/^/    /' || true)"
    if [ -n "$artifact" ]; then
      report+=$'\n'"    failing input: $artifact"$'\n'"    replay: scripts/fuzz.sh --reproduce $target $artifact"
    fi
    echo "$target: FAILED after ${runs:-?} runs" > "$scratch/results/$target"
  else
    report+=$'\n'"    ok: ${runs:-?} runs"
    echo "$target: ok, ${runs:-?} runs in ${per_target}s" > "$scratch/results/$target"
  fi
  echo "$report"
}

rm -rf "$scratch/results"
mkdir -p "$scratch/results"
echo "==> fuzzing ${#targets[@]} targets, ${per_target}s each, $jobs at a time"
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$(( running - 1 ))
  fi
  fuzz_one "$target" &
  running=$(( running + 1 ))
done
wait

failed=()
summary=()
for target in "${targets[@]}"; do
  result=$(cat "$scratch/results/$target" 2>/dev/null || echo "$target: FAILED (no result)")
  summary+=("$result")
  [[ "$result" == *FAILED* ]] && failed+=("$target")
done

echo "==> fuzz summary"
printf '    %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "error: fuzzing found failures in: ${failed[*]} (inputs under $scratch/crashes/; add each, once fixed, to Fuzz/corpus/<target>)" >&2
  exit 1
fi
