import ArgumentParser
import DefaultsCLI
import Foundation
import GroupDefaults
import PropertyList
import SharedFiles
import Terminal

/// `groupsim-stress`: load generators and watcher probes that the tests and
/// benchmarks run as real, separate processes (several at once against one
/// domain). Not part of the product: a tool of the test suite.
package struct StressCommand: ParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "groupsim-stress",
        abstract: "Generate write load on a domain from this process, or probe the change watcher (for tests and benchmarks).",
        subcommands: [
            WatchHeld.self, WatcherWithManyDescriptors.self, WriteKeys.self, IntAdd.self, ArrayAdd.self, WriteLoop.self, WatcherRestart.self,
            WatcherUnavailable.self, HoldLock.self,
        ]
    )

    struct Target: ParsableArguments {
        @OptionGroup var location: LocationOptions
        @Option(help: "The domain written to (an app-group id or an app's bundle id).") var domain: String

        /// Opens the domain as the app that owns it would.
        func open() throws -> GroupDefaults {
            try location.simulationRoot.files().defaults(for: domain)
        }
    }

    struct WriteKeys: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "write-keys", abstract: "Set PREFIX-0 … PREFIX-(N-1), then synchronize.")
        @OptionGroup var target: Target
        @Option var prefix: String
        @Option var count: Int

        func run() throws {
            let defaults = try target.open()
            for index in 0..<count { defaults.set(.integer(Int64(index)), forKey: "\(prefix)-\(index)") }
            try defaults.flush()
        }
    }

    struct IntAdd: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "int-add", abstract: "Atomically add 1 to KEY, N times.")
        @OptionGroup var target: Target
        @Option var key: String
        @Option var count: Int

        func run() throws {
            let defaults = try target.open()
            for _ in 0..<count { try defaults.increment(key) }
        }
    }

    struct ArrayAdd: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "array-add", abstract: "Atomically append PREFIX-i to the array KEY, N times.")
        @OptionGroup var target: Target
        @Option var key: String
        @Option var prefix: String
        @Option var count: Int

        func run() throws {
            let defaults = try target.open()
            for index in 0..<count {
                try defaults.transaction { try DefaultsWriteRequest.arrayAdd(key: key, values: [.string("\(prefix)-\(index)")]).apply(to: &$0) }
            }
        }
    }

    struct WriteLoop: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "write-loop",
            abstract: "Set KEY to 1, 2, 3 … with synchronize() after each, printing 'ack N' once N is durable.")
        @OptionGroup var target: Target
        @Option var key: String
        @Option(help: "Stop after this many writes (default: until killed).") var count: Int?

        func run() throws {
            let defaults = try target.open()
            var index: Int64 = 0
            while count.map({ index < $0 }) ?? true {
                index += 1
                defaults.set(.integer(index), forKey: key)
                defaults.set(.string(String(repeating: "x", count: Int(index % 64))), forKey: "\(key)-padding")
                try defaults.flush()
                StandardOutput.write("ack \(index)\n")
            }
        }
    }

    struct HoldLock: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "hold-lock",
            abstract: "Take the domain file's lock as a writer does, print 'holding', and keep it until stdin closes (a stalled writer).")
        @OptionGroup var target: Target

        func run() throws {
            try target.location.simulationRoot.files().file(for: target.domain).update { _ in
                LineWriter.standardOutput.write("holding")
                _ = FileHandle.standardInput.readDataToEndOfFile()
            }
        }
    }

    struct WatcherRestart: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "watcher-restart",
            abstract:
                "See KEY change to 1, stop the change watcher, see KEY change to 2 in the same domain, stop again, reopen the domain, see 3 (prints each step)."
        )
        @OptionGroup var target: Target
        @Option var key: String

        func run() throws {
            let output = LineWriter.standardOutput
            func waitFor(_ value: Int64, in defaults: GroupDefaults) {
                let seen = DispatchSemaphore(value: 0)
                let observation = defaults.observe(key) { if $0.new == .integer(value) { seen.signal() } }
                ChangeWatcher.shared.waitUntilIdle()
                output.write("ready \(value)")
                seen.wait()
                observation.cancel()
                output.write("seen \(value)")
            }
            var defaults: GroupDefaults? = try target.open()
            waitFor(1, in: defaults!)
            let start = MonotonicClock.now()
            ChangeWatcher.shared.stop()
            let stopped = MonotonicClock.now() - start
            func watcherThreads() -> Int {
                ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).filter {
                    (try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8))?.hasPrefix("groupsim-watch") == true
                }.count
            }
            // stop() returns when the thread has finished its work; it may take
            // a moment more to leave the task list (bounded: one second).
            let deadline = MonotonicClock.now() + 1_000_000_000
            while watcherThreads() > 0 && MonotonicClock.now() < deadline { usleep(1_000) }
            output.write("stopped in \(stopped / 1_000) us, watcher threads \(watcherThreads())")
            // The domain still open is watched again once the watcher is used again.
            waitFor(2, in: defaults!)
            // A domain opened after another stop starts a new watcher thread.
            ChangeWatcher.shared.stop()
            defaults = nil
            defaults = try target.open()
            waitFor(3, in: defaults!)
        }
    }

    struct WatcherUnavailable: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "watcher-unavailable",
            abstract: "Open the domain, then wait for the change watcher and pause it; prints each step (run where inotify cannot start).")
        @OptionGroup var target: Target

        func run() throws {
            let output = LineWriter.standardOutput
            let defaults = try target.open()
            output.write("idle \(ChangeWatcher.shared.waitUntilIdle(timeout: 60))")
            ChangeWatcher.shared.pause()()
            output.write("paused and resumed")
            _ = defaults
        }
    }

    struct WatchHeld: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "watch-held",
            abstract:
                "`defaults watch` whose watcher thread is held once ready, until a line arrives on stdin (events queue up in the kernel and overflow)."
        )
        @OptionGroup var options: DomainOptions
        @Flag(help: "One JSON object per line.") var json = false
        @Argument var domain: String

        func run() throws {
            try DomainWatch.run(options: options, json: json, domain: domain, keys: []) {
                let resume = ChangeWatcher.shared.pause()
                _ = readLine()
                resume()
            }
        }
    }

    struct WatcherWithManyDescriptors: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "watcher-with-many-descriptors",
            abstract: "Hold descriptors up to FD_SETSIZE, then open the domain and write to it (the watcher must refuse, not crash).")
        @OptionGroup var target: Target

        func run() throws {
            var limit = rlimit()
            getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
            let wanted = rlim_t(FD_SETSIZE) + 64
            guard limit.rlim_max >= wanted else {
                print("cannot hold \(wanted) descriptors: the hard limit is \(limit.rlim_max)")
                throw ExitCode(3)
            }
            limit.rlim_cur = max(limit.rlim_cur, wanted)
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
            var held: [Int32] = []
            while true {
                let descriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else { throw ExitCode(4) }
                held.append(descriptor)
                if descriptor >= Int32(FD_SETSIZE) { break }
            }
            let defaults = try target.open()
            ChangeWatcher.shared.waitUntilIdle()
            defaults.set("written", forKey: "k")
            try defaults.flush()
            print("written with \(held.count) descriptors held")
        }
    }

    package init() {}
}
