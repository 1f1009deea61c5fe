import CloudModel
import Foundation

/// The messages between a device's sync agent and the cloud: text from the
/// other end of a WebSocket, read by `SyncCodec`. Each side's reader must
/// give a message or a `CloudFormatError`, and what it gives must cross the
/// wire again: written, read back, and written the same.
enum SyncFuzzTargets {
    /// One WebSocket text frame, read as both sides would read it.
    static func syncMessage(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        checkRewrite(text, side: "agent", decode: SyncCodec.decodeAgentMessage, encode: SyncCodec.encode)
        checkRewrite(text, side: "cloud", decode: SyncCodec.decodeCloudMessage, encode: SyncCodec.encode)
    }

    /// Whatever `decode` accepts, `encode` writes as text that `decode`
    /// accepts again and that is written back the same. (Not equal to the
    /// input message: a date is written to the millisecond.)
    static func checkRewrite<Message>(
        _ text: String, side: String, decode: (String) throws(CloudFormatError) -> Message, encode: (Message) -> String
    ) {
        guard let message = try? decode(text) else { return }
        let written = encode(message)
        do {
            let again = try decode(written)
            require(encode(again) == written, "the \(side) message \(written.prefix(2000)) changed when read back")
        } catch {
            fatalError(
                "property broken: the \(side) reader refuses what its writer wrote: \(error.description.prefix(2000))\n\(written.prefix(2000))")
        }
    }
}
