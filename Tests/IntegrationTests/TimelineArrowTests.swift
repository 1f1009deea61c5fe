import AppProtocol
import PropertyList
import Testing

@testable import Scenarios

/// The timeline's write → seen arrows: drawn only where the cause is certain,
/// whatever order the runner read the two processes' lines in.
@Suite struct TimelineArrowTests {
    func change(_ time: UInt64, in process: String, origin: String) -> RecordedEvent {
        RecordedEvent(
            time: time, process: process, kind: .event, name: "change", fields: [:], text: "change",
            appEvent: .change(ValueChange(key: "theme", old: nil, new: "dark", origin: origin, domain: "group.x", valueDomain: "group.x")))
    }

    func setStep(_ time: UInt64) -> RecordedEvent {
        RecordedEvent(
            time: time, process: "app", kind: .action, name: "set", fields: ["key": "theme", "value": "dark"], text: "set theme", appEvent: nil)
    }

    @Test func theWritersOwnChangeReadFirstIsTheCause() {
        let arrows = TimelineReport.defaultsArrows([
            setStep(1), change(2, in: "app", origin: "this-process"), change(3, in: "widget", origin: "other-process"),
        ])
        #expect(arrows.map { "\($0.0.process) \($0.0.time) → \($0.1.process)" } == ["app 2 → widget"])
    }

    /// Each process's lines have their own reader thread: under load the
    /// writer's own change can be recorded after the reader's.
    @Test func whenTheWritersChangeIsReadLateTheSetStepIsTheCause() {
        let arrows = TimelineReport.defaultsArrows([
            setStep(1), change(2, in: "widget", origin: "other-process"), change(3, in: "app", origin: "this-process"),
        ])
        #expect(arrows.map { "\($0.0.kind) \($0.0.time) → \($0.1.process)" } == ["action 1 → widget"])
    }

    /// A writer killed right after its commit may never print its own change: the step is the cause.
    @Test func aWriterThatNeverSaidItsChangeLeavesTheSetStepAsTheCause() {
        let arrows = TimelineReport.defaultsArrows([setStep(1), change(2, in: "widget", origin: "other-process")])
        #expect(arrows.map { "\($0.0.kind) \($0.0.time) → \($0.1.process)" } == ["action 1 → widget"])
    }

    /// ... unless an outside tool wrote the key in between: then the tool's write is the cause.
    @Test func aToolsWriteAfterTheStepIsTheCauseInstead() {
        let tool = RecordedEvent(
            time: 2, process: "defaults", kind: .action, name: "write", fields: ["key": "theme"], text: "defaults write", appEvent: nil)
        let arrows = TimelineReport.defaultsArrows([setStep(1), tool, change(3, in: "widget", origin: "other-process")])
        #expect(arrows.map { "\($0.0.process) \($0.0.time) → \($0.1.process)" } == ["defaults 2 → widget"])
    }

    /// Without a step that wrote the value (a write inside the app), a change recorded late gives no arrow.
    @Test func withoutAStepALateOwnChangeGivesNoArrow() {
        #expect(
            TimelineReport.defaultsArrows([change(2, in: "widget", origin: "other-process"), change(3, in: "app", origin: "this-process")]).isEmpty)
    }
}
