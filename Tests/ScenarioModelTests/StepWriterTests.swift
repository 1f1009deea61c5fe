import Foundation
import PropertyList
import SimulationValues
import Testing

@testable import ScenarioModel

/// Generated histories are typed steps written by StepWriter: what it
/// writes, the parser reads back as the same steps.
@Suite struct StepWriterTests {
    @Test func writtenStepsReadBackAsTheSameSteps() throws {
        for seed in UInt64(1)...30 {
            let history = RandomRun.generate(seed: seed, length: 60)
            let text = history.yaml
            let scenario = try ScenarioParser.parse(text, file: "/tmp/random-\(seed).yaml", fileSystem: FixedScenarioFiles())
            let rewritten = scenario.steps.flatMap { StepWriter.lines($0.action) }
            let written = text.split(separator: "\n").drop { $0 != "steps:" }.dropFirst().map(String.init)
            #expect(rewritten == written, "seed \(seed)")
        }
    }

    @Test func valuesReadBackExactly() throws {
        let values: [PlistValue] = [
            .string("true"), .string("5"), .string("-theme"), .string("--device"), .string("a b"), .string(""), .string("x\"y"),
            .integer(-9_223_372_036_854_775_808), .real(0.5), .bool(false), .array([.integer(1), .string("no")]),
            .dictionary(["k": .dictionary([:]), "on": .string("off")]), .date(Date(timeIntervalSince1970: 1_700_000_000.678)), .data(Data([0, 255])),
        ]
        for value in values {
            let text =
                "summary: x\nprocesses: { app: { role: main-app } }\nsteps:\n"
                + StepWriter.lines(.command(process: "app", .set(key: "k", value: value))).joined(separator: "\n") + "\n"
            let scenario = try ScenarioParser.parse(text, file: "/tmp/values.yaml", fileSystem: FixedScenarioFiles())
            guard case .command(_, .set(_, let read), _) = scenario.steps[0].action else {
                Issue.record("not a set: \(text)")
                continue
            }
            #expect(read == value, "\(text)")
        }
    }

    @Test func managedStepsReadBackAsTheSameSteps() throws {
        let steps: [(device: String?, app: String, change: ManagedChange, suite: Bool)] = [
            (nil, "com.example.notes", .set(key: "theme", value: "dark"), false),
            ("iPad", "com.example.notes.widget", .remove(key: "theme"), false),
            (nil, "com.example.notes", .configuration(["server": "https://mdm.example.com", "seats": 5, "on": "off"]), false),
            (nil, "group.com.example.notes", .set(key: "theme", value: "dark"), true),
        ]
        for step in steps {
            let text =
                "summary: x\ndevices: [iPhone, iPad]\nprocesses: { app: { role: main-app } }\nsteps:\n"
                + StepWriter.lines(.managed(device: step.device, app: step.app, step.change, suite: step.suite)).joined(separator: "\n") + "\n"
            let scenario = try ScenarioParser.parse(text, file: "/tmp/managed.yaml", fileSystem: FixedScenarioFiles())
            guard case .managed(let device, let app, let change, let suite) = scenario.steps[0].action else {
                Issue.record("not a managed step: \(text)")
                continue
            }
            #expect(device == step.device && app == step.app && change == step.change && suite == step.suite, "\(text)")
        }
    }

    @Test func anUploadIntervalStepReadsBackAsTheSameStep() throws {
        let text =
            "summary: x\ndevices: [iPhone, iPad]\nsteps:\n"
            + StepWriter.lines(.cloud(.network(device: "iPad", .uploadInterval(milliseconds: 3000)))).joined(separator: "\n") + "\n"
        let scenario = try ScenarioParser.parse(text, file: "/tmp/interval.yaml", fileSystem: FixedScenarioFiles())
        guard case .cloud(.network(let device, .uploadInterval(let ms))) = scenario.steps[0].action else {
            Issue.record("not an upload-interval step: \(text)")
            return
        }
        #expect(device == "iPad" && ms == 3000, "\(text)")
    }

    @Test func aManagedStepNamesWhatIsWrong() throws {
        let base = "summary: x\nprocesses: { app: { role: main-app } }\nsteps:\n"
        let typo = #expect(throws: (any Error).self) {
            try ScenarioParser.parse(
                base + "  - managed: { app: com.example.note, key: k, value: v }\n", file: "/tmp/m.yaml", fileSystem: FixedScenarioFiles())
        }
        #expect("\(typo.map { "\($0)" } ?? "")".contains("did you mean com.example.notes?"))
        let both = #expect(throws: (any Error).self) {
            try ScenarioParser.parse(
                base + "  - managed: { app: com.example.notes, remove: k, config: { a: 1 } }\n", file: "/tmp/m.yaml", fileSystem: FixedScenarioFiles()
            )
        }
        #expect("\(both.map { "\($0)" } ?? "")".contains("managed takes an app or a suite and one of"))
        // A suite is an app group of the app's targets; it has no managed app configuration; app and suite never both.
        let refusals = [
            (
                "suite: group.com.example.note, key: k, value: v",
                "'group.com.example.note' is not an app group of the app's targets; did you mean group.com.example.notes?"
            ),
            (
                "suite: group.com.example.notes, config: { a: 1 }",
                "config is an app's managed app configuration; a suite takes key with value, or remove"
            ),
            (
                "app: com.example.notes, suite: group.com.example.notes, remove: k",
                "managed takes exactly one of app (a bundle id) or suite (an app group)"
            ),
            ("remove: k", "managed takes exactly one of app (a bundle id) or suite (an app group)"),
        ]
        for (fields, message) in refusals {
            let refused = #expect(throws: (any Error).self) {
                try ScenarioParser.parse(base + "  - managed: { \(fields) }\n", file: "/tmp/m.yaml", fileSystem: FixedScenarioFiles())
            }
            #expect("\(refused.map { "\($0)" } ?? "")".contains(message), "\(fields)")
        }
    }

    @Test func rebootStepsReadBackAsTheSameSteps() throws {
        let steps: [Step.Action] = [
            .reboot(device: nil, protection: .untilFirstUnlock), .reboot(device: "iPad", protection: DataProtection.none),
            .unlock(device: nil), .unlock(device: "iPad"), .prewarm("app"),
        ]
        for step in steps {
            let text =
                "summary: x\ndevices: [iPhone, iPad]\nprocesses: { app: { role: main-app } }\nsteps:\n"
                + StepWriter.lines(step).joined(separator: "\n") + "\n"
            let read = try ScenarioParser.parse(text, file: "/tmp/reboot.yaml", fileSystem: FixedScenarioFiles()).steps[0].action
            #expect("\(read)" == "\(step)", "\(text)")
        }
    }

    @Test func aRebootStepNamesWhatIsWrong() throws {
        let base = "summary: x\nprocesses: { app: { role: main-app } }\nsteps:\n"
        let protection = #expect(throws: (any Error).self) {
            try ScenarioParser.parse(base + "  - reboot: { protection: some }\n", file: "/tmp/r.yaml", fileSystem: FixedScenarioFiles())
        }
        let message = "\(protection.map { "\($0)" } ?? "")"
        #expect(message.contains("/tmp/r.yaml:4:") && message.contains("protection must be until-first-unlock or none, found 'some'"), "\(message)")
        let process = #expect(throws: (any Error).self) {
            try ScenarioParser.parse(base + "  - prewarm: ap\n", file: "/tmp/r.yaml", fileSystem: FixedScenarioFiles())
        }
        #expect("\(process.map { "\($0)" } ?? "")".contains("/tmp/r.yaml:4:"))
    }

    @Test func editFileStepsReadBackAsTheSameSteps() throws {
        let steps: [(device: String?, key: String, value: PlistValue?)] = [(nil, "theme", "dark"), ("iPad", "count", 3), (nil, "theme", nil)]
        for step in steps {
            let text =
                "summary: x\ndevices: [iPhone, iPad]\nprocesses: { app: { role: main-app } }\nsteps:\n"
                + StepWriter.lines(.editFile(domain: "group.com.example.notes", device: step.device, key: step.key, value: step.value))
                .joined(separator: "\n") + "\n"
            let scenario = try ScenarioParser.parse(text, file: "/tmp/edit.yaml", fileSystem: FixedScenarioFiles())
            guard case .editFile(let domain, let device, let key, let value) = scenario.steps[0].action else {
                Issue.record("not an edit-file step: \(text)")
                continue
            }
            #expect(domain == "group.com.example.notes" && device == step.device && key == step.key && value == step.value, "\(text)")
        }
        let both = #expect(throws: (any Error).self) {
            try ScenarioParser.parse(
                "summary: x\nprocesses: { app: { role: main-app } }\nsteps:\n  - edit-file: { domain: d.e, key: k, value: v, absent: true }\n",
                file: "/tmp/e.yaml", fileSystem: FixedScenarioFiles())
        }
        #expect("\(both.map { "\($0)" } ?? "")".contains("/tmp/e.yaml:4:"), "\(both.map { "\($0)" } ?? "")")
        #expect("\(both.map { "\($0)" } ?? "")".contains("edit-file needs exactly one of 'value' or 'absent: true'"))
    }
}
