import Foundation
import TestSupport
import Testing

/// A scenario that shows one of Apple's traps must fail when the behaviour
/// it shows is switched off: each case runs a copy of a file in scenarios/
/// with one setting changed, and the copy must fail for the reason given.
/// (The files themselves pass with the whole suite.)
@Suite struct TrapScenarioMutationTests {
    struct Mutation: CustomTestStringConvertible, Sendable {
        let file: String
        let replacing: String
        let with: String
        let reason: String
        var testDescription: String { "\(file): \(with)" }
    }

    static let mutations = [
        // With every change heard, the dotted key's widget reloads: the quiet step sees a render.
        Mutation(
            file: "kvo-dotted-key-widget-never-updates.yaml", replacing: "observer: key-value-observing", with: "observer: any-change",
            reason: "render"),
        // Hearing other processes' changes, the notification widget reloads before it is asked to.
        Mutation(
            file: "did-change-notification-misses-other-processes.yaml", replacing: "observer: did-change-notification",
            with: "observer: any-change", reason: "render"),
        // Run in the extension, the intent is another process's write: the app never hears it as its own.
        Mutation(
            file: "in-app-intent-seen-at-once.yaml", replacing: "intents: in-app", with: "intents: extension",
            reason: "app should have seen change, key lastNote, origin this-process"),
        // Run in the extension, the intent never launches the app.
        Mutation(
            file: "in-app-intent-background-launch.yaml", replacing: "intents: in-app", with: "intents: extension",
            reason: "app was never launched"),
        // Managed preferences are per domain: the app's bundle forcing theme does not reach the suite the app reads.
        Mutation(
            file: "managed-forced-value-wins.yaml", replacing: "managed: { suite: group.com.example.notes, key: theme, value: dark }",
            with: "managed: { app: com.example.notes, key: theme, value: dark }", reason: #"no change, key theme, value "dark""#),
        // The new configuration goes to another bundle: nothing reaches the running app.
        Mutation(
            file: "managed-app-configuration.yaml", replacing: #"managed: { app: com.example.notes, config: { serverURL: "https://mdm2"#,
            with: #"managed: { app: com.example.notes.intents, config: { serverURL: "https://mdm2"#,
            reason: "no change, origin other-process, mechanism did-change-notification"),
        // Forced for the app group instead of the app: now the suite the app reads is managed, and the quiet step hears it.
        Mutation(
            file: "managed-app-keys-not-in-suite.yaml", replacing: "managed: { app: com.example.notes, key: theme, value: dark }",
            with: "managed: { suite: group.com.example.notes, key: theme, value: dark }", reason: "change"),
        // Containers without data protection: the prewarmed app reads the user's 41, nothing is lost.
        Mutation(
            file: "reboot-counter-lost.yaml", replacing: "protection: until-first-unlock", with: "protection: none",
            reason: "streak"),
        // The fixed app trusting its reads again: it comes up while the device is locked.
        Mutation(
            file: "reboot-counter-kept.yaml", replacing: "protected-data: wait-for-unlock", with: "protected-data: trust-reads",
            reason: "app should have had no ready"),
        // With no budget the background app's reloads all go through: the app is never told one was deferred.
        Mutation(
            file: "widget-budget-stale-after-budget-spent.yaml", replacing: "reload-budget: 2", with: "reload-budget: unlimited",
            reason: #"no warning, message containing "budget of 2 reloads""#),
        // On iOS the same cache is never warned about (nor ends the app).
        Mutation(
            file: "size-limit-tvos-terminated.yaml", replacing: "platform: tvOS", with: "platform: iOS",
            reason: "no warning, kind size-limit-exceeded"),
        // Just under 4 MiB, CFPreferences says nothing.
        Mutation(
            file: "size-limit-ios-logs-at-4mib.yaml", replacing: "key: imageCache, bytes: 1500000", with: "key: imageCache, bytes: 1000000",
            reason: "no warning, kind size-limit-log"),
        // Without cfprefsd's cache the app hears the hand edit (at once, or by the check's read).
        Mutation(
            file: "macos-cache-direct-edit-ignored.yaml", replacing: "platform: macOS }", with: "platform: macOS, preferences-cache: false }",
            reason: #""dark""#),
        // Without cfprefsd's cache the defaults tool writes over the edited file: the edit stays (the app hears it too).
        Mutation(
            file: "macos-cache-defaults-write-after-direct-edit.yaml", replacing: "platform: macOS }",
            with: "platform: macOS, preferences-cache: false }", reason: #""dark""#),
        // The same change made by hand instead of through the defaults tool never reaches the app.
        Mutation(
            file: "macos-cache-defaults-write-seen.yaml", replacing: "defaults: [write, group.com.example.notes, theme, -string, dark]",
            with: "edit-file: { domain: group.com.example.notes, key: theme, value: dark }", reason: #"no change, key theme, value "dark""#),
        // Uploaded at once, the taps reach the iPad as notifications of their own (as many as the agent's uploads:
        // paced on the device's clock, two taps may share one): the app's tally is right by luck.
        Mutation(
            file: "cloud/throttle-app-assumed-each-write.yaml", replacing: "upload-interval-ms: 15000", with: "upload-interval-ms: 0",
            reason: "exactly 2 time(s), saw it"),
        // Uploaded as they come, the paced burst's writes go up one by one.
        Mutation(
            file: "cloud/throttle-burst-coalesced.yaml", replacing: "upload-interval-ms: 15000", with: "upload-interval-ms: 0",
            reason: "iPhone's agent should have uploaded 2 change(s)"),
        // From the background, the second reload is past the budget of one: the widget stays stale.
        Mutation(
            file: "widget-budget-foreground-reloads-free.yaml", replacing: "  app: { role: main-app }",
            with: "  app: { role: main-app, launch: background }",
            reason: #"no render, reason reload-request, card lastNote="two""#),
        // Uploaded before the first download, the iPad's newer write wins over the cloud's value.
        Mutation(
            file: "cloud/throttle-write-before-first-download.yaml", replacing: "iPad: { account: alice, online: false }",
            with: "iPad: { account: alice, online: false, writes-before-first-download: kept }", reason: "initial-sync-change"),
    ]

    @Test(arguments: mutations) func theMutatedCopyFails(_ mutation: Mutation) throws {
        let folder = TemporaryRoot()
        let original = try String(contentsOfFile: FileManager.default.currentDirectoryPath + "/scenarios/" + mutation.file, encoding: .utf8)
        try #require(original.components(separatedBy: mutation.replacing).count == 2, "\(mutation.file) says '\(mutation.replacing)' once")
        let path = folder.path + "/" + mutation.file
        // The copy runs elsewhere: an exec: path into the build folder is made absolute.
        let build = FileManager.default.currentDirectoryPath + "/.build/"
        // A quiet step fails as soon as what it must not see comes: in the copy its window is long, so a starved
        // machine's slow propagation cannot pass the broken scenario.
        let mutated = original.replacingOccurrences(of: mutation.replacing, with: mutation.with).replacingOccurrences(of: "../.build/", with: build)
            .replacingOccurrences(of: #"(- quiet: \{[^}]*seconds: )[0-9.]+"#, with: "$160", options: .regularExpression)
        #expect(mutated.contains("seconds: 60") || !original.contains("- quiet:"), "the copy's quiet steps wait 60 s")
        // A scenario of a subfolder (cloud/) is copied into the same subfolder.
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try mutated.write(toFile: path, atomically: true, encoding: .utf8)
        let tmp = folder.path + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        let result = try runBounded(BuiltExecutable.path("groupsim"), ["run", path], environment: ["TMPDIR": tmp, "NO_COLOR": "1"], timeout: 120)
        #expect(result.status == 1, "the mutated copy should fail: \(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains(mutation.reason), "\(result.stdout)")
    }
}
