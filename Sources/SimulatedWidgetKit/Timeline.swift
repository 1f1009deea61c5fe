import Foundation

/// A type that says when to show a widget's view, and how relevant it is
/// then. Apple: https://developer.apple.com/documentation/widgetkit/timelineentry
public protocol TimelineEntry {
    /// The date for WidgetKit to render a widget.
    var date: Date { get }
    /// The relevance of a widget's content to the user (nil by default).
    var relevance: TimelineEntryRelevance? { get }
}

extension TimelineEntry {
    public var relevance: TimelineEntryRelevance? { nil }
}

/// How relevant an entry is, compared with other entries of the provider's
/// timelines. Carried, never used: there is no Smart Stack to rotate.
/// Apple: https://developer.apple.com/documentation/widgetkit/timelineentryrelevance
public struct TimelineEntryRelevance: Sendable {
    /// The relevance of the entry, relative to the provider's other entries.
    public let score: Float
    /// How long the relevance lasts from the entry's date (0: until the next entry).
    public let duration: TimeInterval

    /// - Parameters:
    ///   - score: The relevance, relative to the provider's other entries.
    ///   - duration: How long it lasts from the entry's date; 0 until the next entry.
    public init(score: Float, duration: TimeInterval = 0) {
        self.score = score
        self.duration = duration
    }
}

/// Entries and the policy for asking again.
/// Apple: https://developer.apple.com/documentation/widgetkit/timeline
public struct Timeline<EntryType: TimelineEntry> {
    /// An array of timeline entries.
    public let entries: [EntryType]
    /// When WidgetKit asks the provider for the next timeline.
    public let policy: TimelineReloadPolicy

    /// - Parameters:
    ///   - entries: The entries, by date.
    ///   - policy: When to ask for the next timeline.
    public init(entries: [EntryType], policy: TimelineReloadPolicy) {
        self.entries = entries
        self.policy = policy
    }
}

extension Timeline: Sendable where EntryType: Sendable {}

/// The earliest date WidgetKit asks the provider for a new timeline.
/// Apple: https://developer.apple.com/documentation/widgetkit/timelinereloadpolicy
public struct TimelineReloadPolicy: Sendable, Equatable {
    enum Kind: Equatable {
        case atEnd, never
        case after(Date)
    }
    let kind: Kind

    /// Asks for a new timeline after the last entry's date.
    public static let atEnd = TimelineReloadPolicy(kind: .atEnd)
    /// Never asks for a new timeline by itself: only a reload (`WidgetCenter`) does.
    public static let never = TimelineReloadPolicy(kind: .never)
    /// Asks for a new timeline after `date`.
    /// - Parameter date: The earliest date to ask again.
    /// - Returns: The policy.
    public static func after(_ date: Date) -> TimelineReloadPolicy { TimelineReloadPolicy(kind: .after(date)) }
}
