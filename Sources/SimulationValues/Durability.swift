import Foundation

/// How far a commit goes before it counts as made, chosen per simulation
/// root (docs/architecture.md, "Durability"). Either way a commit is an
/// atomic rename under the file's lock: readers see the old file or the new
/// one, and a process killed at any instant loses nothing it committed.
public enum Durability: String, Sendable, CaseIterable {
    /// A commit's bytes are flushed to the file's journal before the file is
    /// put in place: a commit survives a power loss too (the first process
    /// to open the file after the reboot puts back what the file lost). The default.
    case durable
    /// Nothing flushed: a commit is in the kernel's page cache when it
    /// returns, so it survives any process's crash, but not the machine's.
    case process

    /// Whether a commit returns only once it is on disk.
    public var waitsForTheDisk: Bool { self == .durable }
}
