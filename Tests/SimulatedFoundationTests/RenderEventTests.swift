import AppProtocol
import Foundation
import PropertyList
import Testing

/// The `render` event's optional fields (docs/protocol.md): a user's widget
/// names its kind and entry date; the built-in widget's lines stay as they were.
@Suite struct RenderEventTests {
    let card = [CardLine(key: "lastNote", value: .string("Buy milk"), domain: nil), CardLine(key: "gone", value: nil, domain: nil)]
    let time = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aBuiltInWidgetsRenderHasNoEntryFields() throws {
        let line = ControlProtocol.event(.render(card: card, reason: "change"), at: time)
        #expect(
            line
                == #"{"event":"render","reason":"change","card":[{"key":"lastNote","value":"Buy milk","domain":null},{"key":"gone","value":null,"domain":null}],"time":"2027-01-15T08:00:00.000Z"}"#
        )
        guard case .event(.render(_, "change", let entry), _) = try ControlProtocol.decode(line).message else {
            Issue.record("not a render: \(line)")
            return
        }
        #expect(entry == nil)
    }

    @Test func aUserWidgetsRenderCarriesItsKindAndEntryDate() throws {
        let entry = RenderedEntry(kind: "Notes", date: time.addingTimeInterval(3_600.25))
        let line = ControlProtocol.event(.render(card: card, reason: "entry", entry: entry), at: time)
        #expect(line.contains(#""kind":"Notes","entryDate":"2027-01-15T09:00:00.250Z""#), "\(line)")
        guard case .event(.render(let decoded, "entry", let decodedEntry), _) = try ControlProtocol.decode(line).message else {
            Issue.record("not a render: \(line)")
            return
        }
        #expect(decoded == card && decodedEntry == entry)
    }

    @Test func aKindWithoutAnEntryDateIsRefusedSayingWhatIsMissing() {
        let line = #"{"event":"render","reason":"entry","card":[],"kind":"Notes","time":"2027-01-15T08:00:00.000Z"}"#
        #expect {
            try ControlProtocol.decode(line)
        } throws: { "\($0)".contains("render event of kind Notes without an \"entryDate\" timestamp") }
    }
}
