#!/usr/bin/env bash
# Thread Sanitizer over the tests of the concurrent parts: the defaults
# library (its commit, notification and watcher threads, released domains),
# the iCloud key-value store's device copy and ledger, the Foundation face,
# the multi-process propagation and concurrent-writer tests (whose
# executables are built with TSan too), the child processes' owners
# (RunningProcess, the parent-death tie), the scenario runner (with real
# processes, and its logic over scripted ones), the cloud's
# processes (three serialized suites, run beside each other as in the
# debug run: their tests wait on the cloud and agents far more than they
# compute), the widget host and the App Intents runner in users' programs
# (their timers, queues and intent threads), and the testing library. A
# report of a race fails the run.
# Its own build folder: a sanitized build shares nothing with the debug one.
# --build-only builds and stops (CI starts the build early, at low priority).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
# Every sanitized process, the tests' children too (the cloud, agents, roles), writes its report to a file of its
# own (log_path: report.PID): a child that stops at a race (halt_on_error) would otherwise say why only on a stderr
# the test may not show, and its test fail as a timeout. The reports are printed, and fail the run, at the end.
reports="$PWD/.build/reports/tsan"
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan-suppressions.txt log_path=$reports/report ${TSAN_OPTIONS:-}"
echo "==> building with --sanitize=thread (.build-tsan)"
swift build --build-tests --sanitize=thread --scratch-path .build-tsan
[ "${1:-}" = --build-only ] && exit 0
# Two lanes of suite groups run beside each other, each lane one group at a
# time: under TSan everything runs several times slower, but the process
# suites mostly wait on their children (the scenario runner's and the cloud's
# use about half a core), so each lane pairs waiting groups with computing
# ones. Measured on the 2-core machine (wall, CPU): the scenario runner's
# 149 s / 83 s and the cloud's 169 s / 95 s; CloudTests 66 s / 67 s. The
# lanes took 198 s and 211 s beside each other (one group at a time: 377 s).
# Each lane's output goes to .build/reports/tsan-lane-N.log and is printed
# when the lane ends; a failed lane fails the run once both have ended.
lanes=(
    "IntegrationTests\.(ScenarioRunnerTests|RunnerScaleTests)/
CloudTests
GroupDefaultsTests
SimulatedFoundationTests
RunnerLogicTests
GroupSimTestingTests
ExamplesTests\.(WidgetHostProcessTests|InteractiveWidgetProcessTests|AppIntentProcessTests)/"
    "IntegrationTests\.(CloudProcessTests|CloudFaultProcessTests|CloudTrustTests)/
IntegrationTests\.(PropagationTests|ConcurrentWriterTests|RunningProcessTests|OwnerLifetimeTests)/"
)
rm -rf "$reports"
mkdir -p "$reports"
# `run_lane N GROUPS`: the groups (one per line) one at a time; stops at the first that fails.
run_lane() {
    local suites
    while IFS= read -r suites; do
        echo "==> testing $suites under TSan (lane $1)"
        local started=$SECONDS
        # --ignore-lock: SwiftPM holds its build folder's lock for a whole `swift test`, which would run the lanes
        # one after the other; with --skip-build neither writes to the folder.
        swift test --skip-build --ignore-lock --sanitize=thread --scratch-path .build-tsan --filter "$suites" "${@:3}" || return 1
        echo "==> $suites took $(( SECONDS - started )) s"
    done <<< "$2"
}
pids=()
for index in "${!lanes[@]}"; do
    run_lane "$index" "${lanes[$index]}" "$@" > ".build/reports/tsan-lane-$index.log" 2>&1 &
    pids+=($!)
done
failed=()
for index in "${!pids[@]}"; do
    wait "${pids[$index]}" || failed+=("$index")
    echo "==> lane $index (.build/reports/tsan-lane-$index.log):"
    cat ".build/reports/tsan-lane-$index.log"
done
found_reports=("$reports"/report.*)
if [ -e "${found_reports[0]}" ]; then
    for report in "${found_reports[@]}"; do
        echo "==> Thread Sanitizer's report in $report (process ${report##*.}):"
        cat "$report"
    done
    echo "error: Thread Sanitizer reported ${#found_reports[@]} time(s) (the reports are above, and in $reports)" >&2
    exit 1
fi
if [ ${#failed[@]} -gt 0 ]; then
    echo "error: Thread Sanitizer's lane(s) ${failed[*]} failed (their logs are above)" >&2
    exit 1
fi
