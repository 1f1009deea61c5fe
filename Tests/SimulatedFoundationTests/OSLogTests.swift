import SimulatedOSLog
import Testing

/// Settings code that logs as apps do (`import os`) builds on Linux with
/// `import SimulatedOSLog`, and its messages read as Apple renders them.
struct OSLogTests {
    @Test func aLoggersMessageIsRenderedWithItsOptions() {
        let logger = Logger(subsystem: "com.example.notes", category: "settings")
        let theme = "dark"
        let count = 42
        let message: OSLogMessage = """
            theme \(theme, privacy: .public) count \(count, format: .hex, align: .right(columns: 4)) ratio \(0.5, format: .fixed(precision: 2)) \
            saved \(true, format: .answer) offset \(Int8(-5), format: .decimal(explicitPositiveSign: true, minDigits: 3)) \
            type \(Int.self) secret \(theme, privacy: .private(mask: .hash)) prefixed \(255, format: .hex(includePrefix: true, uppercase: true))
            """
        #expect(message.rendered == "theme dark count   2a ratio 0.50 saved YES offset -005 type Int secret dark prefixed 0xFF")
        #expect(logger.line(level: .info, message.rendered) == "Info: [com.example.notes:settings] \(message.rendered)")
        #expect(Logger().line(level: .fault, "x") == "Fault: x")
    }

    /// `os_log`'s printf formats take their values whatever the privacy annotation.
    @Test func osLogFormatsLoseOnlyTheirPrivacyAnnotations() {
        #expect(OSLogOutput.withoutPrivacy("%{public}@ has %{private}d notes, %d%%") == "%@ has %d notes, %d%%")
    }
}
