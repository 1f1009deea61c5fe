import SimulatedFoundation  // was: import Foundation

/// A home-screen widget's timeline: it renders an entry from the settings at
/// launch, and again whenever a shown setting changes, whoever changed it
/// (the app, the intent extension, iCloud through the app): key-value
/// observing tells it, from any process.
public final class WidgetTimeline: NSObject, @unchecked Sendable {  // `renders` is guarded by `lock`
    private let name: String
    private let defaults: UserDefaults
    private let lock = NSLock()
    private var renders = 0

    /// `defaults`: where the widget reads its settings.
    public init(name: String, defaults: UserDefaults) {
        self.name = name
        self.defaults = defaults
        super.init()
    }

    /// Observes the shown settings, then renders the first entry.
    public func start() {
        for key in SettingsKey.shown {
            defaults.addObserver(self, forKeyPath: key, options: [.new], context: nil)
        }
        render(reason: "launch")
    }

    public override func observeValue(
        forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?, context: UnsafeMutableRawPointer?
    ) {
        render(reason: "\(keyPath ?? "?") changed")
    }

    /// Renders an entry: one line with every shown setting.
    public func render(reason: String) {
        lock.withLock {
            renders += 1
            Console.say("\(name): render #\(renders) (\(reason)) \(settingsLine(defaults))")
        }
    }

    /// The widget's commands, read from standard input until `quit`.
    public func readCommands() {
        Console.readCommands(help: "commands: show, get KEY, quit") { command, rest in
            switch command {
            case "show", "reload": render(reason: "request")
            case "get": Console.say("\(rest)=\(describe(defaults.object(forKey: rest)))")
            default: Console.say("\(name): unknown command '\(command)' (help lists them)")
            }
        }
    }
}
