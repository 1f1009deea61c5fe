import ArgumentParser
import DefaultsCLI
import Foundation
import GroupDefaults
import PropertyList
import SharedFiles
import Terminal

/// `groupsim defaults`: macOS's `defaults` over the simulated devices.
struct DefaultsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "defaults",
        abstract: "Read and write simulated defaults domains, like macOS `defaults`.",
        discussion: """
            A DOMAIN is an app's bundle id (com.example.app), an app-group id (group.com.example.app), \
            or NSGlobalDomain (-g). Options (--root, --device, --app) go after the subcommand and before the domain: \
            groupsim defaults read --device iPad com.example.app.
            """,
        subcommands: [
            Read.self, ReadType.self, Write.self, Rename.self, Delete.self, Domains.self, Find.self,
            Import.self, Export.self, Watch.self,
        ]
    )
}

extension DefaultsCommand {
    struct Read: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a domain, one key, or every domain on the device.")
        @OptionGroup var options: DomainOptions
        @Argument(help: "The domain; all domains if omitted.") var domain: String?
        @Argument(help: "The key; the whole domain if omitted.") var key: String?

        func run() throws {
            let files = try options.files
            guard let domain else {
                // Every readable domain is shown; one that cannot be read is
                // reported after them and makes the exit status 1.
                var all: [String: PlistValue] = [:]
                var unreadable: [(domain: String, error: any Error)] = []
                for name in try files.allDomains() {
                    do { all[name] = .dictionary(try files.read(name) ?? [:]) } catch {
                        unreadable.append((name, error))
                    }
                }
                print(OldStylePropertyList.describe(.dictionary(all)))
                guard unreadable.isEmpty else { throw GroupSimCLIError.unreadableDomains(unreadable) }
                return
            }
            guard let contents = try files.read(domain) else {
                throw GroupSimCLIError.noDomain(domain: domain, path: try files.location(of: domain).path)
            }
            guard let key else { return print(OldStylePropertyList.describe(.dictionary(contents))) }
            guard let value = contents[key] else {
                throw GroupSimCLIError.noPair(domain: domain, key: key)
            }
            if case .string(let text) = value { print(text) } else { print(OldStylePropertyList.describe(value)) }
        }
    }

    struct ReadType: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "read-type", abstract: "Print the type of a key's value.")
        @OptionGroup var options: DomainOptions
        @Argument var domain: String
        @Argument var key: String

        func run() throws {
            guard let value = try options.files.read(domain)?[key] else {
                throw GroupSimCLIError.noPair(domain: domain, key: key)
            }
            print("Type is \(value.typeName)")
        }
    }

    struct Write: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a key, or replace a whole domain.",
            discussion: """
                write DOMAIN KEY VALUE               a string, or a property list if VALUE starts with { ( [ < "
                write DOMAIN KEY -string|-int|-float|-bool|-date|-data VALUE
                write DOMAIN KEY -array V... | -array-add V...      (elements may be typed: -int 5)
                write DOMAIN KEY -dict K V... | -dict-add K V...
                write DOMAIN KEY -int-add N          atomic counter
                write DOMAIN '{ key = value; }'      replaces the domain
                -array-add, -dict-add and -int-add are atomic read-modify-writes across processes.
                """
        )
        @OptionGroup var options: DomainOptions
        @Argument var domain: String
        @Argument(parsing: .captureForPassthrough, help: "KEY and VALUE, or a whole-domain property list.")
        var words: [String] = []

        func run() throws {
            let request: DefaultsWriteRequest
            do { request = try DefaultsWriteRequest.parse(words) } catch let error as DefaultsWriteRequest.ParseError {
                // The message says what was wrong and how to write it: the general usage would only bury it.
                FileHandle.standardError.write(Data("Error: \(error.description)\n".utf8))
                throw ExitCode(64)
            }
            try options.files.update(domain) { contents in try request.apply(to: &contents) }
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a key, keeping its value.")
        @OptionGroup var options: DomainOptions
        @Argument var domain: String
        @Argument var oldKey: String
        @Argument var newKey: String

        func run() throws {
            guard try options.files.read(domain) != nil else {
                throw GroupSimCLIError.noDomainToChange(domain: domain)
            }
            var missing = false
            try options.files.update(domain) { contents in
                guard let value = contents.removeValue(forKey: oldKey) else {
                    missing = true
                    return
                }
                contents[newKey] = value
            }
            if missing { throw GroupSimCLIError.noKeyToRename(key: oldKey, domain: domain) }
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a key, or a whole domain.")
        @OptionGroup var options: DomainOptions
        @Argument var domain: String
        @Argument var key: String?

        func run() throws {
            let files = try options.files
            guard let key else {
                guard try files.delete(domain) else {
                    throw GroupSimCLIError.noDomainToChange(domain: domain)
                }
                return
            }
            guard try files.read(domain) != nil else {
                throw GroupSimCLIError.noDomainToChange(domain: domain)
            }
            var missing = false
            try files.update(domain) { contents in missing = contents.removeValue(forKey: key) == nil }
            if missing { throw GroupSimCLIError.noKeyToDelete(key: key, domain: domain) }
        }
    }

    struct Domains: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the domains that have a file on the device.")
        @OptionGroup var options: DomainOptions

        func run() throws {
            print(try options.files.allDomains().filter { $0 != DomainName.global }.joined(separator: ", "))
        }
    }

    struct Find: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Search every domain's keys and values for a word (case-insensitive).")
        @OptionGroup var options: DomainOptions
        @Argument var word: String

        func run() throws {
            let files = try options.files
            let needle = word.lowercased()
            for domain in try files.allDomains() {
                let contents = try files.read(domain) ?? [:]
                let hits = contents.filter { key, value in
                    key.lowercased().contains(needle) || OldStylePropertyList.describe(value).lowercased().contains(needle)
                }
                guard !hits.isEmpty else { continue }
                print(
                    "Found \(hits.count) key\(hits.count == 1 ? "" : "s") in domain '\(domain)': \(OldStylePropertyList.describe(.dictionary(hits)))")
            }
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Replace a domain with a property-list file (binary or XML), or - for stdin.")
        @OptionGroup var options: DomainOptions
        @Argument var domain: String
        @Argument var path: String

        func run() throws {
            let data = path == "-" ? FileHandle.standardInput.readDataToEndOfFile() : try readFile(path)
            let contents: [String: PlistValue]
            do { contents = try PropertyListFormat.decodeDictionary(data) } catch {
                throw ValidationError("'\(path)' is not a property-list dictionary: \(errorClause(error)). Nothing was imported.")
            }
            try options.files.update(domain) { $0 = contents }
        }

        func readFile(_ path: String) throws -> Data {
            do { return Data(try readNamedFile(path)) } catch {
                throw ValidationError("cannot read '\(path)': \(errorClause(error)). Nothing was imported.")
            }
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write a domain to a file (binary), or as XML to stdout with -.")
        @OptionGroup var options: DomainOptions
        @Argument var domain: String
        @Argument var path: String

        func run() throws {
            guard let contents = try options.files.read(domain) else {
                throw GroupSimCLIError.noDomain(domain: domain, path: nil)
            }
            if path == "-" {
                StandardOutput.write(PropertyListFormat.xml.encode(.dictionary(contents)))
            } else {
                try PropertyListFormat.binary.encode(.dictionary(contents)).write(to: URL(fileURLWithPath: path), options: .atomic)
            }
        }
    }
}
