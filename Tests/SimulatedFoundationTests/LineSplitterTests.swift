import AppProtocol
import Testing

/// How request bytes become lines, for the roles' stdin and a program's
/// control channel alike: whatever the reads' sizes, a line is whole; an
/// over-long one is refused once and skipped, and costs no more than the limit.
@Suite struct LineSplitterTests {
    /// Feeds `text` in reads of `chunk` bytes, then ends the input.
    private func split(_ text: String, chunk: Int, limit: Int = 16, finish: Bool = true) -> [LineSplitter.Piece] {
        var splitter = LineSplitter(maximumLineBytes: limit)
        let bytes = Array(text.utf8)
        var pieces: [LineSplitter.Piece] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + chunk)
            pieces += bytes[offset..<end].withUnsafeBytes { splitter.feed($0) }
            offset = end
        }
        if finish, let last = splitter.finish() { pieces.append(last) }
        return pieces
    }

    @Test(arguments: [1, 2, 3, 5, 7, 64])
    func linesAreWholeWhateverTheReadsSizes(chunk: Int) {
        #expect(
            split("one\ntwo\r\n\nthree\nlast", chunk: chunk)
                == [.line("one"), .line("two"), .line(""), .line("three"), .line("last")])
    }

    @Test(arguments: [1, 4, 64])
    func aLineOverTheLimitIsRefusedOnceAndTheNextIsWhole(chunk: Int) {
        let long = String(repeating: "x", count: 100)
        #expect(split("a\n\(long)\nb\n", chunk: chunk) == [.line("a"), .tooLong, .line("b")])
        // Exactly at the limit is a line; one byte more is not.
        let atLimit = String(repeating: "y", count: 16)
        #expect(split("\(atLimit)\n\(atLimit)z\nc\n", chunk: chunk) == [.line(atLimit), .tooLong, .line("c")])
    }

    @Test func anOverLongLineWithoutEndIsRefusedOnceAndHoldsNoMoreThanTheLimit() {
        var splitter = LineSplitter(maximumLineBytes: 1_000)
        let block = [UInt8](repeating: 0x41, count: 300)
        var refusals = 0
        for _ in 0..<10_000 {
            for piece in block.withUnsafeBytes({ splitter.feed($0) }) {
                #expect(piece == .tooLong)
                refusals += 1
            }
        }
        #expect(refusals == 1)
        // Its end, when it comes, is skipped; the input's end gives nothing for it.
        let pieces = Array("AAA\nnext\n".utf8).withUnsafeBytes { splitter.feed($0) }
        #expect(pieces == [.line("next")])
        #expect(splitter.finish() == nil)
    }

    @Test func anInputEndingInsideARefusedLineGivesNothingMore() {
        #expect(split("ok\n" + String(repeating: "z", count: 40), chunk: 8) == [.line("ok"), .tooLong])
    }

    @Test func invalidUTF8IsRepairedNotRefused() {
        var splitter = LineSplitter(maximumLineBytes: 16)
        let pieces = ([0x61, 0xFF, 0x62, 0x0A] as [UInt8]).withUnsafeBytes { splitter.feed($0) }
        #expect(pieces == [.line("a\u{FFFD}b")])
    }
}
