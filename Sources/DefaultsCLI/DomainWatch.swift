import AppProtocol
import Foundation
import GroupDefaults
import Guarded
import PropertyList
import Terminal

/// `defaults watch`'s loop, shared with the test tool that holds the watcher.
package enum DomainWatch {
    /// Prints changes until stopped. `beforeServing` runs once the watch is
    /// ready (the test tool holds the watcher thread there, to overflow its queue).
    package static func run(options: DomainOptions, json: Bool, domain: String, keys: [String], beforeServing: () -> Void = {}) throws -> Never {
        let defaults = try options.files.defaults(for: domain)
        let printer = ChangePrinter(json: json, domain: try options.files.canonical(domain), style: TerminalStyle.forStandardOutput())
        Diagnostics.setHandler { diagnostic in printer.diagnostic(diagnostic) }
        let wanted = Set(keys)
        let observation = defaults.observe(nil) { change in
            if wanted.isEmpty || wanted.contains(change.key) { printer.change(change) }
        }
        // Anything written before the watch started is reported only when it changes again.
        ChangeWatcher.shared.waitUntilIdle()
        printer.ready(path: try options.files.location(of: domain).path)
        beforeServing()
        TerminationFlush.install()
        withExtendedLifetime(observation) { dispatchMain() }
    }
}

/// Writes change lines to stdout, one at a time (changes arrive on the notification queue).
/// Unchecked Sendable: constants, and output written under `lock`.
final class ChangePrinter: @unchecked Sendable {
    let json: Bool
    let domain: String
    let style: TerminalStyle
    private let lock = Locked()

    init(json: Bool, domain: String, style: TerminalStyle) {
        self.json = json
        self.domain = domain
        self.style = style
    }

    func ready(path: String) {
        if json {
            emit("{\"event\":\"ready\",\"domain\":\(PlistJSON.quote(domain)),\"path\":\(PlistJSON.quote(path)),\(time())}")
        } else {
            FileHandle.standardError.write(Data("Watching \(domain) (\(path)); Ctrl-C to stop.\n".utf8))
        }
    }

    func change(_ change: DefaultsChange) {
        let now = Date()
        if json {
            // The same change line the simulated apps write.
            emit(ControlProtocol.event(.change(ValueChange(change)), at: now))
            return
        }
        let time = now.formatted(.iso8601.time(includingFractionalSeconds: true))
        let old = change.old.map { OldStylePropertyList.describe($0) } ?? "(absent)"
        let new = change.new.map { OldStylePropertyList.describe($0) } ?? "(absent)"
        let origin = change.origin == .thisProcess ? "this process" : "another process"
        let source = change.valueDomain.map { ", \($0)" } ?? ""
        emit("\(style.dim(time))  \(style.bold(change.key)): \(old) → \(style.highlight(new))  \(style.dim("[\(origin)\(source)]"))")
    }

    func diagnostic(_ diagnostic: Diagnostic) {
        if json {
            let event = diagnostic.kind == .watcherOverflow ? "overflow" : "warning"
            emit("{\"event\":\"\(event)\",\"kind\":\"\(diagnostic.kind.rawValue)\",\"message\":\(PlistJSON.quote(diagnostic.message)),\(time())}")
        } else if diagnostic.kind == .watcherOverflow {
            emit(style.warning("! event queue overflowed: reloaded every domain from disk"))
        } else {
            FileHandle.standardError.write(Data("groupsim: warning: \(diagnostic.message)\n".utf8))
        }
    }

    private func time() -> String { "\"time\":\(PlistJSON.quote(PlistJSON.timestamp(Date())))" }

    private func emit(_ line: String) {
        lock.withLock { StandardOutput.write(line + "\n") }
    }
}
