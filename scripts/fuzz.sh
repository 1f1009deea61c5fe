#!/usr/bin/env bash
# Builds the libFuzzer targets (Fuzz/) and runs each for a bounded time.
#
#   scripts/fuzz.sh                       # about a minute in all (CI)
#   scripts/fuzz.sh --minutes 30          # a longer run, shared between the targets
#   scripts/fuzz.sh --seconds 120 xml     # some targets only
#   scripts/fuzz.sh --reproduce xml FILE  # run one input through a target
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
targets=()
reproduce=()
whole_number() {
  [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "error: $1 needs a whole number" >&2; exit 2; }
}
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) whole_number "$@"; total_seconds=$(( $2 * 60 )); shift 2 ;;
    --seconds) whole_number "$@"; total_seconds=$2; shift 2 ;;
    --reproduce)
      [ $# -ge 3 ] || { echo "error: --reproduce needs a target and a file" >&2; exit 2; }
      reproduce=("$2" "$3"); shift 3 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
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

if [ ${#reproduce[@]} -gt 0 ]; then
  GROUPSIM_FUZZ_TARGET="${reproduce[0]}" exec "$fuzzer" "${reproduce[1]}"
fi

per_target=$(( total_seconds / ${#targets[@]} ))
[ "$per_target" -ge 1 ] || per_target=1
failed=()
summary=()
for target in "${targets[@]}"; do
  corpus="$scratch/corpus/$target"
  crashes="$scratch/crashes/$target"
  log="$scratch/logs/$target.log"
  mkdir -p "$corpus" "$crashes" "$(dirname "$log")"
  seeds=("Fuzz/corpus/$target")
  # The scenario library is the scenario target's best seed, with the hostile ones beside it.
  [ "$target" = scenario ] && seeds=(scenarios "Fuzz/corpus/scenario")
  dict=()
  [ -f "Fuzz/dictionaries/$target.dict" ] && dict=("-dict=Fuzz/dictionaries/$target.dict")
  echo "==> fuzzing $target for ${per_target}s"
  status=0
  # New inputs go to the first folder (under $scratch); the seed folders are only read.
  GROUPSIM_FUZZ_TARGET="$target" "$fuzzer" \
    -max_total_time="$per_target" -timeout=30 -rss_limit_mb=4096 -max_len=16384 \
    -print_final_stats=1 -artifact_prefix="$crashes/" "${dict[@]}" \
    "$corpus" "${seeds[@]}" > "$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [ "$status" -ne 0 ]; then
    failed+=("$target")
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    echo "    FAILED (exit $status) after ${runs:-?} runs; log: $log"
    grep -E "Fatal error|property broken|ERROR: libFuzzer|==ERROR|SUMMARY" "$log" | head -5 | sed 's/^/    /' || true
    if [ -n "$artifact" ]; then
      echo "    failing input: $artifact"
      echo "    replay: scripts/fuzz.sh --reproduce $target $artifact"
    fi
    summary+=("$target: FAILED after ${runs:-?} runs")
  else
    echo "    ok: ${runs:-?} runs"
    summary+=("$target: ok, ${runs:-?} runs in ${per_target}s")
  fi
done

echo "==> fuzz summary"
printf '    %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "error: fuzzing found failures in: ${failed[*]} (inputs under $scratch/crashes/; add each, once fixed, to Fuzz/corpus/<target>)" >&2
  exit 1
fi
