import SimulatedFoundation  // was: import Foundation — the only change this file needs

// Any Codable struct saved to and loaded from UserDefaults as JSON data,
// through a protocol with default implementations.

protocol DefaultInitializable {
    init()
}

protocol UserDefaultsPersistable: Codable, DefaultInitializable {
    static var key: String { get }
}

struct UserDefaultsPersister<A: UserDefaultsPersistable> {
    static func save(_ value: A) {
        let encoder = JSONEncoder()
        if let encoded = try? encoder.encode(value) {
            UserDefaults.standard.set(encoded, forKey: A.key)
        }
    }

    static func load() -> A {
        guard let savedSettingsData = UserDefaults.standard.object(forKey: A.key) as? Data else {
            return A()
        }

        let decoder = JSONDecoder()
        let loadedSettings = try? decoder.decode(A.self, from: savedSettingsData)
        return loadedSettings ?? A()
    }
}

extension UserDefaultsPersistable {
    func save() {
        UserDefaultsPersister.save(self)
    }

    static func load() -> Self {
        return UserDefaultsPersister.load()
    }
}

struct AudioPreferences: UserDefaultsPersistable {
    static var key = "userAudioPreferences"
    var volume = 1.0  // default value
    var bass = 0.5
    var treble = 0.5
    var quality = 1.0
}
