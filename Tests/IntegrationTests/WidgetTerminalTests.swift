import ChildProcess
import Foundation
import TestSupport
import Testing

/// The widget's card as a person sees it: the real `widget` executable in a
/// real terminal (a tmux pane running a shell), typed into and read back.
@Suite struct WidgetTerminalTests {
    static let tmux = ExternalTool("tmux", candidates: ["/usr/bin/tmux", "/usr/local/bin/tmux"])

    let folder = TemporaryRoot()

    @Test(.enabled(if: tmux.shouldRun, tmux.missing))
    func quittingTheWidgetLeavesTheCursorWhereItWasNotAtTheTopLeft() throws {
        guard let tmux = Self.tmux.located() else { return }
        let tmp = folder.path + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        let pane = try TerminalPane(
            tmux: tmux, socket: folder.path + "/tmux",
            environment: ["GROUPSIM_ROOT": folder.path + "/root", "TMPDIR": tmp, "NO_COLOR": "1"])
        defer { pane.close() }
        try pane.waitForScreen("the shell's prompt") { $0.contains("$") }

        try pane.type(TerminalPane.quote(BuiltExecutable.path("widget")))
        // The card at the top (box and footer), then the prompt below it.
        try pane.waitForScreen("the widget's card and prompt") { screen in
            screen.first?.hasPrefix("┌") == true && screen.contains { $0.hasPrefix("rendered (") } && screen.contains("widget>")
        }
        // A few commands, so that the cursor is well below the card.
        for count in 1...3 {
            try pane.type("watch on")
            try pane.waitForScreen("answer \(count) to watch on") { screen in
                screen.filter { $0 == "live changes on" }.count == count && screen.last { !$0.isEmpty } == "widget>"
            }
        }
        let before = try pane.cursor()
        let cardRows = try pane.screen().firstIndex { $0.hasPrefix("rendered (") } ?? 0
        #expect(before.row > cardRows + 4, "the cursor is at row \(before.row), not below the card")

        try pane.type("quit")
        // The widget's last line, then the shell's prompt on the next row (before typing, so the line is not echoed early).
        try pane.waitForScreen("the widget's exit line and the shell's prompt") { screen in
            guard let exit = screen.lastIndex(where: { $0.contains("exit 0") }), exit + 1 < screen.count else { return false }
            return screen[exit + 1].hasPrefix("$")
        }
        try pane.type("echo MARK")
        let screen = try pane.waitForScreen("the shell's echo") { $0.contains { $0.hasPrefix("MARK") } }
        // The shell goes on under the last line the widget printed, not over its card at the top.
        let markRow = screen.firstIndex { $0.hasPrefix("MARK") } ?? -1
        #expect(
            markRow > before.row, "MARK is at row \(markRow), the cursor was at row \(before.row) before quit:\n\(screen.joined(separator: "\n"))")
        #expect(screen.first?.hasPrefix("┌") == true, "the card's top was overwritten:\n\(screen.joined(separator: "\n"))")
    }
}

/// One 80×24 tmux pane running `sh`, on a tmux server of its own (its own
/// socket, no configuration file), so no running tmux is touched.
struct TerminalPane {
    let tmux: String
    let socket: String

    init(tmux: String, socket: String, environment: [String: String]) throws {
        self.tmux = tmux
        self.socket = socket
        // The shell's environment is set in its command: the server's own is the test's.
        let variables = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.quote($0.value))" }
        let shell = (["env", "-u", "ENV", "-u", "GROUPSIM_DEVICE", "PS1='$ '"] + variables + ["/bin/sh"]).joined(separator: " ")
        try startServer(["-f", "/dev/null", "new-session", "-d", "-s", "pane", "-x", "80", "-y", "24", shell], log: socket + ".log")
    }

    /// Runs the tmux client that starts the server (a daemon, forked from
    /// it) detached, not with Foundation's `Process`: the server would inherit
    /// the socket by which `Process` learns that its child exited (the wait
    /// for the client would last as long as the server) and this thread's
    /// blocked signals (the server would never see its shell exit).
    private func startServer(_ arguments: [String], log: String) throws {
        let environment = ProcessInfo.processInfo.environment.filter { $0.key != "TMUX" }
        let pid = try DetachedProcess.start(
            tmux, ["-S", socket] + arguments, log: log, appending: false, newSession: false, environment: environment)
        let deadline = Date().addingTimeInterval(20)
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) != pid {
            guard Date() < deadline else {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                throw TerminalError(description: "tmux new-session did not finish within 20 s")
            }
            usleep(20_000)  // a child's exit has no descriptor to wait on here
        }
        guard status == 0 else {
            let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw TerminalError(description: "tmux new-session failed (wait status \(status)): \(said)")
        }
    }

    /// tmux on this pane's server (without TMUX, which would point at a tmux the tests run in).
    @discardableResult
    func run(_ arguments: [String]) throws -> ProcessResult {
        try runBounded("/usr/bin/env", ["-u", "TMUX", tmux, "-S", socket] + arguments, timeout: 20)
    }

    /// Types a line and Enter.
    func type(_ line: String) throws {
        try run(["send-keys", "-t", "pane", "-l", line])
        try run(["send-keys", "-t", "pane", "Enter"])
    }

    /// The screen's rows, top to bottom (trailing blanks trimmed by tmux).
    func screen() throws -> [String] {
        let captured = try run(["capture-pane", "-p", "-t", "pane"])
        return captured.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    func cursor() throws -> (column: Int, row: Int) {
        let said = try run(["display-message", "-p", "-t", "pane", "#{cursor_x} #{cursor_y}"]).trimmedOutput.split(separator: " ")
        guard said.count == 2, let column = Int(said[0]), let row = Int(said[1]) else {
            throw TerminalError(description: "tmux did not say where the cursor is: \(said)")
        }
        return (column, row)
    }

    /// Reads the screen until `done` holds for it; fails with the last screen after `timeout` seconds.
    @discardableResult
    func waitForScreen(_ what: String, timeout: TimeInterval = 30, until done: ([String]) -> Bool) throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let rows = try screen()
            if done(rows) { return rows }
            guard Date() < deadline else {
                throw TerminalError(description: "no \(what) on the screen within \(timeout) s; it shows:\n\(rows.joined(separator: "\n"))")
            }
            usleep(20_000)  // the terminal has no change notification to wait on: read it again shortly
        }
    }

    /// Ends the server, its shell and whatever runs in it.
    func close() { _ = try? run(["kill-server"]) }

    /// A word for sh, in single quotes.
    static func quote(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }
}

struct TerminalError: Error, CustomStringConvertible {
    let description: String
}
