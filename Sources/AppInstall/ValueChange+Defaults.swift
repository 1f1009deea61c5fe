import AppProtocol
import GroupDefaults

extension ValueChange {
    /// The protocol's form of an observed change: what the simulated apps and
    /// `defaults watch --json` both print.
    package init(_ change: DefaultsChange) {
        self.init(
            key: change.key, old: change.old, new: change.new, origin: change.origin.rawValue,
            domain: change.changedDomain, valueDomain: change.valueDomain)
    }
}
