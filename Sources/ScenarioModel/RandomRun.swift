import CloudModel
import Foundation
import PropertyList

/// A randomized run: from a seed, a history of operations by the app and the
/// widget on an iPhone and the app on an iPad, each device with its own
/// app-group suite and two more suites a process may add, both devices
/// signed in to one iCloud account. Writes, removals, atomic increments and
/// appends, concurrent writes, the intent extension run once, restarts with
/// launch arguments, registered defaults, added and removed suites, kill -9
/// and suspension, a corrupted file, a device erased; on the iCloud store,
/// writes and removals from both devices (also at the same moment) under
/// the cloud's faults: devices offline, partitioned, pushes dropped or
/// doubled, agents and the cloud killed and restarted. It is written as an
/// ordinary scenario whose checks are what a model predicts (`RandomWorld`).
/// The same seed gives the same history; a failing history is shrunk to the
/// smallest that still fails.
package struct RandomRun: Sendable {
    package let seed: UInt64
    package var operations: [Operation]

    /// One operation of the history. Writes are followed by `synchronize`, so
    /// the commit order is the step order and the model can predict the file.
    /// Operations that flip a state (`toggle…`) mean "the other state", so a
    /// history with some operations taken out (shrinking) is still valid.
    package enum Operation: Sendable, Equatable {
        case set(process: String, key: String, value: Int)
        case remove(process: String, key: String)
        case increment(process: String, counter: String, by: Int)
        case append(process: String, value: Int)
        /// The app and the widget write two different keys at the same time.
        case concurrent(appKey: String, appValue: Int, widgetKey: String, widgetValue: Int)
        /// Restarted with `-KEY VALUE` launch arguments (none: an empty list).
        case restart(process: String, arguments: [String: String])
        /// kill -9, then launched again (with no arguments).
        case killAndRelaunch(process: String)
        /// The widget is suspended while the app writes, then resumed.
        case suspendedWhileAppWrites(key: String, value: Int)
        /// `register(defaults:)` in one process: seen there only, below the suite.
        case register(process: String, key: String, value: Int)
        /// The suite's file replaced by bytes that are not a property list;
        /// the app's next write (which follows) moves it aside and starts afresh.
        case corruptThenWrite(key: String, value: Int)
        /// The intent extension run once on a device: CountNote (noteCount + 1) or AddNote (appends to notes).
        case intent(device: String, count: Bool, text: Int)
        /// Every container and preference of a device erased under its
        /// running processes (its iCloud account too: it signs in again, and
        /// its app is restarted).
        case eraseDevice(String)
        /// `addSuite(named:)` if the process has not added the suite, else `removeSuite(named:)`.
        case toggleSuite(process: String, suite: String)
        /// `NSUbiquitousKeyValueStore.set` in a device's app; values are unique in a history.
        case kvsSet(process: String, key: String, value: Int)
        /// `removeObject` on the store, of a key the device's app has set (see `RandomWorld`).
        case kvsRemove(process: String, key: String)
        /// Both devices' apps set one key at the same moment.
        case kvsConcurrent(key: String, appValue: Int, padValue: Int)
        /// The device goes offline, or back online.
        case toggleOnline(device: String)
        /// The cloud cuts the device off, or heals it (only while the cloud runs).
        case togglePartition(device: String)
        /// The cloud drops (or delivers twice) the next pushes to the device.
        case pushFault(device: String, duplicate: Bool, count: Int)
        /// kill -9 of the device's sync agent, or its restart.
        case toggleAgent(device: String)
        /// kill -9 of the cloud, or its restart (same port, same data).
        case toggleCloud
        /// The iPad's app writes and removes `rounds` × 1000 keys of its own,
        /// more removals than a store keeps: the cloud and every copy forget
        /// the oldest, and the cloud's horizon moves (`RandomWorld.churn`).
        case kvsChurn(rounds: Int)
        /// Every fault ended, then the devices and the cloud must agree with the model.
        case quiesce
    }

    static let processes = ["app", "widget", "pad"]
    static let devices = ["iPhone", "iPad"]
    static func device(of process: String) -> String { process == "pad" ? "iPad" : "iPhone" }
    /// The process of a device that has the iCloud store (the widget has none).
    static func cloudApp(on device: String) -> String { device == "iPad" ? "pad" : "app" }
    static let suite = "group.com.example.notes"
    static let addedSuites = ["group.com.example.extra1", "group.com.example.extra2"]
    static let keys = ["k0", "k1", "k2", "k3"]
    static let counters = ["c0", "c1"]
    static let list = "l0"
    static let store = "com.example.notes"
    static let kvsKeys = ["v0", "v1", "v2"]

    /// The history a seed gives.
    package static func generate(seed: UInt64, length: Int) -> RandomRun {
        var random = SplitMix64(seed: seed)
        var operations: [Operation] = []
        var nextCloudValue = 1
        func cloudValue() -> Int {
            defer { nextCloudValue += 1 }
            return nextCloudValue
        }
        for _ in 0..<length {
            let process = processes[random.next(below: processes.count)]
            let key = keys[random.next(below: keys.count)]
            let value = random.next(below: 1000)
            let device = devices[random.next(below: 2)]
            let cloudProcess = cloudApp(on: device)
            let cloudKey = kvsKeys[random.next(below: kvsKeys.count)]
            switch random.next(below: 143) {
            case 0..<30: operations.append(.set(process: process, key: key, value: value))
            case 30..<40: operations.append(.remove(process: process, key: key))
            case 40..<55: operations.append(.increment(process: process, counter: counters[random.next(below: 2)], by: 1 + random.next(below: 5)))
            case 55..<65: operations.append(.append(process: process, value: value))
            case 65..<77:
                var other = keys[random.next(below: keys.count)]
                if other == key { other = keys[(keys.firstIndex(of: key)! + 1) % keys.count] }
                operations.append(.concurrent(appKey: key, appValue: value, widgetKey: other, widgetValue: random.next(below: 1000)))
            case 77..<85:
                var arguments: [String: String] = [:]
                for _ in 0..<random.next(below: 3) { arguments[keys[random.next(below: keys.count)]] = "arg\(random.next(below: 100))" }
                operations.append(.restart(process: process, arguments: arguments))
            case 85..<88: operations.append(.killAndRelaunch(process: random.next(below: 2) == 0 ? "widget" : "pad"))
            case 88..<90: operations.append(.intent(device: device, count: random.next(below: 2) == 0, text: value))
            case 90..<94: operations.append(.suspendedWhileAppWrites(key: key, value: value))
            case 94..<97: operations.append(.register(process: process, key: key, value: value))
            case 97: operations.append(.eraseDevice(device))
            case 98..<100: operations.append(.corruptThenWrite(key: key, value: value))
            case 100..<107: operations.append(.toggleSuite(process: process, suite: addedSuites[random.next(below: addedSuites.count)]))
            case 107..<117: operations.append(.kvsSet(process: cloudProcess, key: cloudKey, value: cloudValue()))
            case 117..<121: operations.append(.kvsRemove(process: cloudProcess, key: cloudKey))
            case 121..<125: operations.append(.kvsConcurrent(key: cloudKey, appValue: cloudValue(), padValue: cloudValue()))
            case 125..<129: operations.append(.toggleOnline(device: device))
            case 129..<132: operations.append(.togglePartition(device: device))
            case 132..<135: operations.append(.pushFault(device: device, duplicate: random.next(below: 2) == 0, count: 1 + random.next(below: 3)))
            case 135..<138: operations.append(.toggleAgent(device: device))
            case 138..<140: operations.append(.toggleCloud)
            case 140: operations.append(.kvsChurn(rounds: 5))
            default: operations.append(.quiesce)
            }
        }
        return RandomRun(seed: seed, operations: operations)
    }

    /// The iPad's clock, off the iPhone's by an hour, by a day and an hour
    /// (past the day a stamp may lead the cloud's clock by), or by ten years
    /// (the most a clock may be off), ahead or behind, by seed: the two
    /// devices' writes are then ordered by their clocks alone, never by how
    /// close together the runner made them (a stamp past the lead is kept at
    /// the cloud's time plus a day, still ahead of the iPhone's).
    var padClockSkewMilliseconds: Int64 {
        let magnitudes: [Int64] = [3_600_000, 90_000_000, NetworkAction.skewRange.upperBound]
        return (seed % 2 == 0 ? 1 : -1) * magnitudes[Int((seed / 2) % 3)]
    }

    /// What each device's added suites hold before the processes start: a
    /// value for some of the keys, from the seed (strings, as `defaults
    /// write` of a whole domain in the old-style form makes them).
    var addedSuiteContents: [String: [String: [String: PlistValue]]] {
        var random = SplitMix64(seed: seed ^ 0x5EED_5017E5)
        var contents: [String: [String: [String: PlistValue]]] = [:]
        for device in Self.devices {
            for suite in Self.addedSuites {
                var values: [String: PlistValue] = [:]
                for key in Self.keys where random.next(below: 2) == 0 { values[key] = .string("x\(random.next(below: 1000))") }
                contents[device, default: [:]][suite] = values
            }
        }
        return contents
    }

    // MARK: Shrinking

    /// The smallest history (by removing operations, larger chunks first)
    /// for which `fails` still holds; `fails` runs it for real.
    package func shrunk(while fails: (RandomRun) -> Bool) -> RandomRun {
        var current = self
        var chunk = max(1, current.operations.count / 2)
        while chunk >= 1 {
            var start = 0
            var removedAny = false
            while start < current.operations.count {
                var candidate = current
                candidate.operations.removeSubrange(start..<min(start + chunk, candidate.operations.count))
                if fails(candidate) {
                    current = candidate
                    removedAny = true
                } else {
                    start += chunk
                }
            }
            if !removedAny || chunk == 1 { chunk /= 2 } else { chunk = max(1, chunk / 2) }
        }
        return current
    }
}
