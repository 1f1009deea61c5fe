import SimulatedFoundation

/// The examples as commands, so the tests can run each as a real process of
/// a simulated app (`groupsim exec --app … -- settings-examples COMMAND`)
/// and read what it saw: one `name=value` line per value.
public enum ExampleCommands {
    public static let usage = """
        usage: settings-examples COMMAND [ARGUMENTS] [-key value ...]
          reading-launch               register defaults, run loadSettings, show what the app sees
          reading-share MODE           store ReadingMode in the app group's suite
          reading-show                 ReadingMode from the group suite, HighScore from the standard defaults
          reading-watch COUNT          report ReadingMode changes in the group suite until COUNT were seen (10 minutes at most)
          profile [NAME]               the @UserDefault username (set it to NAME)
          cloud-mirror                 mirror sync- settings into the cloud-store stand-in
          cloud-mirror-watch           mirror sync- settings into the iCloud store as they change, until asked to exit
          theme-show                   ThemeController over the standard defaults
          theme-change THEME           ThemeController over the group suite: change the theme
          theme-group-show             ThemeController over the group suite
          theme-combined-show          ThemeController over the standard defaults with the group suite added
          editor-change BOOL TITLE     set ShowLineNumbers and TitleString, read them back
          editor-watch COUNT           report ShowLineNumbers changes until COUNT were seen (10 minutes at most)
          audio-save VOLUME BASS       save AudioPreferences
          audio-load                   load AudioPreferences
          audio-volume UNIT            the saved volume in UNIT (percent or fraction); another unit is an error (status 2)
          appearance-set NAME=VALUE…   omnibar, report, preference (k:v), username, theme; through the persistors
          appearance-show              what the persistors read from the group suite
          storage-show                 the @AppStorage settings view over the group suite, and what the suite holds
          storage-change THEME LAYOUT  change the view's theme (through $theme) and layout
          storage-widget               the theme as the widget reads the suite, and through its own @AppStorage
          wait-input                   read standard input until it ends, touching no defaults
          slow-setup SECONDS           take SECONDS to set up, then observe theme in the group suite and read standard input
          slow-observer SECONDS        observe theme in the group suite: print it, then take SECONDS before returning; read input
          intent [NAME KEY=VALUE…]     the App Intents' extension: perform one (or one per line of input) and exit
          intents-offer                an app whose App Intents run in its process: offer them, report notes, read input
          widget POLICY                the Notes widget's process (TimelineProvider: five hourly entries; at-end, after or never)
          widget-forgetful             a Notes widget whose provider never calls its completion
          widget-twice                 a Notes widget whose provider calls its completion twice
          widget-reload [KIND]         WidgetCenter.shared.reloadTimelines(ofKind:) (reloadAllTimelines() without KIND)
          widget-configurations        WidgetCenter.shared.getCurrentConfigurations: the running widgets, kind:family
          widget-folder|widget-standard|widget-theme|widget-favorite [group]|widget-intents|widget-refresher
                                       more widgets, their intents and their traps (WidgetExampleCommands.swift)
        """

    /// Runs one command; returns the exit status.
    public static func run(_ arguments: [String]) -> Int32 {
        guard let command = arguments.first else { return fail(usage) }
        let rest = Array(arguments.dropFirst()).filter { !$0.hasPrefix("-") }
        switch command {
        case "reading-launch":
            registerInitialPreferences()
            loadSettings()
            show("ReadingMode", UserDefaults.standard.string(forKey: "ReadingMode"))
            show("HighScore", UserDefaults.standard.object(forKey: "HighScore"))
            show("SettingsSaved", UserDefaults.standard.bool(forKey: "SettingsSaved"))
        case "reading-share":
            guard let mode = rest.first else { return fail("reading-share MODE") }
            shareReadingMode(mode)
            show("ReadingMode", UserDefaults.shared.string(forKey: "ReadingMode"))
        case "reading-show":
            show("ReadingMode", UserDefaults.shared.string(forKey: "ReadingMode"))
            show("HighScore", UserDefaults.standard.object(forKey: "HighScore"))
        case "reading-watch":
            guard let text = rest.first, let count = Int(text), count > 0 else { return fail("reading-watch COUNT") }
            return watchReadingMode(until: count)
        case "profile":
            var profile = Profile()
            if let name = rest.first {
                profile.username = name
                UserDefaults.standard.setValue(name, forKey: .name)
            }
            show("username", profile.username)
            show("highScore", profile.highScore)
            show("name", UserDefaults.standard.string(forKey: UserDefaults.AppKeys.name.rawValue))
        case "cloud-mirror":
            CloudDefaults.shared.start()
            UserDefaults.standard.set(42, forKey: "sync-score")
            UserDefaults.standard.set("not mirrored", forKey: "local-only")
            // Values arriving from the cloud are applied without being sent back.
            CloudDefaults.shared.updateLocal(from: ["sync-theme": "dark"])
            let mirrored = NSUbiquitousKeyValueStore.default.dictionaryRepresentation
            show("mirrored", mirrored.keys.sorted().map { "\($0):\(mirrored[$0]!)" }.joined(separator: ","))
            show("sync-theme", UserDefaults.standard.string(forKey: "sync-theme"))
        case "cloud-mirror-long-key":
            // A prefixed key over the store's 64 bytes: Apple's store raises, and the mirror has no way to catch it.
            CloudDefaults.shared.start()
            show("mirroring", "started")
            UserDefaults.standard.set(true, forKey: "sync-" + String(repeating: "x", count: 60))
            show("survived", "yes")
        case "cloud-mirror-watch":
            // The mirror left running: a key it mirrors past the store's 64 bytes ends the app (Apple's store raises).
            CloudDefaults.shared.start()
            sayReady()
            dispatchMain()  // the mirror's observer runs on the main queue; the program ends when asked to exit
        case "theme-show":
            show("theme", ThemeController().currentTheme.rawValue)
        case "theme-change":
            guard let name = rest.first, let theme = Theme(rawValue: name) else { return fail("theme-change light|dark|black") }
            let controller = ThemeController(defaults: .groupSuite)
            controller.changeTheme(to: theme)
            show("theme", controller.currentTheme.rawValue)
        case "theme-group-show":
            show("theme", ThemeController(defaults: .groupSuite).currentTheme.rawValue)
        case "theme-combined-show":
            show("theme", ThemeController(defaults: .combined).currentTheme.rawValue)
        case "editor-change":
            guard rest.count == 2 else { return fail("editor-change BOOL TITLE") }
            registerEditorDefaults()
            let read = changeEditorSettings(showLineNumbers: rest[0] == "true", title: rest[1])
            show("ShowLineNumbers", read.showLineNumbers)
            show("TitleString", read.title)
        case "editor-watch":
            guard let text = rest.first, let count = Int(text), count > 0 else { return fail("editor-watch COUNT") }
            return watchLineNumbers(until: count)
        case "audio-save":
            guard rest.count == 2, let volume = Double(rest[0]), let bass = Double(rest[1]) else { return fail("audio-save VOLUME BASS") }
            var audioPreferences = AudioPreferences.load()
            audioPreferences.volume = volume
            audioPreferences.bass = bass
            audioPreferences.save()
            showAudio(AudioPreferences.load())
        case "audio-load":
            showAudio(AudioPreferences.load())
        case "audio-volume":
            // A one-shot whose error path is a status of its own, as a command-line tool's usage errors are.
            guard let unit = rest.first else { return fail("audio-volume UNIT") }
            let volume = AudioPreferences.load().volume
            switch unit {
            case "percent": show("volume", Int((volume * 100).rounded()))
            case "fraction": show("volume", volume)
            default:
                FileHandle.standardError.write(Data("settings-examples: unknown unit '\(unit)' (percent or fraction)\n".utf8))
                return 2
            }
        case "appearance-set":
            return setAppearance(rest)
        case "appearance-show":
            showAppearance()
        case "storage-show":
            NotesApp.start()
            showSettingsView(SettingsView())
            show("stored-theme", UserDefaults(suiteName: appGroupIdentifier)!.object(forKey: "theme"))
        case "storage-change":
            guard rest.count == 2, let layout = NoteLayout(rawValue: rest[1]) else { return fail("storage-change THEME list|grid") }
            NotesApp.start()
            let view = SettingsView()
            let theme = view.$theme  // what the view hands its picker
            theme.wrappedValue = rest[0]
            view.layout = layout
            showSettingsView(view)
        case "storage-widget":
            show("theme", ThemeProvider().theme())
            show("widget-theme", ThemeWidgetView().theme)
        case "intent":
            NoteIntents.runOneShot(Array(arguments.dropFirst()))
        case "intents-offer":
            return NoteIntents.offer()
        case "wait-input":
            // A program busy with something else: its control channel still answers.
            show("ready", true)
            while readLine() != nil {}
        case "slow-setup":
            // An app whose launch takes a while (a database to open, say) before it observes its settings.
            guard let text = rest.first, let seconds = Double(text), (0...60).contains(seconds) else { return fail("slow-setup SECONDS") }
            Thread.sleep(forTimeInterval: seconds)
            let observation = GroupSim.observe(UserDefaults.shared, "theme") { change in show("theme", change.newValue) }
            while readLine() != nil {}
            withExtendedLifetime(observation) {}
        case "slow-observer":
            // An observer that prints what it saw, then has more to do (a thumbnail to draw, say) before it returns.
            guard let text = rest.first, let seconds = Double(text), (0...60).contains(seconds) else { return fail("slow-observer SECONDS") }
            let observation = GroupSim.observe(UserDefaults.shared, "theme") { change in
                show("theme", change.newValue)
                Thread.sleep(forTimeInterval: seconds)
            }
            sayReady()
            while readLine() != nil {}
            withExtendedLifetime(observation) {}
        case _ where command.hasPrefix("widget"):
            return WidgetExampleCommands.run(command, rest)
        default:
            return fail(usage)
        }
        return 0
    }

    /// The observers are registered: says so on stdout, and to the driver (its `launch` returns now).
    static func sayReady() {
        show("ready", true)
        GroupSim.ready()
    }

    static func show(_ name: String, _ value: Any?) {
        print("\(name)=\(value.map { "\($0)" } ?? "nil")")
        fflush(stdout)
    }

    static func fail(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("settings-examples: \(message)\n".utf8))
        return 64
    }

    /// How long a watch waits for its changes before it fails: long enough that a starved machine's slow launches do
    /// not end it first (its driver's own waits bound a test; a watch left behind ends with its owner).
    static let watchLimit: Double = 600

    static func watchLineNumbers(until count: Int) -> Int32 {
        registerEditorDefaults()
        let seen = DispatchSemaphore(value: 0)
        let observer = LineNumbersObserver()
        observer.configureObserver { line in
            print(line)
            fflush(stdout)
            seen.signal()
        }
        sayReady()
        for _ in 0..<count where seen.wait(timeout: .now() + watchLimit) == .timedOut {
            return fail("fewer than \(count) changes of ShowLineNumbers within \(Int(watchLimit)) s")
        }
        return withExtendedLifetime(observer) { 0 }
    }

    static func watchReadingMode(until count: Int) -> Int32 {
        let seen = DispatchSemaphore(value: 0)
        let observation = SettingsExamples.watchReadingMode { mode in
            show("ReadingMode", mode)
            seen.signal()
        }
        sayReady()
        for _ in 0..<count where seen.wait(timeout: .now() + watchLimit) == .timedOut {
            return fail("fewer than \(count) changes of ReadingMode within \(Int(watchLimit)) s")
        }
        return withExtendedLifetime(observation) { 0 }
    }

    static func showSettingsView(_ view: SettingsView) {
        show("theme", view.theme)
        show("fontSize", view.fontSize)
        show("layout", view.layout.rawValue)
        show("showPreview", view.showPreview)
        show("lastOpenedNote", view.lastOpenedNote)
    }

    static func showAudio(_ preferences: AudioPreferences) {
        show("volume", preferences.volume)
        show("bass", preferences.bass)
        show("treble", preferences.treble)
    }

    static var groupStore: KeyValueStore { KeyValueStore(defaults: .groupSuite) }

    static func setAppearance(_ assignments: [String]) -> Int32 {
        var appearance = AppearancePreferencesUserDefaultsPersistor(keyValueStore: groupStore)
        var settings = SettingsUserDefaultsPersistor(keyValueStore: groupStore)
        for assignment in assignments {
            let parts = assignment.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { return fail("appearance-set NAME=VALUE, found '\(assignment)'") }
            switch parts[0] {
            case "omnibar": appearance.isOmnibarVisible = parts[1] == "true"
            case "report": appearance.isProtectionsReportVisible = parts[1] == "true"
            case "preference":
                let pair = parts[1].split(separator: ":", maxSplits: 1).map(String.init)
                guard pair.count == 2 else { return fail("preference=KEY:VALUE") }
                appearance.userPreferences[pair[0]] = pair[1]
            case "checked": appearance.lastUpdateCheck = Date(timeIntervalSince1970: Double(parts[1]) ?? 0)
            case "username": settings.optionalUserName = parts[1] == "nil" ? nil : parts[1]
            case "theme": settings.selectedTheme = EditorTheme(rawValue: parts[1])
            default: return fail("appearance-set knows omnibar, report, preference, checked, username, theme")
            }
        }
        showAppearance()
        return 0
    }

    static func showAppearance() {
        let appearance = AppearancePreferencesUserDefaultsPersistor(keyValueStore: groupStore)
        let settings = SettingsUserDefaultsPersistor(keyValueStore: groupStore)
        show("omnibar", appearance.isOmnibarVisible)
        show("report", appearance.isProtectionsReportVisible)
        show("preferences", appearance.userPreferences.keys.sorted().map { "\($0):\(appearance.userPreferences[$0]!)" }.joined(separator: ","))
        show("checked", appearance.lastUpdateCheck.timeIntervalSince1970)
        show("username", settings.optionalUserName)
        show("theme", settings.selectedTheme?.rawValue)
    }
}
