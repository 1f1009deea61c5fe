import AppProtocol
import Foundation
import PropertyList

/// A check and where it is written.
package struct LocatedCheck: Sendable, Equatable {
    package let check: Check
    package let line: Int

    package init(check: Check, line: Int) {
        self.check = check
        self.line = line
    }

    /// The same check, wherever it is written.
    package static func == (lhs: LocatedCheck, rhs: LocatedCheck) -> Bool { lhs.check == rhs.check }
}

/// A check on the resulting state.
package enum Check: Sendable, Equatable {
    case value(process: String, key: String, value: PlistValue??, domain: String?, suite: SuiteChoice = .processDefault)
    /// What a typed getter returns in the process (`bool(forKey:)` …; Some(nil): nil).
    case typedValue(process: String, key: String, as: TypedRead, value: PlistValue?, suite: SuiteChoice = .processDefault)
    /// `times`: how many matching events (nil: at least one).
    case saw(process: String, EventMatcher, times: CountBound?)
    case notSaw(process: String, EventMatcher)
    case card(process: String, [String: PlistValue?])
    /// What the process's last `ready` said in its info (`launch`, `protectedData` …; nil: not said).
    case readyInfo(process: String, [String: PlistValue?])
    case file(FileCheck)
    case acknowledged(process: String)
    case exit(process: String, status: Int32)
    /// What a process's `NSUbiquitousKeyValueStore` returns for a key (Some(nil): absent).
    case cloudValueIn(process: String, key: String, value: PlistValue?)
    /// The process's search list, in order.
    case searchList(process: String, [String], suite: SuiteChoice = .processDefault)
    /// `objectIsForced(forKey:)` of the process's instance, or `objectIsForced(forKey:inDomain:)` with `inDomain`.
    case forced(process: String, key: String, inDomain: String?, forced: Bool, suite: SuiteChoice = .processDefault)
    case cloud(CloudCheck)
    /// What the process wrote: a kept line contains `contains` or matches `pattern` (on `stream`, or either).
    case output(process: String, contains: String?, pattern: String?, stream: String?)

    /// The process this check asks over the control protocol, if any.
    package var controlledProcess: String? {
        switch self {
        case .value(let process, _, _, _, _), .typedValue(let process, _, _, _, _), .card(let process, _), .readyInfo(let process, _),
            .acknowledged(let process),
            .cloudValueIn(let process, _, _), .searchList(let process, _, _), .forced(let process, _, _, _, _):
            process
        case .saw(let process, let matcher, _), .notSaw(let process, let matcher): matcher.needsControl ? process : nil
        case .file, .exit, .cloud, .output: nil
        }
    }
}

package struct FileCheck: Sendable, Equatable {
    package enum Condition: Sendable, Equatable {
        case value(key: String, PlistValue)
        case absent(key: String)
        case count(Int)
        /// How many keys match a pattern (`*` for any text), e.g. every key of a burst.
        case countMatching(pattern: String, Int)
        case length(key: String, Int)
        case intact
        case movedAside
    }
    package let domain: String
    package let device: String?
    /// Read the domain inside this app's container (its private copy).
    package let app: String?
    package let condition: Condition

    package init(domain: String, device: String?, app: String?, condition: Condition) {
        self.domain = domain
        self.device = device
        self.app = app
        self.condition = condition
    }
}

/// How many of something a check wants: exactly N (`times: 3`), or within
/// bounds (`times: { at-least: 2 }`, `{ at-most: 5 }`, or both).
package struct CountBound: Sendable, Equatable, CustomStringConvertible {
    package var atLeast: Int
    package var atMost: Int?

    package init(atLeast: Int, atMost: Int?) {
        self.atLeast = atLeast
        self.atMost = atMost
    }

    package static func exactly(_ count: Int) -> CountBound { CountBound(atLeast: count, atMost: count) }

    package func holds(for count: Int) -> Bool { count >= atLeast && atMost.map { count <= $0 } ?? true }

    package var description: String {
        switch (atLeast, atMost) {
        case (let low, let high?) where low == high: "exactly \(low) time(s)"
        case (let low, let high?) where low > 0: "from \(low) to \(high) times"
        case (_, let high?): "at most \(high) time(s)"
        default: "at least \(atLeast) time(s)"
        }
    }
}
