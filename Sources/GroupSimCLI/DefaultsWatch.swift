import ArgumentParser
import DefaultsCLI

extension DefaultsCommand {
    /// `groupsim defaults watch DOMAIN [KEY...]`: prints effective changes as they happen.
    struct Watch: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print each change of a domain's effective values as it happens, from any process.",
            discussion: """
                Text lines for people; with --json one object per line for scripts: \
                {"event":"change","domain","key","old","new","origin","valueDomain","time"}. \
                A {"event":"ready"} line comes first, and {"event":"overflow"} if the kernel's event \
                queue overflowed (every value is then reloaded, so no final state is missed).
                """
        )
        @OptionGroup var options: DomainOptions
        @Flag(help: "One JSON object per line.") var json = false
        @Argument var domain: String
        @Argument(help: "Only these keys (all keys if none).") var keys: [String] = []

        func run() throws {
            try DomainWatch.run(options: options, json: json, domain: domain, keys: keys)
        }
    }
}
