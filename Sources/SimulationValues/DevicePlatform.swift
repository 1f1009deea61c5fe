import Foundation
import PropertyList

/// The Apple platform a simulated device stands for. It decides what a
/// growing domain does (docs/apple-traps.md, "Size limits per platform") and
/// whether the device's processes read through cfprefsd's cache ("cfprefsd's
/// cache on macOS").
package enum DevicePlatform: String, CaseIterable, Sendable {
    case iOS, iPadOS, macOS, tvOS, watchOS, visionOS

    package static let `default` = DevicePlatform.iOS

    /// The platform a name means (any case); an unknown name is refused with the list.
    package static func named(_ text: String) throws -> DevicePlatform {
        if let exact = DevicePlatform(rawValue: text) { return exact }
        if let platform = allCases.first(where: { $0.rawValue.lowercased() == text.lowercased() }) { return platform }
        throw DefaultsError.unknownPlatform(name: text)
    }

    /// What a domain's size does here. Apple documents a limit for tvOS only;
    /// CFPreferences logs at 4 MiB on iOS and macOS (forum reports); on
    /// watchOS it logs at 1 MiB that storing that much "on this platform is
    /// invalid", says "byte count limit reached", and the app crashes in
    /// `setObject:forKey:` (RevenueCat purchases-ios #5912 and #5793,
    /// nightguard #24; docs/apple-traps.md). visionOS and iPadOS are taken to
    /// behave as iOS (Apple is silent, and no report says otherwise).
    package var sizeLimits: DomainSizeLimits {
        switch self {
        case .tvOS: DomainSizeLimits(log: nil, warning: 512 << 10, termination: 1 << 20)
        case .watchOS: DomainSizeLimits(log: 1 << 20, warning: nil, termination: 1 << 20)
        case .iOS, .iPadOS, .macOS, .visionOS: DomainSizeLimits(log: 4 << 20, warning: nil, termination: nil)
        }
    }

    /// macOS processes read preferences through cfprefsd's cache.
    package var cachesPreferencesByDefault: Bool { self == .macOS }
}

/// The sizes (bytes of a domain's file) at which something happens.
package struct DomainSizeLimits: Sendable, Equatable {
    /// CFPreferences logs that storing this much is invalid (the write still lands).
    package var log: Int?
    /// The size-limit warning (tvOS's `sizeLimitExceededNotification`).
    package var warning: Int?
    /// The system terminates the process.
    package var termination: Int?
}

/// A device's settings, kept in its `device.plist` beside its name.
package struct DeviceSettings: Sendable, Equatable {
    package var platform: DevicePlatform
    /// Processes read through cfprefsd's cache: a file changed outside the store is not seen (see `PersistentDomain`).
    package var preferencesCache: Bool

    package static let platformKey = "platform"
    package static let preferencesCacheKey = "preferences-cache"

    /// `preferencesCache` nil: the platform's default.
    package init(platform: DevicePlatform = .default, preferencesCache: Bool? = nil) {
        self.platform = platform
        self.preferencesCache = preferencesCache ?? platform.cachesPreferencesByDefault
    }

    /// The settings a device's metadata holds; a device made before platforms existed is an iOS device.
    package init(metadata: [String: PlistValue], path: String) throws {
        let platform: DevicePlatform
        switch metadata[Self.platformKey] {
        case nil: platform = .default
        case .string(let name)?:
            do { platform = try DevicePlatform.named(name) } catch {
                throw DefaultsError.badDeviceSetting(
                    path: path, key: Self.platformKey, found: DefaultsError.show(name),
                    expected: DevicePlatform.allCases.map(\.rawValue).joined(separator: ", "))
            }
        case let other?:
            throw DefaultsError.badDeviceSetting(path: path, key: Self.platformKey, found: "\(other)", expected: "a platform name")
        }
        switch metadata[Self.preferencesCacheKey] {
        case nil: self.init(platform: platform)
        case .bool(let cached)?: self.init(platform: platform, preferencesCache: cached)
        case let other?:
            throw DefaultsError.badDeviceSetting(path: path, key: Self.preferencesCacheKey, found: "\(other)", expected: "true or false")
        }
    }

    /// The entries `device.plist` stores for these settings.
    package var metadata: [String: PlistValue] {
        [Self.platformKey: .string(platform.rawValue), Self.preferencesCacheKey: .bool(preferencesCache)]
    }
}
