// A file of the switched module that still imports Foundation alone.
import Foundation

func foundationOnlyFile() {
    requireSimulated(UserDefaults.standard)
    let named: UserDefaults? = UserDefaults(suiteName: "group.com.example.notes")
    requireSimulated(named!)
}
