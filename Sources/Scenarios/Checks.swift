import AppModel
import Foundation
import GroupDefaults
import PropertyList
import ScenarioModel

/// The `expect` checks of a run: on the processes (through requests and the
/// events they emitted), on the plists on disk, and, through the rig, on the cloud.
struct CheckVerifier {
    let context: RunContext
    let roster: ProcessRoster
    let cloud: () throws -> CloudRig

    func verify(_ check: Check) throws {
        switch check {
        case .value(let process, let key, let value, let domain, let suite):
            let response = try roster.driver(process).request(.get(key: key), suite: context.scenario.suiteName(of: process, suite))
            let found = response.response?.value
            let foundDomain = response.response?.domain
            if let value, found != value {
                throw ScenarioRunError.check(
                    "\(process): \(key) should be \(showValue(value)), found \(showValue(found))" + (foundDomain.map { " (from \($0))" } ?? ""))
            }
            if let domain, foundDomain != domain {
                throw ScenarioRunError.check(
                    "\(process): \(key) should come from \(domain), found \(foundDomain ?? "no domain") (value \(showValue(found)))")
            }
        case .saw(let process, let matcher, let times):
            try verifySaw(process, matcher, times: times)
        case .notSaw(let process, let matcher):
            let driver = try roster.lastDriver(process)
            try driver.catchUp(on: matcher)
            if let seen = driver.seen(matcher).first {
                throw ScenarioRunError.check("\(process) should not have seen \(matcher), but saw: \(seen.text)")
            }
        case .card(let process, let expected):
            try verifyCard(process, expected)
        case .readyInfo(let process, let expected):
            try verifyReady(process, expected)
        case .file(let fileCheck):
            try verifyFile(fileCheck)
        case .acknowledged(let process):
            try verifyAcknowledged(process)
        case .typedValue(let process, let key, let kind, let value, let suite):
            let found = try roster.driver(process).request(.typedGet(key: key, as: kind), suite: context.scenario.suiteName(of: process, suite))
                .response?.value
            guard found == value else {
                throw ScenarioRunError.check(
                    "\(process): \(kind.rawValue)(forKey: \(key)) should return \(showValue(value)), it returns \(showValue(found))")
            }
        case .forced(let process, let key, let domain, let expected, let suite):
            let answer = try roster.driver(process).request(.forced(key: key, domain: domain), suite: context.scenario.suiteName(of: process, suite))
                .response
            let call = "objectIsForced(forKey: \"\(key)\"" + (domain.map { ", inDomain: \"\($0)\"" } ?? "") + ")"
            guard case .bool(let found)? = answer?.value else {
                throw ScenarioRunError.check("\(process): \(call) answered \(showValue(answer?.value)), not true or false")
            }
            guard found == expected else { throw ScenarioRunError.check("\(process): \(call) should be \(expected), it is \(found)") }
        case .cloudValueIn(let process, let key, let value):
            let found = try roster.driver(process).request(.cloudGet(key: key)).response?.value
            guard found == value else {
                throw ScenarioRunError.check("\(process)'s iCloud store: \(key) should be \(showValue(value)), found \(showValue(found))")
            }
        case .cloud(let cloudCheck):
            try cloud().verify(cloudCheck)
        case .searchList(let process, let expected, let suite):
            // A suite's search list is its instance's (`search-list` request); the info's is `.standard`'s.
            let found: [String]
            if let suite = context.scenario.suiteName(of: process, suite) {
                found =
                    try roster.driver(process).request(.searchList, suite: suite).response?.fields["searchList"]?.arrayValue?.compactMap(
                        \.stringValue) ?? []
            } else {
                let info = try roster.driver(process).request(.info).response?.fields["info"]?.dictionaryValue
                found = (info?["searchList"]?.arrayValue ?? []).compactMap(\.stringValue)
            }
            guard found == expected else {
                throw ScenarioRunError.check(
                    "\(process)'s search list should be \(expected.joined(separator: ", ")), it is \(found.joined(separator: ", "))")
            }
        case .output(let process, let contains, let pattern, let stream):
            try verifyOutput(process, contains: contains, pattern: pattern, stream: stream)
        case .exit(let process, let status):
            let target = try roster.lastDriver(process)
            guard let found = target.waitForExit(timeout: RunnerTimeouts.exit) else {
                throw ScenarioRunError.check("\(process) is still running; expected it to have exited with \(status)")
            }
            guard found == status else { throw ScenarioRunError.check("\(process) exited with status \(found), expected \(status)") }
        }
    }

    /// A kept line of the process's output contains the text or matches the pattern.
    private func verifyOutput(_ process: String, contains: String?, pattern: String?, stream: String?) throws {
        let driver = try roster.lastDriver(process)
        try driver.catchUpOutput()
        let (lines, dropped) = driver.keptOutput()
        let wanted = stream.flatMap(OutputLine.Stream.init(rawValue:))
        let regex = try pattern.map { try NSRegularExpression(pattern: $0) }
        let found = lines.contains { line in
            if let wanted, line.stream != wanted { return false }
            if let contains, !line.text.contains(contains) { return false }
            if let regex { return OutputMatcher(regex: regex, stream: nil).matches(line) }
            return true
        }
        guard !found else { return }
        let what = [contains.map { "containing \(PlistJSON.quote($0))" }, pattern.map { "matching /\($0)/" }].compactMap { $0 }.joined(
            separator: " and ")
        throw ScenarioRunError.check(
            "\(process) wrote no line \(what)\(stream.map { " on \($0)" } ?? "")"
                + (dropped > 0 ? " among its last \(lines.count) (\(dropped) earlier lines were dropped)" : "") + driver.lastLines)
    }

    private func verifySaw(_ process: String, _ matcher: EventMatcher, times: CountBound?) throws {
        let driver = try roster.lastDriver(process)
        try driver.catchUp(on: matcher)
        let count = driver.seen(matcher).count
        if let times, !times.holds(for: count) {
            throw ScenarioRunError.check("\(process) should have seen \(matcher) \(times), saw it \(count) time(s)")
        }
        guard count > 0 || times != nil else {
            throw ScenarioRunError.check("\(process) should have seen \(matcher), and did not")
        }
    }

    /// What the process's last launch said as it became ready (`launch: prewarm`, `protectedData: unavailable` …).
    private func verifyReady(_ process: String, _ expected: [String: PlistValue?]) throws {
        let driver = try roster.lastDriver(process)
        guard case .ready(let info)? = driver.recordedEvents().last(where: { $0.name == "ready" })?.appEvent else {
            throw ScenarioRunError.check("\(process) has not said ready")
        }
        for key in expected.keys.sorted() where info[key] != expected[key]! {
            throw ScenarioRunError.check("\(process)'s ready should say \(key) = \(showValue(expected[key]!)), it says \(showValue(info[key]))")
        }
    }

    private func verifyCard(_ process: String, _ expected: [String: PlistValue?]) throws {
        let driver = try roster.lastDriver(process)
        try driver.catchUpEvents()
        guard let render = driver.recordedEvents().last(where: { $0.name == "render" }) else {
            throw ScenarioRunError.check("\(process) has not rendered")
        }
        let shown = render.appEvent.map(EventMatcher.card(of:)) ?? [:]
        for key in expected.keys.sorted() where (shown[key] ?? nil) != expected[key]! {
            throw ScenarioRunError.check(
                "\(process)'s card should show \(key) = \(showValue(expected[key]!)), it shows \(showValue(shown[key] ?? nil)) (last render: \(render.text))"
            )
        }
    }

    /// Every burst value whose synchronize was acknowledged is on disk (or, for a counter, something later).
    private func verifyAcknowledged(_ process: String) throws {
        let writes = try roster.lastDriver(process).acknowledgedWrites()
        guard !writes.isEmpty else { throw ScenarioRunError.check("\(process) had no acknowledged burst writes to check") }
        let spec = context.scenario.processes[process]!
        let target = try context.scenario.app.target(spec.role)
        let files = DomainFiles(
            root: SimulationRoot(path: context.root), device: spec.device, app: target.usesStandardDefaults ? target.bundleIdentifier : nil)
        let suite = target.usesStandardDefaults ? target.bundleIdentifier : target.suite
        let contents = try files.read(suite) ?? [:]
        var last: [String: PlistValue] = [:]
        for write in writes { last[write.key] = write.value }
        for (key, value) in last {
            let stored = contents[key]
            let fine =
                stored == value
                || {
                    if case .integer(let s)? = stored, case .integer(let v) = value { return s >= v }
                    return false
                }()
            if !fine {
                throw ScenarioRunError.check(
                    "\(key) = \(showValue(value)) was acknowledged (synchronize returned) but the file holds \(showValue(stored))")
            }
        }
    }

    private func verifyFile(_ check: FileCheck) throws {
        let root = context.root
        let files = DomainFiles(root: SimulationRoot(path: root), device: check.device ?? context.scenario.defaultDevice, app: check.app)
        let path = try files.location(of: check.domain).path
        let name = "\(check.domain) file (\(path.replacingOccurrences(of: root, with: "<root>")))"
        if case .movedAside = check.condition {
            let folder = (path as NSString).deletingLastPathComponent
            let base = (path as NSString).lastPathComponent
            let aside = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix(base + ".corrupt-") }
            guard !aside.isEmpty else { throw ScenarioRunError.check("no corrupt copy was moved aside beside \(name)") }
            return
        }
        let contents: [String: PlistValue]
        do {
            guard let read = try files.read(check.domain) else { throw ScenarioRunError.check("\(name) does not exist") }
            contents = read
        } catch let error as ScenarioRunError { throw error } catch {
            throw ScenarioRunError.check("\(name) is not intact: \(error)")
        }
        try Self.verify(check.condition, contents, name: name)
    }

    private static func verify(_ condition: FileCheck.Condition, _ contents: [String: PlistValue], name: String) throws {
        switch condition {
        case .value(let key, let value):
            guard contents[key] == value else {
                throw ScenarioRunError.check("\(name): \(key) should be \(showValue(value)), found \(showValue(contents[key]))")
            }
        case .absent(let key):
            if let found = contents[key] { throw ScenarioRunError.check("\(name): \(key) should be absent, found \(showValue(found))") }
        case .count(let count):
            guard contents.count == count else { throw ScenarioRunError.check("\(name) should hold \(count) keys, holds \(contents.count)") }
        case .countMatching(let pattern, let count):
            let matching = contents.keys.filter { fnmatch(pattern, $0, 0) == 0 }
            guard matching.count == count else {
                throw ScenarioRunError.check("\(name) should hold \(count) keys matching \(pattern), holds \(matching.count)")
            }
        case .length(let key, let length):
            guard let array = contents[key]?.arrayValue else {
                throw ScenarioRunError.check("\(name): \(key) should be an array, found \(showValue(contents[key]))")
            }
            guard array.count == length else { throw ScenarioRunError.check("\(name): \(key) should have \(length) elements, has \(array.count)") }
        case .intact, .movedAside:
            break
        }
    }
}
