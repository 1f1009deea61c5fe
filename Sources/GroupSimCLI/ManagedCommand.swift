import AppModel
import ArgumentParser
import DefaultsCLI
import Foundation
import GroupDefaults
import PropertyList

/// `groupsim device managed DEVICE --app BUNDLE …`: an administrator (MDM)
/// forcing keys and pushing the managed app configuration; running apps see it at once.
struct ManagedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "managed", abstract: "Force keys or push the managed app configuration of an app on a device, as MDM does.",
        discussion: """
            set KEY VALUE       force KEY (VALUE as in defaults write: a string, a property list, or -int|-float|-bool|-date|-data|-string VALUE)
            remove KEY          stop forcing KEY (the app's own value shows again)
            config JSON         replace the managed app configuration (com.apple.configuration.managed), a JSON object
            show                print the managed preferences as JSON
            """)
    @Option(help: "Simulation root (default: $GROUPSIM_ROOT, else $XDG_DATA_HOME/groupsim, else ~/.local/share/groupsim).")
    var root: String?
    @Argument(help: "The device.") var device: String
    @Option(help: "The app's bundle identifier, or an app group (its suite's domain: managed preferences are per domain).") var app: String
    @Argument(help: "set, remove, config or show.") var action: String
    // Taken as words, so a typed value (-int 5) is a value, not an unknown option.
    @Argument(parsing: .allUnrecognized, help: "KEY VALUE, KEY or JSON.") var words: [String] = []

    static let actions = ["set", "remove", "config", "show"]

    func run() throws {
        let place = try SimulationRootValue(root: root, device: device)
        try place.requireKnownDevice()
        _ = try place.requireKnownContainer(app)
        guard Self.actions.contains(action) else {
            var message = "'\(action)' is not a managed-preferences action"
            if let guess = NameSuggestion.closest(to: action, among: Self.actions) { message += "; did you mean \(guess)?" }
            throw ValidationError(message + " (one of \(Self.actions.joined(separator: ", ")))")
        }
        if action == "show" {
            guard words.isEmpty else { throw ValidationError("show takes nothing after it, found \(words.joined(separator: " "))") }
            let contents = try ManagedPreferences.read(root: place.root, device: place.device, domain: app) ?? [:]
            print(PlistJSON.encode(.dictionary(contents)))
            return
        }
        let change = try Self.change(action, words)
        try ManagedPreferences.update(root: place.root, device: place.device, domain: app) { change.apply(to: &$0) }
    }

    /// The change the words ask for, or a usage error saying what was wrong.
    static func change(_ action: String, _ words: [String]) throws -> ManagedChange {
        switch action {
        case "set":
            guard words.count >= 2 else { throw ValidationError("usage: set KEY VALUE (VALUE as in defaults write)") }
            let request: DefaultsWriteRequest
            do { request = try DefaultsWriteRequest.parse(words) } catch let error as DefaultsWriteRequest.ParseError {
                throw ValidationError(error.description)
            }
            guard case .set(let key, let value) = request else { throw ValidationError("set forces one value: set KEY VALUE") }
            return .set(key: key, value: value)
        case "remove":
            guard words.count == 1 else { throw ValidationError("usage: remove KEY") }
            return .remove(key: words[0])
        default:
            guard words.count == 1 else { throw ValidationError("usage: config JSON (one argument: quote the object)") }
            return .configuration(try configuration(from: words[0]))
        }
    }

    /// A JSON object as the managed configuration; anything else is refused, naming what it is.
    static func configuration(from json: String) throws -> [String: PlistValue] {
        let value: PlistValue
        do { value = try PlistJSON.decode(PlistJSON.parse(json), path: "config") } catch {
            throw ValidationError("config: not valid JSON: \(error)")
        }
        guard case .dictionary(let configuration) = value else {
            throw ValidationError("config: the managed app configuration is a dictionary (a JSON object), found \(value.typeNameWithArticle)")
        }
        return configuration
    }
}
