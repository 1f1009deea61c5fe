import CloudModel
import Foundation
import PropertyBased
import PropertyList
import Testing

/// The one codec of the agent ↔ cloud messages: every message comes back
/// as it was sent, and anything else is refused with a `CloudFormatError`
/// that says what and where, without trapping.
@Suite struct SyncCodecTests {
    /// One value of every kind, with the awkward members of each.
    static let everyKind: PlistValue = .dictionary([
        "string": .string("héllo \"quoted\" \\ / \n\t\r 😀 \u{0} \u{1F} \u{7F} \u{2028}"),
        "empty string": "",
        "integers": [.integer(.min), .integer(.max), 0, -1, 1],
        "reals": [
            1.5, .real(-0.0), 0.1, 1e-300, .real(.leastNonzeroMagnitude), .real(.greatestFiniteMagnitude), .real(-.greatestFiniteMagnitude), 1e21,
            123456789.0,
        ],
        "bools": [true, false],
        "dates": .array(
            ([
                0, 1, -1, 999, 1_234_567_890_123,  // 2001, its neighbours, 2040
                -978_307_200_000,  // 1970
                -63_113_904_000_000,  // the year 0
                252_423_993_599_999,  // 9999-12-31T23:59:59.999Z
                252_423_993_600_000,  // +010000-01-01: a sign and six digits
                -100_000_000_000_000,
            ] as [Int64]).map { .date(CloudGen.millisecondDate($0)) }),
        "data": .data(Data(0...255)),
        "empty data": .data(Data()),
        "nested": [[["a": [1, [2, ["b": [:]]]]], []], [:], ["": ["": [[]]]]],
        "$date": "a key like the date marker, beside other keys",
        "key with \u{0} and \"": 1,
    ])

    static func agentRoundTrip(_ message: AgentMessage) throws -> AgentMessage {
        try SyncCodec.decodeAgentMessage(SyncCodec.encode(message))
    }

    static func cloudRoundTrip(_ message: CloudMessage) throws -> CloudMessage {
        try SyncCodec.decodeCloudMessage(SyncCodec.encode(message))
    }

    /// The error an agent message is refused with, or what it was read as.
    static func agentRefusal(_ text: String) -> String {
        do { return "accepted as \(try SyncCodec.decodeAgentMessage(text))" } catch { return error.description }
    }

    static func cloudRefusal(_ text: String) -> String {
        do { return "accepted as \(try SyncCodec.decodeCloudMessage(text))" } catch { return error.description }
    }

    let stamp = ChangeStamp(time: 1_700_000_000_123, device: "iPhone", sequence: 42)

    // MARK: Round trips

    @Test func everyAgentMessageComesBack() throws {
        let messages: [AgentMessage] = [
            .hello(device: "iPhone", account: "alice@example.com", stores: ["com.example.notes": 0, "other": CloudLimits.maximumCounter]),
            .hello(device: "é 😀", account: "", stores: [:]),
            .subscribe(store: "com.example.notes", since: 0),
            .subscribe(store: "s", since: CloudLimits.maximumCounter),
            .upload(store: "s", changes: []),
            .upload(
                store: "s",
                changes: [
                    UploadedChange(key: "all", value: Self.everyKind, stamp: stamp),
                    UploadedChange(key: "removed", value: nil, stamp: ChangeStamp(time: .min, device: "", sequence: .min)),
                    UploadedChange(key: "", value: .string(""), stamp: ChangeStamp(time: .max, device: "Mac", sequence: .max)),
                ]),
            .poll(stores: [:]),
            .poll(stores: ["a": 1, "b": 2, "\u{0}": 3]),
            .restore(store: "s", records: [UploadedChange(key: "k", value: nil, stamp: stamp), UploadedChange(key: "j", value: 1, stamp: stamp)]),
        ]
        for message in messages { #expect(try Self.agentRoundTrip(message) == message) }
    }

    @Test func everyCloudMessageComesBack() throws {
        let record = CloudRecord(key: "all", value: Self.everyKind, stamp: stamp, revision: 7)
        let removal = CloudRecord(key: "gone", value: nil, stamp: stamp, revision: 8)
        let messages: [CloudMessage] = [
            .welcome(server: "groupsim-cloud-1-2"),
            .changes(store: "s", base: 0, revision: 0, initial: true, records: []),
            .changes(store: "s", base: 6, revision: 8, initial: false, records: [record, removal]),
            .ack(store: "s", accepted: [], refused: [], superseded: [], advanced: nil),
            .changes(
                store: "s", base: 0, revision: 9, initial: true, records: [record],
                lineage: StoreLineage(generations: [.init(id: "g1", through: 4), .init(id: "g2", through: 9)], forgotten: 3)),
            .restored(
                store: "s", kept: ["k", "j"], refused: [RefusedChange(key: "x", sequence: 2, reason: "full")], superseded: [removal],
                advanced: Advance(base: 9, revision: 10, generation: "g2")),
            .ack(
                store: "s", accepted: [1, .max, .min], refused: [RefusedChange(key: "k", sequence: 3, reason: "over \"quota\"\n")],
                superseded: [record, removal], advanced: Advance(base: 4, revision: 5)),
            .error("line one\nline two \u{0}"),
        ]
        for message in messages { #expect(try Self.cloudRoundTrip(message) == message) }
    }

    @Test func aRemovalIsAnAbsentValue() throws {
        let upload = SyncCodec.encode(AgentMessage.upload(store: "s", changes: [UploadedChange(key: "k", value: nil, stamp: stamp)]))
        #expect(!upload.contains("\"value\""))
        let changes = SyncCodec.encode(
            CloudMessage.changes(
                store: "s", base: 0, revision: 1, initial: false, records: [CloudRecord(key: "k", value: nil, stamp: stamp, revision: 1)]))
        #expect(!changes.contains("\"value\""))
        // An explicit null is not a removal (nor a value): it is refused, naming the field.
        let withNull = #"{"type":"upload","store":"s","changes":[{"key":"k","value":null,"time":1,"device":"d","sequence":1}]}"#
        #expect(Self.agentRefusal(withNull).contains("changes[0].value is null"))
    }

    @Test func datesCrossToTheMillisecond() throws {
        func crossed(_ date: Date) throws -> PlistValue? {
            let message = AgentMessage.upload(store: "s", changes: [UploadedChange(key: "d", value: .date(date), stamp: stamp)])
            guard case .upload(_, let changes) = try Self.agentRoundTrip(message) else { return nil }
            return changes.first?.value
        }
        let exact = CloudGen.millisecondDate(1_234_567_890_123)
        #expect(try crossed(exact) == .date(exact))
        // A finer date arrives at the nearest millisecond.
        #expect(try crossed(Date(timeIntervalSinceReferenceDate: 1_234_567_890.123_4)) == .date(exact))
        #expect(try crossed(Date(timeIntervalSinceReferenceDate: 1_234_567_890.122_6)) == .date(exact))
        #expect(try crossed(Date(timeIntervalSinceReferenceDate: -0.000_4)) == .date(CloudGen.millisecondDate(0)))
    }

    @Test func randomMessagesComeBack() async {
        await propertyCheck(count: 500, input: CloudGen.agentMessage) { message throws in
            #expect(try Self.agentRoundTrip(message) == message)
        }
        await propertyCheck(count: 500, input: CloudGen.cloudMessage) { message throws in
            #expect(try Self.cloudRoundTrip(message) == message)
        }
    }

    // MARK: Values the text cannot carry as they are

    /// A value whose JSON form collides with a marker, is not a JSON number, or
    /// is a date the text cannot write: each must come back as it went, or
    /// be refused where it is written, never turn into another value or make
    /// a message the other side refuses.
    @Test(arguments: [
        ("a dictionary of one $date string", PlistValue.dictionary(["$date": "2024-05-01"])),
        ("a dictionary of one $data string", PlistValue.dictionary(["$data": "aGk="])),
        ("a dictionary of one $data string that is not base64", PlistValue.dictionary(["$data": "hello!"])),
        ("infinity", PlistValue.real(.infinity)),
        ("minus infinity", PlistValue.real(-.infinity)),
        ("NaN", PlistValue.real(.nan)),
    ])
    func valuesThatJSONDoesNotCarryAsTheyAre(what: String, value: PlistValue) throws {
        let message = CloudMessage.changes(
            store: "s", base: 0, revision: 1, initial: false,
            records: [CloudRecord(key: "k", value: value, stamp: stamp, revision: 1)])
        #expect(try Self.cloudRoundTrip(message) == message, "\(what)")
    }

    /// A date the reader takes must be one the writer can write: else the
    /// cloud takes it from one device and every device refuses the pushes
    /// holding it.
    @Test func aDateTheReaderTakesTheWriterWrites() throws {
        let upload =
            #"{"type":"upload","store":"s","changes":[{"key":"k","value":{"$date":"+999999-12-31T00:00:00Z"},"time":1,"device":"d","sequence":1}]}"#
        #expect(Self.agentRefusal(upload).contains("is not an ISO 8601 date and time within ±285,000 years of 2001"))
        // The farthest date the writer writes is read back as it was.
        let far = PlistValue.date(Date(timeIntervalSinceReferenceDate: 9_007_199_254_740.992))
        let push = CloudMessage.changes(
            store: "s", base: 0, revision: 1, initial: false,
            records: [CloudRecord(key: "k", value: far, stamp: ChangeStamp(time: 1, device: "d", sequence: 1), revision: 1)])
        #expect(try Self.cloudRoundTrip(push) == push)
    }

    /// A device's copy held values up to 509 levels deep (its file has three
    /// levels above a pending value); the messages must carry them.
    @Test func aValueAsDeepAsACopyHoldsCrosses() throws {
        var deep: PlistValue = 1
        for _ in 0..<509 { deep = .array([deep]) }
        let upload = AgentMessage.upload(store: "s", changes: [UploadedChange(key: "k", value: deep, stamp: stamp)])
        #expect(try Self.agentRoundTrip(upload) == upload)
        let push = CloudMessage.changes(
            store: "s", base: 0, revision: 1, initial: false,
            records: [CloudRecord(key: "k", value: deep, stamp: stamp, revision: 1)])
        #expect(try Self.cloudRoundTrip(push) == push)
        // As deep as any file holds still crosses (the cloud's limits then refuse it); one more level is
        // refused by the reader, not a trap.
        var deepest = deep
        for _ in 509..<513 { deepest = .array([deepest]) }
        let full = AgentMessage.upload(store: "s", changes: [UploadedChange(key: "k", value: deepest, stamp: stamp)])
        #expect(try Self.agentRoundTrip(full) == full)
        let deeper = AgentMessage.upload(store: "s", changes: [UploadedChange(key: "k", value: .array([deepest]), stamp: stamp)])
        #expect(Self.agentRefusal(SyncCodec.encode(deeper)).contains("more than 516 deep"))
    }

    // MARK: Hostile input

    @Test func textThatIsNotAMessageIsRefusedSayingWhy() {
        #expect(Self.agentRefusal("").hasPrefix("not a sync message: invalid JSON at byte 0: the text is empty"))
        #expect(Self.agentRefusal("hello").hasPrefix("not a sync message: invalid JSON at byte 0"))
        #expect(Self.cloudRefusal("{\"type\":\"welcome\"").contains("the text ends inside an object"))
        #expect(Self.agentRefusal("[1,2]") == "message must be an object, found an array")
        #expect(Self.cloudRefusal("\"welcome\"") == "message must be an object, found a string")
        #expect(Self.agentRefusal("42") == "message must be an object, found an integer")
        #expect(Self.agentRefusal(#"{"type":"poll"} {"type":"poll"}"#).contains("unexpected text after the JSON value"))
        #expect(Self.agentRefusal(#"{"type":"poll","type":"hello"}"#).contains("duplicate key \"type\""))
    }

    @Test func anUnknownOrMissingTypeIsRefused() {
        #expect(Self.agentRefusal("{}") == "message.type must be a string")
        #expect(Self.agentRefusal(#"{"type":7}"#) == "message.type must be a string")
        #expect(Self.agentRefusal(#"{"type":"fly"}"#) == #"unknown message type "fly" (expected hello, subscribe, upload, poll or restore)"#)
        #expect(Self.cloudRefusal(#"{"type":"fly"}"#) == #"unknown message type "fly" (expected welcome, changes, ack, restored or error)"#)
        // Each side refuses the other's messages.
        #expect(Self.agentRefusal(#"{"type":"welcome","server":"x"}"#).hasPrefix("unknown message type \"welcome\""))
        #expect(Self.cloudRefusal(#"{"type":"poll","stores":{}}"#).hasPrefix("unknown message type \"poll\""))
    }

    @Test func missingAndMistypedFieldsAreNamed() {
        let agent: [(String, String)] = [
            (#"{"type":"hello","account":"a","stores":{}}"#, "hello.device must be a string"),
            (#"{"type":"hello","device":"d","account":["a"],"stores":{}}"#, "hello.account must be a string"),
            (#"{"type":"hello","device":"d","account":"a","stores":[]}"#, "hello.stores must be an object"),
            (#"{"type":"hello","device":"d","account":"a","stores":{"s":"1"}}"#, "hello.stores.s must be a revision"),
            (#"{"type":"subscribe","store":"s"}"#, "subscribe.since must be an integer"),
            (#"{"type":"subscribe","store":"s","since":1.0}"#, "subscribe.since must be an integer"),
            (#"{"type":"subscribe","since":1}"#, "subscribe.store must be a string"),
            (#"{"type":"upload","store":"s","changes":{}}"#, "upload.changes must be an array"),
            (#"{"type":"upload","store":"s","changes":[7]}"#, "upload.changes[0] must be an object, found an integer"),
            (#"{"type":"upload","store":"s","changes":[{"time":1,"device":"d","sequence":1}]}"#, "upload.changes[0].key must be a string"),
            (
                #"{"type":"upload","store":"s","changes":[{"key":"k","time":"1","device":"d","sequence":1}]}"#,
                "upload.changes[0].time must be an integer"
            ),
            (#"{"type":"upload","store":"s","changes":[{"key":"k","time":1,"sequence":1}]}"#, "upload.changes[0].device must be a string"),
            (
                #"{"type":"upload","store":"s","changes":[{"key":"k","time":1,"device":"d","sequence":true}]}"#,
                "upload.changes[0].sequence must be an integer"
            ),
            (#"{"type":"upload","changes":[]}"#, "upload.store must be a string"),
            (#"{"type":"poll","stores":{"s":null}}"#, "is null"),
        ]
        for (text, expected) in agent { #expect(Self.agentRefusal(text).contains(expected), "\(text)") }
        let cloud: [(String, String)] = [
            (#"{"type":"welcome"}"#, "welcome.server must be a string"),
            (#"{"type":"changes","store":"s","revision":1,"records":[]}"#, "changes.base must be an integer"),
            (#"{"type":"changes","store":"s","base":0,"records":[]}"#, "changes.revision must be an integer"),
            (#"{"type":"changes","store":"s","base":0,"revision":1,"initial":1,"records":[]}"#, "changes.initial must be true or false"),
            (
                #"{"type":"changes","store":"s","base":0,"revision":1,"records":[{"key":"k","time":1,"device":"d","sequence":1}]}"#,
                "changes.records[0].revision must be an integer"
            ),
            (#"{"type":"changes","store":"s","base":0,"revision":1,"records":["k"]}"#, "changes.records[0] must be an object, found a string"),
            (#"{"type":"ack","store":"s","accepted":["1"]}"#, "ack.accepted holds sequence numbers"),
            (#"{"type":"ack","store":"s","accepted":[],"refused":[{"key":"k","sequence":1}]}"#, "ack.refused[0].reason must be a string"),
            (#"{"type":"ack","store":"s","accepted":[],"superseded":[{"key":"k"}]}"#, "ack.superseded[0]"),
            (#"{"type":"ack","accepted":[]}"#, "ack.store must be a string"),
            (#"{"type":"error"}"#, "error.message must be a string"),
        ]
        for (text, expected) in cloud { #expect(Self.cloudRefusal(text).contains(expected), "\(text)") }
    }

    /// A message that leaves out a list is not the same as one that sends it
    /// empty: a push without its records would move a device's revision past
    /// changes it never saw.
    @Test func aMessageWithoutItsListIsRefused() {
        do {
            #expect(Self.cloudRefusal(#"{"type":"changes","store":"s","base":0,"revision":5}"#).contains("changes.records"))
            #expect(Self.agentRefusal(#"{"type":"upload","store":"s"}"#).contains("upload.changes"))
            #expect(Self.agentRefusal(#"{"type":"hello","device":"d","account":"a"}"#).contains("hello.stores"))
        }
    }

    /// A revision from the wire is taken only from 0 to the largest counter,
    /// whatever Int64 is sent: the cloud counts on from it, the device keeps it.
    @Test func aRevisionIsTakenOnlyWithinTheCounterRange() async {
        await propertyCheck(count: 300, input: CloudGen.edgeNumbers) { numbers in
            let revision = numbers[0]
            let taken = (0...CloudLimits.maximumCounter).contains(revision)
            let messages = [
                Self.cloudRefusal(#"{"type":"changes","store":"s","base":0,"revision":\#(revision),"records":[]}"#),
                Self.cloudRefusal(#"{"type":"ack","store":"s","accepted":[],"refused":[],"superseded":[],"base":0,"revision":\#(revision)}"#),
                Self.agentRefusal(#"{"type":"subscribe","store":"s","since":\#(revision)}"#),
                Self.agentRefusal(#"{"type":"poll","stores":{"s":\#(revision)}}"#),
            ]
            for message in messages { #expect(message.hasPrefix("accepted as") == taken, "\(revision): \(message)") }
        }
    }

    @Test func negativeRevisionsAreRefused() {
        #expect(
            Self.agentRefusal(#"{"type":"hello","device":"d","account":"a","stores":{"s":-1}}"#)
                == "hello.stores.s must be a revision (an integer from 0 to 9007199254740992)")
        #expect(
            Self.agentRefusal(#"{"type":"poll","stores":{"s":-9223372036854775808}}"#)
                == "poll.stores.s must be a revision (an integer from 0 to 9007199254740992)")
        do {
            #expect(Self.agentRefusal(#"{"type":"subscribe","store":"s","since":-1}"#).contains("subscribe.since"))
            #expect(Self.cloudRefusal(#"{"type":"changes","store":"s","base":-1,"revision":1,"records":[]}"#).contains("changes.base"))
            #expect(Self.cloudRefusal(#"{"type":"changes","store":"s","base":0,"revision":-1,"records":[]}"#).contains("changes.revision"))
            #expect(
                Self.cloudRefusal(
                    #"{"type":"changes","store":"s","base":0,"revision":1,"records":[{"key":"k","time":1,"device":"d","sequence":1,"revision":-1}]}"#
                )
                .contains("changes.records[0].revision"))
        }
    }

    @Test func deepNestingIsRefusedWithoutTrapping() {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        let upload = #"{"type":"upload","store":"s","changes":[{"key":"k","time":1,"device":"d","sequence":1,"value":"# + deep + "}]}"
        #expect(Self.agentRefusal(upload).contains("nests arrays and objects more than 516 deep"))
        let unclosed = String(repeating: "{\"a\":", count: 100_000)
        #expect(Self.cloudRefusal(#"{"type":"changes","records":"# + unclosed).contains("more than 516 deep"))
    }

    @Test func integersBeyondInt64AreRefused() {
        #expect(
            Self.agentRefusal(#"{"type":"subscribe","store":"s","since":9223372036854775808}"#)
                .contains("since: 9223372036854775808 is outside the 64-bit integer range"))
        #expect(
            Self.cloudRefusal(#"{"type":"ack","store":"s","accepted":[-9223372036854775809]}"#)
                .contains("accepted[0]: -9223372036854775809 is outside the 64-bit integer range"))
        #expect(Self.agentRefusal(#"{"type":"subscribe","store":"s","since":1e400}"#).contains("too large for a real"))
    }

    @Test func aTenMegabyteStringIsReadOrRefusedBriefly() throws {
        let huge = String(repeating: "x", count: 10 << 20)
        // As a key, the codec reads it (the ledger refuses keys over 64 bytes).
        let upload = AgentMessage.upload(store: "s", changes: [UploadedChange(key: huge, value: .string("v"), stamp: stamp)])
        #expect(try Self.agentRoundTrip(upload) == upload)
        // Where it is refused, the message stays short and names the field.
        let mistyped = Self.agentRefusal(#"{"type":"subscribe","store":"s","since":""# + huge + #""}"#)
        #expect(mistyped == "subscribe.since must be an integer")
        let unclosed = Self.agentRefusal(#"{"type":"hello","device":""# + huge)
        #expect(unclosed.contains("the string is not closed") && unclosed.count < 200)
        do {
            let unknown = Self.agentRefusal(#"{"type":""# + huge + #""}"#)
            #expect(unknown.hasPrefix("unknown message type") && unknown.count < 1000)
        }
    }

    @Test func nulAndSurrogateEscapes() throws {
        // An escaped NUL is a character like any other: kept, not cut off.
        let withNul = #"{"type":"upload","store":"s","changes":[{"key":"a\u0000b","value":"c\u0000","time":1,"device":"d","sequence":1}]}"#
        guard case .upload(_, let changes) = try SyncCodec.decodeAgentMessage(withNul) else {
            Issue.record("not an upload")
            return
        }
        #expect(changes.first?.key == "a\u{0}b" && changes.first?.value == .string("c\u{0}"))
        // A raw control character is not JSON.
        #expect(Self.agentRefusal("{\"type\":\"poll\u{0}\"}").contains("a control character (0x0) inside a string"))
        // Half a surrogate pair is not a character, wherever it is.
        for escape in [#"\ud800"#, #"\udc00"#, #"\udc00\ud800"#, #"\ud800\u0041"#, #"\ud800x"#] {
            let text = #"{"type":"welcome","server":"a"# + escape + #""}"#
            #expect(Self.cloudRefusal(text).contains("half of a UTF-16 surrogate pair"), "\(escape)")
        }
        #expect(Self.cloudRefusal(#"{"type":"welcome","server":"\ud83d\ude00"}"#) == "accepted as \(CloudMessage.welcome(server: "😀"))")
        #expect(Self.cloudRefusal(#"{"type":"welcome","server":"\u12"}"#).contains("\\u needs four hex digits"))
        // A refused type is shown escaped, so the message stays one readable line.
        do {
            let unknown = Self.agentRefusal(#"{"type":"a\u0000\nb"}"#)
            #expect(!unknown.contains("\u{0}") && !unknown.contains("\n"))
        }
    }

    @Test func randomBytesNeverTrap() async {
        let bytes = Gen<UInt8>.value(in: 0...255).array(of: 0...64)
        let fragments = ["{", "}", "[", "]", "\"type\":", "\"upload\"", "\"changes\"", ",", ":", "\"", "\\u", "1", "-", "null", "{\"$date\":"]
        await propertyCheck(count: 2000, input: bytes) { bytes in
            var text = ""
            for byte in bytes { text += byte < 64 ? fragments[Int(byte) % fragments.count] : String(UnicodeScalar(byte)) }
            _ = try? SyncCodec.decodeAgentMessage(text)
            _ = try? SyncCodec.decodeCloudMessage(text)
        }
    }
}
