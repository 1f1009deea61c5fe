import Foundation
import Testing

@testable import PropertyList

/// The writers' output buffer: it holds exactly what was appended, in order,
/// however many times it had to grow and whatever form each piece came in.
@Suite struct ByteOutputTests {
    @Test func holdsEveryAppendInOrderAcrossGrowths() {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<50 {
            let output = ByteOutput(capacity: round % 3 == 0 ? 0 : Int.random(in: 1...100, using: &generator))
            var expected: [UInt8] = []
            for _ in 0..<Int.random(in: 0...400, using: &generator) {
                let piece = (0..<Int.random(in: 0...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                switch Int.random(in: 0..<5, using: &generator) {
                case 0:
                    guard let byte = piece.first else { continue }
                    output.append(byte)
                    expected.append(byte)
                    continue
                case 1: piece.withUnsafeBufferPointer { output.append(contentsOf: $0) }
                case 2: output.append(contentsOf: Data(piece))
                case 3: output.append(contentsOf: piece)
                default: output.append(contentsOf: piece.lazy.map { $0 })  // a sequence that is not contiguous
                }
                expected += piece
            }
            // The first difference, not a diff of two arrays of up to 120,000 bytes.
            #expect(output.count == expected.count)
            #expect(firstDifference(output.bytes, expected) == nil)
            output.withUnsafeBytes { #expect(firstDifference(Array($0), expected) == nil) }
        }
    }

    func firstDifference(_ made: [UInt8], _ expected: [UInt8]) -> Int? {
        zip(made, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? (made.count == expected.count ? nil : min(made.count, expected.count))
    }

    @Test func anEmptyOutputHasNoBytes() {
        let output = ByteOutput(capacity: 0)
        output.append(contentsOf: [UInt8]())
        output.append(contentsOf: Data())
        #expect(output.count == 0)
        #expect(output.bytes.isEmpty)
    }
}
