// Beside FileprivateSwitch.swift, a file that imports Foundation alone gets
// Foundation's UserDefaults, silently.
import Foundation

func unswitchedFile() {
    requireFoundation(UserDefaults.standard)
}
