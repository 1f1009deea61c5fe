#!/usr/bin/env bash
# Thread Sanitizer over the tests of the concurrent parts: the defaults
# library (its commit, notification and watcher threads, released domains),
# the iCloud key-value store's device copy and ledger, the Foundation face,
# the multi-process propagation and concurrent-writer tests (whose
# executables are built with TSan too), the child processes' owners
# (RunningProcess, the parent-death tie), the scenario runner, the cloud's
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
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan-suppressions.txt ${TSAN_OPTIONS:-}"
echo "==> building with --sanitize=thread (.build-tsan)"
swift build --build-tests --sanitize=thread --scratch-path .build-tsan
[ "${1:-}" = --build-only ] && exit 0
# One suite group at a time: under TSan everything runs several times slower,
# and the groups' threads and processes would otherwise share the two cores.
for suites in GroupDefaultsTests CloudTests SimulatedFoundationTests \
    'IntegrationTests\.(PropagationTests|ConcurrentWriterTests|RunningProcessTests|OwnerLifetimeTests)/' \
    'IntegrationTests\.(ScenarioRunnerTests|RunnerScaleTests)/' \
    'IntegrationTests\.(CloudProcessTests|CloudFaultProcessTests|CloudTrustTests)/' \
    'ExamplesTests\.(WidgetHostProcessTests|InteractiveWidgetProcessTests|AppIntentProcessTests)/' \
    GroupSimTestingTests; do
    echo "==> testing $suites under TSan"
    swift test --skip-build --sanitize=thread --scratch-path .build-tsan --filter "$suites" "$@"
done
