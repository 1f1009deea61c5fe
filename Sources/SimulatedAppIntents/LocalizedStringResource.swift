import Foundation

/// Foundation's `LocalizedStringResource`, which Foundation on Linux lacks: a
/// key and its text. There are no string tables here, so the text is the key
/// (what Apple shows when the table has no entry); interpolations are
/// formatted as `String`'s are.
public struct LocalizedStringResource: Sendable, Hashable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The text the resource was made with.
    public var key: String
    /// The table named when it was made (nil: `Localizable`); no table is read.
    public var table: String?
    public var locale: Locale

    /// A localizable text; here its key is its text (there are no string tables).
    /// - Parameters:
    ///   - keyAndValue: The key, which is also the text.
    ///   - table: The strings table (nil: `Localizable`); no table is read.
    ///   - locale: The locale; kept, never read.
    ///   - comment: A note for translators; not kept.
    public init(_ keyAndValue: String, table: String? = nil, locale: Locale = .current, comment: StaticString? = nil) {
        key = keyAndValue
        self.table = table
        self.locale = locale
    }

    public init(stringLiteral value: String) { self.init(value) }

    public init(stringInterpolation: DefaultStringInterpolation) { self.init(String(stringInterpolation: stringInterpolation)) }

    public var description: String { key }
}

extension String {
    /// The resource's text (Foundation's `String(localized:)`; the key, as there are no tables here).
    /// - Parameter resource: The resource.
    public init(localized resource: LocalizedStringResource) { self = resource.key }
}

/// The human-readable description of an app intent (Shortcuts shows it).
public struct IntentDescription: Sendable, ExpressibleByStringInterpolation {
    public var descriptionText: LocalizedStringResource
    /// The category the Shortcuts editor groups the intent in.
    public var categoryName: LocalizedStringResource?
    public var searchKeywords: [LocalizedStringResource]
    public var resultValueName: LocalizedStringResource?

    /// - Parameters:
    ///   - descriptionText: What the intent does.
    ///   - categoryName: The category Shortcuts groups it under.
    ///   - searchKeywords: More words it is found by.
    ///   - resultValueName: The name of the value it returns.
    public init(
        _ descriptionText: LocalizedStringResource, categoryName: LocalizedStringResource? = nil,
        searchKeywords: [LocalizedStringResource] = [], resultValueName: LocalizedStringResource? = nil
    ) {
        self.descriptionText = descriptionText
        self.categoryName = categoryName
        self.searchKeywords = searchKeywords
        self.resultValueName = resultValueName
    }

    public init(stringLiteral value: String) { self.init(LocalizedStringResource(value)) }
    public init(stringInterpolation: DefaultStringInterpolation) { self.init(LocalizedStringResource(stringInterpolation: stringInterpolation)) }
}

/// How a value (an `AppEnum` case) is shown: its title, and maybe a subtitle and an image.
public struct DisplayRepresentation: Sendable, ExpressibleByStringInterpolation {
    /// An image beside the title: an SF Symbol's name or an asset's (nothing is drawn here).
    public struct Image: Sendable {
        public let name: String
        public let isSystemImage: Bool
        /// An SF Symbol.
        /// - Parameter systemName: The symbol's name.
        public init(systemName: String) { (name, isSystemImage) = (systemName, true) }
        /// An image of the app's assets.
        /// - Parameter name: The image's name.
        public init(named name: String) { (self.name, isSystemImage) = (name, false) }
    }

    public var title: LocalizedStringResource
    public var subtitle: LocalizedStringResource?
    public var image: Image?
    public var synonyms: [LocalizedStringResource]

    /// - Parameters:
    ///   - title: The main text.
    ///   - subtitle: A second line.
    ///   - image: An image beside it.
    ///   - synonyms: Other names a person may say for it.
    public init(
        title: LocalizedStringResource, subtitle: LocalizedStringResource? = nil, image: Image? = nil, synonyms: [LocalizedStringResource] = []
    ) {
        self.title = title
        self.subtitle = subtitle
        self.image = image
        self.synonyms = synonyms
    }

    public init(stringLiteral value: String) { self.init(title: LocalizedStringResource(value)) }
    public init(stringInterpolation: DefaultStringInterpolation) {
        self.init(title: LocalizedStringResource(stringInterpolation: stringInterpolation))
    }
}

/// How a type is named to a person ("Note Color").
public struct TypeDisplayRepresentation: Sendable, ExpressibleByStringInterpolation {
    public var name: LocalizedStringResource
    public var numericFormat: LocalizedStringResource?

    /// - Parameters:
    ///   - name: The type's name.
    ///   - numericFormat: How a count of it is said (for example "\(placeholder: .int) items").
    public init(name: LocalizedStringResource, numericFormat: LocalizedStringResource? = nil) {
        self.name = name
        self.numericFormat = numericFormat
    }

    public init(stringLiteral value: String) { self.init(name: LocalizedStringResource(value)) }
    public init(stringInterpolation: DefaultStringInterpolation) {
        self.init(name: LocalizedStringResource(stringInterpolation: stringInterpolation))
    }
}

/// A type that names itself to a person.
public protocol TypeDisplayRepresentable {
    static var typeDisplayRepresentation: TypeDisplayRepresentation { get }
}

/// A type with a fixed set of values, each with its display representation.
public protocol CaseDisplayRepresentable: CaseIterable, Hashable {
    static var caseDisplayRepresentations: [Self: DisplayRepresentation] { get }
}

/// Both: the type's name and its cases'.
public protocol StaticDisplayRepresentable: CaseDisplayRepresentable, TypeDisplayRepresentable {}
