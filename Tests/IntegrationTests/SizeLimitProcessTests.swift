import AppProtocol
import Foundation
import PropertyList
import TestSupport
import Testing

/// A device's platform decides what a real app process does when its domain
/// grows: tvOS warns at 512 KiB, refuses the write that reaches 1 MiB and ends the process; iOS logs at 4 MiB.
@Suite struct SizeLimitProcessTests {
    let root = TemporaryRoot()

    func cache(_ bytes: Int) -> PlistValue { .data(Data(repeating: 0x2A, count: bytes)) }

    @Test func aTVOSAppIsWarnedThenTerminated() throws {
        #expect(try groupsim(["device", "create", "AppleTV", "--platform", "tvos"], root: root).status == 0)
        #expect(try groupsim(["device", "list"], root: root).stdout.contains("AppleTV  (tvOS, preferences cache off"))
        let app = try AppProcess("main-app", root: root, device: "AppleTV")
        try app.set("artwork", cache(300_000))
        _ = try app.request(.synchronize)
        try app.set("posters", cache(300_000))
        #expect(try app.warning(kind: "size-limit-exceeded").message.contains("over tvOS's warning size of 524288 bytes"))
        try app.set("trailers", cache(500_000))
        #expect(try app.warning(kind: "size-limit-terminated").message.contains("1048576 bytes"))
        #expect(try app.process.waitForTermination(timeout: 60).shellStatus == 128 + SIGABRT)
        // cfprefsd refused the write that would have reached the limit (appcenter-sdk-apple #2483's stack):
        // the next launch finds what the domain held before it.
        let relaunched = try AppProcess("main-app", root: root, device: "AppleTV")
        #expect(try relaunched.get("trailers").value == nil)
        #expect(try relaunched.get("posters").value == cache(300_000))
    }

    /// watchOS logs at 1 MiB that storing so much is invalid, says the byte
    /// count limit is reached, and the app crashes in the set (RevenueCat
    /// purchases-ios #5912, #5793): it followed iOS's 4 MiB log before.
    @Test func aWatchOSAppLogsAndEndsAt1MiB() throws {
        #expect(try groupsim(["device", "create", "Watch", "--platform", "watchOS"], root: root).status == 0)
        let app = try AppProcess("main-app", root: root, device: "Watch")
        try app.set("complications", cache(600_000))
        _ = try app.request(.synchronize)
        try app.set("etags", cache(600_000))
        let logged = try app.warning(kind: "size-limit-log")
        #expect(logged.message.contains("Attempting to store >= 1048576 bytes of data in CFPreferences/NSUserDefaults on this platform is invalid"))
        #expect(try app.warning(kind: "size-limit-terminated").message.contains("NSUserDefaults/CFPreferences byte count limit reached for"))
        #expect(try app.process.waitForTermination(timeout: 60).shellStatus == 128 + SIGABRT)
        let relaunched = try AppProcess("main-app", root: root, device: "Watch")
        #expect(try relaunched.get("etags").value == nil)
        #expect(try relaunched.get("complications").value == cache(600_000))
    }

    @Test func theSameGrowthOnIOSOnlyLogsAt4MiB() throws {
        let app = try AppProcess("main-app", root: root)
        try app.set("offline", cache(1_500_000))
        _ = try app.request(.synchronize)
        try app.set("images", cache(3_000_000))
        let logged = try app.warning(kind: "size-limit-log")
        #expect(logged.message.contains("Attempting to store >= 4194304 bytes of data in CFPreferences/NSUserDefaults on this platform is invalid"))
        try app.set("lastNote", "still running")
        #expect(try app.get("lastNote").value == "still running")
    }

    /// The limits are an app's: a tool writing the files from outside (`groupsim defaults`) and the device's
    /// iCloud store copies (whose limits are iCloud's) are never warned nor ended.
    @Test func toolsAndICloudCopiesAreNoAppsPreferences() throws {
        #expect(try groupsim(["device", "create", "AppleTV", "--platform", "tvOS"], root: root).status == 0)
        let big = String(repeating: "x", count: 1_200_000)
        let plist = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\"><dict><key>poster</key><string>\(big)</string></dict></plist>"
        let tool = try groupsim(
            ["defaults", "import", "--device", "AppleTV", "group.com.example.notes", "-"], root: root, stdin: Data(plist.utf8))
        #expect(tool.status == 0, "\(tool.stderr.prefix(500))")
        #expect(!tool.stderr.contains("Terminating") && !tool.stderr.contains("size"), "\(tool.stderr.prefix(500))")
        let app = try AppProcess("main-app", root: root, device: "AppleTV")
        #expect(try app.get("poster").value == .string(big))

        // On iOS, an iCloud store copy past 4 MiB (values over the quota stay on the device) is no defaults domain.
        let phone = try AppProcess("main-app", root: root)
        for index in 1...5 { _ = try phone.request(.cloudSet(key: "photo-\(index)", value: cache(1_000_000))) }
        _ = try phone.request(.cloudSynchronize)
        let warnings = phone.unconsumed.filter { if case .event(.warning(let kind, _), _) = $0 { kind.hasPrefix("size-limit") } else { false } }
        #expect(warnings.isEmpty, "\(warnings)")
    }

    @Test func badPlatformsAreRefusedNamingWhatToUse() throws {
        let create = try groupsim(["device", "create", "Box", "--platform", "android"], root: root)
        #expect(create.status != 0)
        #expect(
            create.stderr.contains("--platform: unknown platform \"android\"; use one of iOS, iPadOS, macOS, tvOS, watchOS, visionOS"),
            "\(create.stderr)")
        #expect(try groupsim(["device", "create", "Mac", "--platform", "macOS"], root: root).status == 0)
        #expect(try groupsim(["device", "settings", "Mac"], root: root).trimmedOutput == "Mac  macOS, preferences cache on")
        let changed = try groupsim(["device", "settings", "Mac", "--platform", "tvOS"], root: root)
        #expect(changed.trimmedOutput == "Mac  tvOS, preferences cache off", "\(changed.stderr)")
        let unknown = try groupsim(["device", "settings", "Mak"], root: root)
        #expect(unknown.stderr.contains("did you mean Mac?"), "\(unknown.stderr)")
        let cache = try groupsim(["device", "settings", "Mac", "--preferences-cache", "maybe"], root: root)
        #expect(cache.stderr.contains("--preferences-cache: 'maybe' is not on or off"), "\(cache.stderr)")
    }
}
