import AppProtocol
import Foundation

/// What the widget host shows: an entry's date (as the provider wrote it,
/// on the real clock) and its card.
package struct ShownEntry: Sendable {
    package let date: Date
    package let card: [CardLine]
}

/// A timeline as the host keeps it: entries and policy, whatever the entry type.
package struct ShownTimeline: Sendable {
    package let entries: [ShownEntry]
    package let policy: TimelineReloadPolicy
}

/// Something that produces a timeline for a context: the host's one
/// dependency on the provider, so any kind of provider plugs in. A
/// `TimelineProvider`'s completion handlers are adapted here
/// (`provider(_:)`); an `AppIntentTimelineProvider`'s async calls, given its
/// configuration intent, in `appIntentProvider(_:configuration:)`.
package struct TimelineSource: Sendable {
    /// The provider's type name, as reports name it (WidgetKit logs it so too).
    package let providerName: String
    /// What the provider failed to do when no timeline comes: "call getTimeline(in:completion:)'s completion".
    package var unanswered = "call getTimeline(in:completion:)'s completion"
    /// A configurable widget's configuration intent; nil for a static widget.
    package var configuration: GivenConfiguration?
    /// Asks for a timeline; `reply` may be called on any thread, at any time (the host bounds the wait and counts the calls).
    package let timeline: @Sendable (TimelineProviderContext, _ reply: @escaping @Sendable (ShownTimeline) -> Void) -> Void
    /// Asks for one entry of the current state (the gallery's snapshot).
    package let snapshot: @Sendable (TimelineProviderContext, _ reply: @escaping @Sendable (ShownEntry) -> Void) -> Void
    /// The placeholder entry, synchronously.
    package let placeholder: @Sendable (TimelineProviderContext) -> ShownEntry

    /// A `TimelineProvider`, called on one serial queue of its own, as WidgetKit calls it off the main thread.
    package static func provider<Provider: TimelineProvider>(_ provider: Provider) -> TimelineSource {
        let box = ProviderBox(provider)
        let queue = DispatchQueue(label: "groupsim.widget.provider")
        return TimelineSource(
            providerName: String(describing: Provider.self),
            timeline: { context, reply in
                queue.async {
                    box.provider.getTimeline(in: context) { timeline in
                        reply(ShownTimeline(entries: timeline.entries.map(ShownEntry.init), policy: timeline.policy))
                    }
                }
            },
            snapshot: { context, reply in
                queue.async { box.provider.getSnapshot(in: context) { reply(ShownEntry($0)) } }
            },
            placeholder: { context in queue.sync { ShownEntry(box.provider.placeholder(in: context)) } })
    }
}

/// The configuration intent an `AppIntentTimelineProvider` is given: its type's name, the parameters as given, and
/// all its parameters' values as the host says them (`SelectFolderIntent(folder="Work", showCount=true)`).
package struct GivenConfiguration: Sendable {
    package let intent: String
    package let parameters: [String: String]
    package let described: String
}

extension ShownEntry {
    init(_ entry: some TimelineEntry) {
        date = entry.date
        card = EntryCard.lines(of: entry)
    }
}

/// The user's provider, which need not be Sendable (Apple's template's is a
/// plain struct): only the provider's serial queue touches it.
private final class ProviderBox<Provider: TimelineProvider>: @unchecked Sendable {
    let provider: Provider
    init(_ provider: Provider) { self.provider = provider }
}
