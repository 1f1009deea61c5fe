/// The file protection of a device's containers after a reboot (`ProtectedData` keeps it in the device's metadata;
/// the scenario step `reboot` and `groupsim device reboot` choose it).
package enum DataProtection: String, Sendable, CaseIterable {
    /// iOS's default for an app's container since iOS 7: unreadable from a reboot until the first unlock.
    case untilFirstUnlock = "until-first-unlock"
    /// NSFileProtectionNone: readable at any time (the protection switched off).
    case none
}
