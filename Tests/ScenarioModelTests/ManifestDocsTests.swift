import AppModel
import Foundation
import SpecFormat
import Testing

/// docs/manifest.md names every key the manifest reader takes, and no other; its example is a manifest the reader takes.
@Suite struct ManifestDocsTests {
    static let docs = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("docs/manifest.md")

    static let keysByPlace: [String: [String]] = [
        "top level": AppManifest.topLevelKeys, "target": AppManifest.targetKeys, "widget target": AppManifest.widgetKeys,
        "intent-extension target": AppManifest.intentExtensionKeys, "intent": AppManifest.intentKeys,
        "icloud-bridge": AppManifest.cloudBridgeKeys,
    ]

    @Test func theReferenceNamesEveryKeyTheReaderTakes() throws {
        let text = try String(contentsOf: Self.docs, encoding: .utf8)
        var documented: [String: Set<String>] = [:]
        for line in text.components(separatedBy: "\n") where line.hasPrefix("| ") && !line.hasPrefix("| where") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count > 3, cells[2].hasPrefix("`") else { continue }
            documented[cells[1], default: []].insert(cells[2].trimmingCharacters(in: CharacterSet(charactersIn: "`")))
        }
        #expect(Set(documented.keys) == Set(Self.keysByPlace.keys), "docs/manifest.md's places: \(documented.keys.sorted())")
        for (place, keys) in Self.keysByPlace {
            #expect(
                documented[place] ?? [] == Set(keys),
                "docs/manifest.md, \(place): documents \((documented[place] ?? []).sorted()), the reader takes \(keys.sorted())")
        }
    }

    @Test func theReferencesExampleIsAManifest() throws {
        let text = try String(contentsOf: Self.docs, encoding: .utf8)
        let start = try #require(text.range(of: "```yaml\n"))
        let end = try #require(text.range(of: "```", range: start.upperBound..<text.endIndex))
        let manifest = try AppManifest.parse(SpecNode.parse(String(text[start.upperBound..<end.lowerBound]), file: "docs/manifest.md"))
        #expect(manifest.targets.count == 3)
        #expect(manifest.intents.count == 4)
    }
}
