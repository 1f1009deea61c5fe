import Foundation
import PropertyList
import SpecFormat

extension StepGrammar {
    // MARK: Faults

    static let faultSteps: [StepSpec] = [
        StepSpec(
            "kill", shorthand: "a process name",
            fields: [
                .required("process", .process), .optional("signal", .text, "KILL, TERM, INT, STOP or CONT; default KILL"),
                .optional("after-acks", .number(0...ScenarioParser.maximumCount)),
            ], does: "sends a signal; `after-acks: N` first waits until N of its burst's synchronizes were acknowledged",
            examples: ["app", "{ process: app, signal: TERM, after-acks: 5 }", "{ process: program, signal: STOP }"]
        ) { input in
            if input.isScalar {
                let process = try input.process()
                return (.kill(process: process, signal: SIGKILL, afterAcks: nil), "kill \(process)")
            }
            let fields = try input.fields()
            let process = try fields.process("process")
            let signal = try ScenarioParser.parseSignal(fields["signal"])
            return (
                .kill(process: process, signal: signal, afterAcks: try fields.number("after-acks")),
                "kill -\(ScenarioParser.signalName(signal)) \(process)"
            )
        } write: {
            guard case .kill(let process, let signal, let afterAcks) = $0 else { return nil }
            if signal == SIGKILL && afterAcks == nil { return .scalar(process) }
            return .mapping([
                ("process", YAMLText.scalar(process)), ("signal", ScenarioParser.signalName(signal)), afterAcks.map { ("after-acks", "\($0)") },
            ])
        },
        StepSpec("suspend", shorthand: "a process name", does: "SIGSTOP (a suspended extension)", examples: ["widget"]) { input in
            let process = try input.process()
            return (.suspend(process), "suspend \(process)")
        } write: {
            guard case .suspend(let process) = $0 else { return nil }
            return .scalar(process)
        },
        StepSpec("resume", shorthand: "a process name", does: "SIGCONT", examples: ["widget"]) { input in
            let process = try input.process()
            return (.resume(process), "resume \(process)")
        } write: {
            guard case .resume(let process) = $0 else { return nil }
            return .scalar(process)
        },
        StepSpec(
            "corrupt", fields: [.required("domain"), .optional("device", .device), .optional("content")],
            does: "replaces a domain's plist with bytes that are not a property list",
            examples: ["{ domain: group.com.example.notes }", "{ domain: group.com.example.notes, device: iPad, content: \"<plist\" }"]
        ) { input in
            let fields = try input.fields()
            let domain = try fields.node("domain").string()
            return (
                .corrupt(domain: domain, device: try fields.device("device"), content: try fields.text("content") ?? ScenarioParser.notAPropertyList),
                "corrupt \(domain)"
            )
        } write: {
            guard case .corrupt(let domain, let device, let content) = $0 else { return nil }
            return .mapping([
                ("domain", YAMLText.scalar(domain)), device.map { ("device", YAMLText.scalar($0)) },
                content == ScenarioParser.notAPropertyList ? nil : ("content", YAMLText.quoted(content)),
            ])
        },
        StepSpec(
            "delete-file", fields: [.required("domain"), .optional("device", .device)], does: "deletes a domain's plist",
            examples: ["{ domain: group.com.example.notes }", "{ domain: group.com.example.notes, device: iPad }"]
        ) { input in
            let fields = try input.fields()
            let domain = try fields.node("domain").string()
            return (.deleteFile(domain: domain, device: try fields.device("device")), "delete the file of \(domain)")
        } write: {
            guard case .deleteFile(let domain, let device) = $0 else { return nil }
            return .mapping([("domain", YAMLText.scalar(domain)), device.map { ("device", YAMLText.scalar($0)) }])
        },
        StepSpec(
            "edit-file",
            fields: [
                .required("domain"), .optional("device", .device), .required("key"), .optional("value", .value),
                .optional("absent", .flag, "`true`: removes the key"),
            ],
            does: "edits a domain's plist directly, in place and without the store's lock (a text editor, PlistBuddy): exactly one of "
                + "`value` or `absent: true`. On a device with `preferences-cache` its running processes never see it",
            examples: [
                "{ domain: group.com.example.notes, device: iPad, key: count, value: 3 }",
                "{ domain: group.com.example.notes, key: theme, absent: true }",
            ]
        ) { input in
            let fields = try input.fields()
            let domain = try fields.node("domain").string()
            let key = try fields.node("key").string()
            let removes = try fields.flag("absent") == true
            guard removes != (fields.nodes["value"] != nil) else {
                throw input.body.error("edit-file needs exactly one of 'value' or 'absent: true'")
            }
            let value = removes ? nil : try fields.node("value").plistValue()
            let device = try fields.device("device")
            return (
                .editFile(domain: domain, device: device, key: key, value: value),
                "edit the file of \(domain) on \(device ?? input.context.devices.first ?? "iPhone") by hand: \(key) = \(value.map { PlistJSON.encode($0) } ?? "absent")"
            )
        } write: {
            guard case .editFile(let domain, let device, let key, let value) = $0 else { return nil }
            return .mapping([
                ("domain", YAMLText.scalar(domain)), device.map { ("device", YAMLText.scalar($0)) }, ("key", YAMLText.scalar(key)),
                YAMLText.valueOrAbsent(value),
            ])
        },
    ]
}
