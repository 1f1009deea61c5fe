import AppModel
import AppProtocol
import Foundation
import GroupDefaults
import Guarded
import PropertyList
import Terminal

/// The face for people: a prompt with commands, live change lines, and the
/// widget's card redrawn in place. Colour only on a terminal without NO_COLOR.
/// Unchecked Sendable: its variables (prompting, watching, the card area) are changed under `lock`; the rest is constant.
final class ConsoleEventSink: AppEventSink, @unchecked Sendable {
    let output: LineWriter
    let style: TerminalStyle
    let interactive: Bool
    /// False for a process run with --no-input: it takes no commands.
    let readsInput: Bool
    let prompt: String
    let role: Role
    private let lock = Locked()
    private var watching = true
    /// Set when the prompt loop starts; before that (and in one-shot processes) no prompt is drawn.
    private var prompting = false

    /// `readsInput` false: a process run in the background (`--no-input`) draws no prompt and no card area.
    init(output: LineWriter, role: Role, readsInput: Bool = true) {
        self.output = output
        style = TerminalStyle.forStandardOutput()
        self.readsInput = readsInput
        interactive = readsInput && isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1
        prompt = "\(role.rawValue)> "
        self.role = role
    }

    func setWatching(_ on: Bool) { lock.withLock { watching = on } }

    /// Prints a line above the prompt, then restores the prompt.
    func say(_ line: String) {
        if interactive && lock.withLock({ prompting }) {
            output.writeRaw("\r\u{1B}[K\(line)\n\(style.bold(prompt))")
        } else {
            output.write(line)
        }
    }

    func startPrompting() {
        lock.withLock { prompting = true }
        showPrompt()
    }

    func showPrompt() { if interactive { output.writeRaw(style.bold(prompt)) } }

    func emit(_ event: AppEvent) {
        switch event {
        case .ready(let info):
            let bundle = info["bundleId"]?.stringValue ?? "?"
            say(
                "\(style.bold(bundle)) on \(info["device"]?.stringValue ?? "?") · suite \(info["suite"]?.stringValue ?? "?")"
                    + (role == .intentExtension || !readsInput ? "" : " · type 'help' for commands"))
        case .change(let change):
            guard lock.withLock({ watching }) else { return }
            let origin = change.origin == ChangeOrigin.thisProcess.rawValue ? "this process" : "another process"
            say(
                "\(style.dim("←")) \(style.bold(change.key)): \(Self.show(change.old)) → \(style.highlight(Self.show(change.new)))  "
                    + style.dim("[\(origin)\(change.valueDomain.map { ", \($0)" } ?? "")]"))
        case .notification, .delivery:
            break  // the change line already says it; deliveries are an executable's, never a simulated role's
        case .cloudChange(let reason, let keys):
            say("\(style.dim("☁")) iCloud \(style.bold(reason)): \(keys.isEmpty ? "(no keys)" : keys.joined(separator: ", "))")
        case .render(let card, let reason, _):
            render(card, reason: reason)
        case .warning(let kind, let message):
            let banner = kind == Diagnostic.Kind.missingEntitlement.rawValue ? "MISSING ENTITLEMENT" : "warning"
            say(style.error("\(banner): \(message)"))
        case .intentResult(let intent, let key, let value, let dialog, _):
            say("\(intent): \(style.bold(key ?? "value")) = \(style.highlight(Self.show(value)))" + (dialog.map { " — \($0)" } ?? ""))
        case .error(let message):
            say(style.error("error: \(message)"))
        case .exit(let status):
            releaseCardArea()
            if interactive { output.writeRaw("\r\u{1B}[K") }
            output.write(style.dim("exit \(status)"))
        }
    }

    /// Lines at the top of the screen kept for the widget's card (0: no card area).
    private var cardLines = 0

    /// Clears the screen and keeps the top `lines` for the card: a scroll
    /// region below it makes change lines and the prompt scroll without ever
    /// passing through the card.
    func reserveCardArea(lines: Int) {
        lock.withLock { cardLines = lines }
        output.writeRaw("\u{1B}[2J\u{1B}[\(lines + 1)r\u{1B}[\(lines + 1);1H")
    }

    private func render(_ card: [CardLine], reason: String) {
        let rows = card.map { "\($0.key): \(Self.show($0.value))" }
        let width = max(24, (rows.map(\.count).max() ?? 0) + 2)
        var lines = ["┌" + String(repeating: "─", count: width) + "┐"]
        for row in rows { lines.append("│ " + row + String(repeating: " ", count: max(0, width - row.count - 1)) + "│") }
        lines.append("└" + String(repeating: "─", count: width) + "┘")
        lines.append(style.dim("rendered (\(reason)) \(Date().formatted(.iso8601.time(includingFractionalSeconds: false)))"))
        let area = lock.withLock { cardLines }
        guard area > 0 else { return output.write(lines.joined(separator: "\n")) }
        // Drawn in place at the top, outside the scroll region; the cursor goes back where it was.
        let drawn = lines.prefix(area).enumerated().map { "\u{1B}[\($0.offset + 1);1H\u{1B}[2K\($0.element)" }.joined()
        output.writeRaw("\u{1B}7" + drawn + "\u{1B}8")
    }

    /// Gives the terminal its whole screen back.
    func releaseCardArea() {
        // Resetting the scroll region moves the cursor to the top left: save and restore it around the reset.
        if lock.withLock({ cardLines }) > 0 { output.writeRaw("\u{1B}7\u{1B}[r\u{1B}8") }
    }

    static func show(_ value: PlistValue?) -> String {
        guard let value else { return "(absent)" }
        return OldStylePropertyList.describe(value).replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "    ", with: "")
    }
}

/// The console face's loop.
enum ConsoleLoop {
    static let help = """
        get KEY                         effective value and the domain it comes from
        set KEY [-TYPE] VALUE           TYPE: string int float bool date data; or -array V..., -array-add V...,
                                        -dict K V..., -dict-add K V..., -int-add N (atomic)
        remove KEY                      reveals a lower domain's value, if any
        dump                            every effective value with its domain
        register KEY [-TYPE] VALUE      adds to this process's registration domain
        add-suite NAME | remove-suite NAME
        search-list                     the domains a read looks in, in order
        sync                            commit to disk now (synchronize)
        clear                           remove every key of this process's suite for every process (asks first)
        reload                          widget: reload the timeline (re-render)
        reload-widgets                  app: ask WidgetCenter to reload every widget
        watch on|off                    live change lines
        kvs get KEY | kvs set KEY [-TYPE] VALUE | kvs remove KEY | kvs dump | kvs sync
                                        the iCloud key-value store (NSUbiquitousKeyValueStore)
        info                            identity, entitlements, search list
        quit [STATUS]
        """

    /// A widget's card is drawn at the top of the screen: clear it and keep
    /// room for the card before anything is printed.
    static func prepareScreen(for session: AppSession, sink: ConsoleEventSink) {
        guard sink.interactive, session.role == .widget else { return }
        // Box top and bottom, one row per shown key, the footer, a blank line.
        sink.reserveCardArea(lines: (session.target.widget?.shows.count ?? 0) + 4)
    }

    static func run(session: AppSession, sink: ConsoleEventSink) -> Int32 {
        sink.startPrompting()
        while let line = readLine() {
            defer { sink.showPrompt() }
            let words = split(line)
            guard let verb = words.first else { continue }
            let rest = Array(words.dropFirst())
            do {
                switch verb {
                case "help", "?": sink.output.write(help)
                case "quit", "exit": return Int32(rest.first.flatMap { Int32($0) } ?? 0)
                case "watch":
                    sink.setWatching(rest.first != "off")
                    sink.output.write("live changes \(rest.first == "off" ? "off" : "on")")
                case "clear" where rest.isEmpty: try clear(session: session, sink: sink)
                default:
                    let command = try parse(verb, rest)
                    print(try session.perform(command), sink: sink)
                }
            } catch {
                sink.output.write(sink.style.error("error: \(error)"))
            }
        }
        return 0
    }

    /// `clear` removes the shared suite's every key for every process that
    /// shares it: said first, done only on "yes", and what went is printed.
    static func clear(session: AppSession, sink: ConsoleEventSink) throws {
        let domain = session.store.domainName
        let keys = ((try? session.store.persistentDomain(forName: domain)) ?? nil)?.keys.sorted() ?? []
        guard !keys.isEmpty else { return sink.output.write("nothing to clear: \(domain) holds no keys") }
        sink.output.writeRaw(
            "clear removes every key of \(domain) for every process that shares it (\(keys.count): "
                + keys.prefix(10).joined(separator: ", ") + (keys.count > 10 ? ", …" : "") + "). Type yes to go on: ")
        guard readLine()?.trimmingCharacters(in: .whitespaces).lowercased() == "yes" else {
            return sink.output.write("not cleared")
        }
        try session.clearSuite()
        sink.output.write("removed \(keys.count) key(s) from \(domain): \(keys.joined(separator: ", "))")
    }

    static func parse(_ verb: String, _ rest: [String]) throws -> AppRequest {
        func one(_ usage: String) throws -> String {
            guard rest.count == 1 else { throw AppProtocolError.refused("usage: \(usage)") }
            return rest[0]
        }
        switch verb {
        case "get": return .get(key: try one("get KEY"))
        case "remove", "delete": return .remove(key: try one("remove KEY"))
        case "dump": return .dump
        case "sync", "synchronize": return .synchronize
        case "clear": return .clear
        case "reload": return .reloadTimeline
        case "reload-widgets": return .reloadWidgets
        case "info": return .info
        case "search-list": return .searchList
        case "kvs": return try parseCloud(rest)
        case "add-suite": return .addSuite(name: try one("add-suite NAME"))
        case "remove-suite": return .removeSuite(name: try one("remove-suite NAME"))
        case "set", "register":
            guard rest.count >= 2 else { throw AppProtocolError.refused("usage: \(verb) KEY [-TYPE] VALUE") }
            let request: DefaultsWriteRequest
            do { request = try DefaultsWriteRequest.parse(rest) } catch { throw AppProtocolError.refused("\(error)") }
            switch (verb, request) {
            case ("register", .set(let key, let value)): return .register(defaults: [key: value])
            case ("register", _): throw AppProtocolError.refused("register takes KEY [-TYPE] VALUE")
            case (_, .set(let key, let value)): return .set(key: key, value: value)
            case (_, .arrayAdd(let key, let values)): return .append(key: key, values: values)
            case (_, .dictAdd(let key, let entries)): return .mergeDictionary(key: key, entries: entries)
            case (_, .intAdd(let key, let delta)): return .increment(key: key, by: delta)
            case (_, .replaceDomain): throw AppProtocolError.refused("set needs a KEY and a VALUE")
            }
        default:
            throw AppProtocolError.refused("unknown command '\(verb)'; type 'help'")
        }
    }

    /// `kvs get KEY`, `kvs set KEY [-TYPE] VALUE`, `kvs remove KEY`, `kvs dump`, `kvs sync`.
    static func parseCloud(_ words: [String]) throws -> AppRequest {
        let usage = "usage: kvs get KEY | kvs set KEY [-TYPE] VALUE | kvs remove KEY | kvs dump | kvs sync"
        switch (words.first, words.count) {
        case ("get"?, 2): return .cloudGet(key: words[1])
        case ("remove"?, 2): return .cloudRemove(key: words[1])
        case ("dump"?, 1): return .cloudDump
        case ("sync"?, 1): return .cloudSynchronize
        case ("set"?, 3...):
            let request: DefaultsWriteRequest
            do { request = try DefaultsWriteRequest.parse(Array(words.dropFirst())) } catch { throw AppProtocolError.refused("\(error)") }
            guard case .set(let key, let value) = request else { throw AppProtocolError.refused(usage) }
            return .cloudSet(key: key, value: value)
        default:
            throw AppProtocolError.refused(usage)
        }
    }

    static func print(_ result: AppResponse, sink: ConsoleEventSink) {
        switch result {
        case .done: break
        case .value(let key, let value, let domain):
            sink.output.write("\(key) = \(ConsoleEventSink.show(value))" + (domain.map { sink.style.dim("  (from \($0))") } ?? ""))
        case .values(let entries):
            let width = entries.map(\.key.count).max() ?? 0
            for entry in entries {
                sink.output.write(
                    entry.key.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                        + ConsoleEventSink.show(entry.value) + sink.style.dim("  (\(entry.domain))"))
            }
        case .integer(let value): sink.output.write("\(value)")
        case .boolean(let value): sink.output.write(value ? "true" : "false")
        case .info(let info):
            for key in info.keys.sorted() { sink.output.write("\(key): \(ConsoleEventSink.show(info[key]))") }
        case .searchList(let names): sink.output.write(names.joined(separator: "\n"))
        case .intent(let value, let dialog, _):
            sink.output.write("value = \(ConsoleEventSink.show(value))" + (dialog.map { "; dialog: \($0)" } ?? ""))
        }
    }

    /// Splits a command line into words, honouring single and double quotes.
    static func split(_ line: String) -> [String] {
        var words: [String] = []
        var current = ""
        var quote: Character? = nil
        var inWord = false
        for character in line {
            if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "\"" || character == "'" {
                quote = character
                inWord = true
            } else if character.isWhitespace {
                if inWord {
                    words.append(current)
                    current = ""
                    inWord = false
                }
            } else {
                current.append(character)
                inWord = true
            }
        }
        if inWord { words.append(current) }
        return words
    }
}
