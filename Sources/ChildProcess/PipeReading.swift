import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Reads a pipe with `read(2)`, retrying when a signal interrupts it.
/// Foundation's `FileHandle.availableData` and `readDataToEndOfFile()` stop
/// the process with a fatal error on EINTR, which a driver sees whenever a
/// child it stops or resumes sends it SIGCHLD in the middle of a read.
package enum PipeReading {
    /// The next bytes available (blocking until some arrive); empty at end of file.
    package static func nextChunk(_ handle: FileHandle, maximum: Int = 65_536) -> Data {
        var buffer = [UInt8](repeating: 0, count: maximum)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, maximum) }
            if count >= 0 { return Data(buffer[0..<count]) }
            if errno == EINTR { continue }
            // Any other error ends the stream as end of file would: the reader stops.
            return Data()
        }
    }

    /// Waits, as long as it takes, until the pipe has bytes to read or its
    /// write end is closed, taking none of them (an error too returns: the read that follows sees it).
    package static func waitReadable(_ handle: FileHandle) {
        var watched = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
        while poll(&watched, 1, -1) < 0, errno == EINTR {}
    }

    /// Everything until end of file.
    package static func toEnd(_ handle: FileHandle) -> Data {
        var all = Data()
        while true {
            let chunk = nextChunk(handle)
            if chunk.isEmpty { return all }
            all.append(chunk)
        }
    }
}
