import Foundation

/// A type that advises WidgetKit when to update a widget's display.
/// `GroupSim.runWidget(kind:provider:)` asks it for timelines, as WidgetKit
/// does. Apple: https://developer.apple.com/documentation/widgetkit/timelineprovider
public protocol TimelineProvider {
    associatedtype Entry: TimelineEntry
    typealias Context = TimelineProviderContext

    /// An entry with sample data, shown while the widget has nothing else.
    /// - Parameter context: The widget's family and whether it is a preview.
    /// - Returns: The entry.
    func placeholder(in context: Context) -> Entry
    /// One entry of the widget's current state (the widget gallery's; the host's `snapshot` command).
    /// - Parameters:
    ///   - context: The widget's family and whether it is a preview.
    ///   - completion: Call it once with the entry.
    @preconcurrency func getSnapshot(in context: Context, completion: @escaping @Sendable (Entry) -> Void)
    /// The entries for now and later, and when to ask again.
    /// - Parameters:
    ///   - context: The widget's family and whether it is a preview.
    ///   - completion: Call it once with the timeline.
    @preconcurrency func getTimeline(in context: Context, completion: @escaping @Sendable (Timeline<Entry>) -> Void)
}

/// How the widget is shown: its family, size, and whether it is a preview.
/// Apple: https://developer.apple.com/documentation/widgetkit/timelineprovidercontext
public struct TimelineProviderContext: Sendable {
    /// The widget's size class.
    public let family: WidgetFamily
    /// True when asked for the widget gallery (the host's `snapshot` command), false on the screen.
    public let isPreview: Bool
    /// The widget's size in points (`WidgetFamily`'s, on a 390-point-wide iPhone).
    public let displaySize: CGSize

    init(family: WidgetFamily, isPreview: Bool) {
        self.family = family
        self.isPreview = isPreview
        displaySize = family.displaySize
    }
}

/// A widget's size class. Apple: https://developer.apple.com/documentation/widgetkit/widgetfamily
public enum WidgetFamily: Sendable, Hashable, CaseIterable, CustomStringConvertible, CustomDebugStringConvertible {
    case systemSmall, systemMedium, systemLarge, systemExtraLarge
    case accessoryCircular, accessoryRectangular, accessoryInline, accessoryCorner

    public var description: String { name }
    public var debugDescription: String { description }

    /// The case's name, as the events and the registry of running widgets write it.
    var name: String {
        switch self {
        case .systemSmall: "systemSmall"
        case .systemMedium: "systemMedium"
        case .systemLarge: "systemLarge"
        case .systemExtraLarge: "systemExtraLarge"
        case .accessoryCircular: "accessoryCircular"
        case .accessoryRectangular: "accessoryRectangular"
        case .accessoryInline: "accessoryInline"
        case .accessoryCorner: "accessoryCorner"
        }
    }

    /// The points a widget of the family takes on a 390×844-point iPhone
    /// (Apple's Human Interface Guidelines, "Widgets"); an iPad's extra large
    /// and a watch's corner, which have no iPhone size, are given one of theirs.
    var displaySize: CGSize {
        switch self {
        case .systemSmall: CGSize(width: 170, height: 170)
        case .systemMedium: CGSize(width: 364, height: 170)
        case .systemLarge: CGSize(width: 364, height: 382)
        case .systemExtraLarge: CGSize(width: 715, height: 330)
        case .accessoryCircular: CGSize(width: 76, height: 76)
        case .accessoryRectangular: CGSize(width: 172, height: 76)
        case .accessoryInline: CGSize(width: 257, height: 26)
        case .accessoryCorner: CGSize(width: 32, height: 32)
        }
    }
}
