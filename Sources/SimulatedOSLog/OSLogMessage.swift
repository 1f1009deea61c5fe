import Foundation

/// A message given to `Logger`: a string literal with interpolated values,
/// each with Apple's options. The values are read when the message is logged.
public struct OSLogMessage: ExpressibleByStringInterpolation, ExpressibleByStringLiteral {
    let interpolation: OSLogInterpolation

    public init(stringInterpolation: OSLogInterpolation) { interpolation = stringInterpolation }

    public init(stringLiteral value: String) {
        var interpolation = OSLogInterpolation(literalCapacity: value.count, interpolationCount: 0)
        interpolation.appendLiteral(value)
        self.interpolation = interpolation
    }

    /// The text as it is logged.
    package var rendered: String { interpolation.pieces.map { $0() }.joined() }
}

/// The pieces of a log message (Apple's `OSLogInterpolation`): literals and
/// values, each kept as a closure until the message is logged.
public struct OSLogInterpolation: StringInterpolationProtocol {
    var pieces: [() -> String] = []

    public init(literalCapacity: Int, interpolationCount: Int) { pieces.reserveCapacity(interpolationCount * 2 + 1) }

    public mutating func appendLiteral(_ literal: String) { pieces.append { literal } }

    /// A string value.
    /// - Parameters:
    ///   - argumentString: The string, evaluated only when the message is written.
    ///   - align: The column the value is padded to.
    ///   - privacy: How private the value is; every value is shown here.
    public mutating func appendInterpolation(
        _ argumentString: @autoclosure @escaping () -> String, align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto
    ) {
        pieces.append { align.apply(to: argumentString()) }
    }

    /// A value shown by its `description`.
    /// - Parameters:
    ///   - value: The value, evaluated only when the message is written.
    ///   - align: The column the value is padded to.
    ///   - privacy: How private the value is; every value is shown here.
    public mutating func appendInterpolation<T: CustomStringConvertible>(
        _ value: @autoclosure @escaping () -> T, align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto
    ) {
        pieces.append { align.apply(to: value().description) }
    }

    /// A type, shown by its name.
    /// - Parameters:
    ///   - value: The type, evaluated only when the message is written.
    ///   - align: The column the value is padded to.
    ///   - privacy: How private the value is; every value is shown here.
    public mutating func appendInterpolation(
        _ value: @autoclosure @escaping () -> any Any.Type, align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto
    ) {
        pieces.append { align.apply(to: String(describing: value())) }
    }

    /// An `Int`, written as `format` says.
    /// - Parameters:
    ///   - number: The number, evaluated only when the message is written.
    ///   - format: Decimal, hex or octal, with its options.
    ///   - align: The column the value is padded to.
    ///   - privacy: How private the value is; every value is shown here.
    public mutating func appendInterpolation(
        _ number: @autoclosure @escaping () -> Int, format: OSLogIntegerFormatting = .decimal, align: OSLogStringAlignment = .none,
        privacy: OSLogPrivacy = .auto
    ) {
        pieces.append { align.apply(to: format.apply(to: number())) }
    }

    /// Any fixed-width integer, written as `format` says.
    /// - Parameters:
    ///   - number: The number, evaluated only when the message is written.
    ///   - format: Decimal, hex or octal, with its options.
    ///   - align: The column the value is padded to.
    ///   - privacy: How private the value is; every value is shown here.
    public mutating func appendInterpolation<T: FixedWidthInteger>(
        _ number: @autoclosure @escaping () -> T, format: OSLogIntegerFormatting = .decimal, align: OSLogStringAlignment = .none,
        privacy: OSLogPrivacy = .auto
    ) {
        pieces.append { align.apply(to: format.apply(to: number())) }
    }

    /// A `Double`, written as `format` says (printf's conversions).
    /// - Parameters:
    ///   - number: The number, evaluated only when the message is written.
    ///   - format: Fixed, hex, exponential or hybrid, with its options.
    ///   - align: The column the value is padded to.
    ///   - privacy: How private the value is; every value is shown here.
    public mutating func appendInterpolation(
        _ number: @autoclosure @escaping () -> Double, format: OSLogFloatFormatting = .fixed, align: OSLogStringAlignment = .none,
        privacy: OSLogPrivacy = .auto
    ) {
        pieces.append { align.apply(to: format.apply(to: number())) }
    }

    /// A `Float`, written as `format` says (printf's conversions).
    /// - Parameters:
    ///   - number: The number, evaluated only when the message is written.
    ///   - format: Fixed, hex, exponential or hybrid, with its options.
    ///   - align: The column the value is padded to.
    ///   - privacy: How private the value is; every value is shown here.
    public mutating func appendInterpolation(
        _ number: @autoclosure @escaping () -> Float, format: OSLogFloatFormatting = .fixed, align: OSLogStringAlignment = .none,
        privacy: OSLogPrivacy = .auto
    ) {
        pieces.append { align.apply(to: format.apply(to: Double(number()))) }
    }

    /// A Boolean: `true`/`false`, or `YES`/`NO` with `.answer`.
    /// - Parameters:
    ///   - boolean: The value, evaluated only when the message is written.
    ///   - format: `.truth` or `.answer`.
    ///   - privacy: How private the value is; every value is shown here.
    public mutating func appendInterpolation(
        _ boolean: @autoclosure @escaping () -> Bool, format: OSLogBoolFormat = .truth, privacy: OSLogPrivacy = .auto
    ) {
        pieces.append { format == .answer ? (boolean() ? "YES" : "NO") : (boolean() ? "true" : "false") }
    }
}

/// How private a value is (`privacy:`). Every value is shown here (docs/api.md).
public struct OSLogPrivacy: Equatable, Sendable {
    enum Level: Equatable, Sendable { case `public`, `private`, sensitive, auto }
    let level: Level
    let mask: Mask

    public struct Mask: Equatable, Sendable {
        let hashes: Bool
        public static let hash = Mask(hashes: true)
        public static let none = Mask(hashes: false)
    }

    public static let `public` = OSLogPrivacy(level: .public, mask: .none)
    public static let `private` = OSLogPrivacy(level: .private, mask: .none)
    public static let sensitive = OSLogPrivacy(level: .sensitive, mask: .none)
    public static let auto = OSLogPrivacy(level: .auto, mask: .none)
    /// Private privacy with a mask (shown unmasked here).
    /// - Parameter mask: `.hash` or `.none`.
    /// - Returns: The privacy.
    public static func `private`(mask: Mask) -> OSLogPrivacy { OSLogPrivacy(level: .private, mask: mask) }
    /// Sensitive privacy with a mask (shown unmasked here).
    /// - Parameter mask: `.hash` or `.none`.
    /// - Returns: The privacy.
    public static func sensitive(mask: Mask) -> OSLogPrivacy { OSLogPrivacy(level: .sensitive, mask: mask) }
    /// Auto privacy with a mask (shown unmasked here).
    /// - Parameter mask: `.hash` or `.none`.
    /// - Returns: The privacy.
    public static func auto(mask: Mask) -> OSLogPrivacy { OSLogPrivacy(level: .auto, mask: mask) }
}

/// A value's column (`align:`): padded with spaces to `columns` characters.
public struct OSLogStringAlignment: Sendable {
    enum Side: Sendable { case none, left, right }
    let side: Side
    let columns: @Sendable () -> Int

    public static let none = OSLogStringAlignment(side: .none, columns: { 0 })
    /// Left-aligned in a column of at least `columns` characters.
    /// - Parameter columns: The column's width.
    /// - Returns: The alignment.
    public static func left(columns: @autoclosure @escaping @Sendable () -> Int) -> OSLogStringAlignment { .init(side: .left, columns: columns) }
    /// Right-aligned in a column of at least `columns` characters.
    /// - Parameter columns: The column's width.
    /// - Returns: The alignment.
    public static func right(columns: @autoclosure @escaping @Sendable () -> Int) -> OSLogStringAlignment { .init(side: .right, columns: columns) }

    func apply(to text: String) -> String {
        let padding = String(repeating: " ", count: max(0, columns() - text.count))
        switch side {
        case .none: return text
        case .left: return text + padding
        case .right: return padding + text
        }
    }
}

/// How an integer is written (`format:`).
public struct OSLogIntegerFormatting: Sendable {
    let radix: Int
    let explicitPositiveSign: Bool
    let includePrefix: Bool
    let uppercase: Bool
    let minDigits: @Sendable () -> Int

    public static let decimal = decimal()
    public static let hex = hex()
    public static let octal = octal()

    /// Decimal digits.
    /// - Parameters:
    ///   - explicitPositiveSign: Whether a positive number gets a `+`.
    ///   - minDigits: The fewest digits, zero-padded.
    /// - Returns: The formatting.
    public static func decimal(explicitPositiveSign: Bool = false, minDigits: @autoclosure @escaping @Sendable () -> Int = 0) -> Self {
        Self(radix: 10, explicitPositiveSign: explicitPositiveSign, includePrefix: false, uppercase: false, minDigits: minDigits)
    }

    /// Hexadecimal digits.
    /// - Parameters:
    ///   - explicitPositiveSign: Whether a positive number gets a `+`.
    ///   - includePrefix: Whether to write `0x` or `0`.
    ///   - uppercase: Whether letters are uppercase.
    ///   - minDigits: The fewest digits, zero-padded.
    /// - Returns: The formatting.
    public static func hex(
        explicitPositiveSign: Bool = false, includePrefix: Bool = false, uppercase: Bool = false,
        minDigits: @autoclosure @escaping @Sendable () -> Int = 0
    ) -> Self {
        Self(radix: 16, explicitPositiveSign: explicitPositiveSign, includePrefix: includePrefix, uppercase: uppercase, minDigits: minDigits)
    }

    /// Octal digits.
    /// - Parameters:
    ///   - explicitPositiveSign: Whether a positive number gets a `+`.
    ///   - includePrefix: Whether to write `0x` or `0`.
    ///   - uppercase: Whether letters are uppercase.
    ///   - minDigits: The fewest digits, zero-padded.
    /// - Returns: The formatting.
    public static func octal(
        explicitPositiveSign: Bool = false, includePrefix: Bool = false, uppercase: Bool = false,
        minDigits: @autoclosure @escaping @Sendable () -> Int = 0
    ) -> Self {
        Self(radix: 8, explicitPositiveSign: explicitPositiveSign, includePrefix: includePrefix, uppercase: uppercase, minDigits: minDigits)
    }

    func apply<T: FixedWidthInteger>(to number: T) -> String {
        var digits = String(number.magnitude, radix: radix, uppercase: uppercase)
        if digits.count < minDigits() { digits = String(repeating: "0", count: minDigits() - digits.count) + digits }
        if includePrefix { digits = (radix == 16 ? "0x" : radix == 8 ? "0" : "") + digits }
        let sign = number < 0 ? "-" : explicitPositiveSign ? "+" : ""
        return sign + digits
    }
}

/// How a floating-point number is written (`format:`), as printf writes it.
public struct OSLogFloatFormatting: Sendable {
    let conversion: Character
    let precision: (@Sendable () -> Int)?
    let explicitPositiveSign: Bool
    let uppercase: Bool

    public static let fixed = fixed(explicitPositiveSign: false, uppercase: false)
    public static let hex = hex(explicitPositiveSign: false, uppercase: false)
    public static let exponential = exponential(explicitPositiveSign: false, uppercase: false)
    public static let hybrid = hybrid(explicitPositiveSign: false, uppercase: false)

    /// printf's `%f` with a precision.
    /// - Parameters:
    ///   - precision: The digits after the point (for `%g`, significant digits).
    ///   - explicitPositiveSign: Whether a positive number gets a `+`.
    ///   - uppercase: Whether letters are uppercase.
    /// - Returns: The formatting.
    public static func fixed(precision: @autoclosure @escaping @Sendable () -> Int, explicitPositiveSign: Bool = false, uppercase: Bool = false)
        -> Self
    {
        Self(conversion: "f", precision: precision, explicitPositiveSign: explicitPositiveSign, uppercase: uppercase)
    }
    /// printf's `%f`.
    /// - Parameters:
    ///   - explicitPositiveSign: Whether a positive number gets a `+`.
    ///   - uppercase: Whether letters are uppercase.
    /// - Returns: The formatting.
    public static func fixed(explicitPositiveSign: Bool = false, uppercase: Bool = false) -> Self {
        Self(conversion: "f", precision: nil, explicitPositiveSign: explicitPositiveSign, uppercase: uppercase)
    }
    /// printf's `%a`.
    /// - Parameters:
    ///   - explicitPositiveSign: Whether a positive number gets a `+`.
    ///   - uppercase: Whether letters are uppercase.
    /// - Returns: The formatting.
    public static func hex(explicitPositiveSign: Bool = false, uppercase: Bool = false) -> Self {
        Self(conversion: "a", precision: nil, explicitPositiveSign: explicitPositiveSign, uppercase: uppercase)
    }
    /// printf's `%e` with a precision.
    /// - Parameters:
    ///   - precision: The digits after the point (for `%g`, significant digits).
    ///   - explicitPositiveSign: Whether a positive number gets a `+`.
    ///   - uppercase: Whether letters are uppercase.
    /// - Returns: The formatting.
    public static func exponential(precision: @autoclosure @escaping @Sendable () -> Int, explicitPositiveSign: Bool = false, uppercase: Bool = false)
        -> Self
    {
        Self(conversion: "e", precision: precision, explicitPositiveSign: explicitPositiveSign, uppercase: uppercase)
    }
    /// printf's `%e`.
    /// - Parameters:
    ///   - explicitPositiveSign: Whether a positive number gets a `+`.
    ///   - uppercase: Whether letters are uppercase.
    /// - Returns: The formatting.
    public static func exponential(explicitPositiveSign: Bool = false, uppercase: Bool = false) -> Self {
        Self(conversion: "e", precision: nil, explicitPositiveSign: explicitPositiveSign, uppercase: uppercase)
    }
    /// printf's `%g` with a precision.
    /// - Parameters:
    ///   - precision: The digits after the point (for `%g`, significant digits).
    ///   - explicitPositiveSign: Whether a positive number gets a `+`.
    ///   - uppercase: Whether letters are uppercase.
    /// - Returns: The formatting.
    public static func hybrid(precision: @autoclosure @escaping @Sendable () -> Int, explicitPositiveSign: Bool = false, uppercase: Bool = false)
        -> Self
    {
        Self(conversion: "g", precision: precision, explicitPositiveSign: explicitPositiveSign, uppercase: uppercase)
    }
    /// printf's `%g`.
    /// - Parameters:
    ///   - explicitPositiveSign: Whether a positive number gets a `+`.
    ///   - uppercase: Whether letters are uppercase.
    /// - Returns: The formatting.
    public static func hybrid(explicitPositiveSign: Bool = false, uppercase: Bool = false) -> Self {
        Self(conversion: "g", precision: nil, explicitPositiveSign: explicitPositiveSign, uppercase: uppercase)
    }

    func apply(to number: Double) -> String {
        let precisionPart = precision.map { ".\(max(0, min($0(), 64)))" } ?? ""
        let letter = uppercase ? String(conversion).uppercased() : String(conversion)
        return String(format: "%" + (explicitPositiveSign ? "+" : "") + precisionPart + letter, number)
    }
}

/// How a Bool is written (`format:`): true/false, or YES/NO.
public enum OSLogBoolFormat: Sendable {
    case truth, answer
}
