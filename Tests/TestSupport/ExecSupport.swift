import Foundation

/// A root with the built-in example app (Notes: com.example.notes, its
/// widget and intent extension, group.com.example.notes) installed on iPhone.
package func rootWithExampleApp() throws -> TemporaryRoot {
    let root = TemporaryRoot()
    let installed = try groupsim(["app", "install"], root: root)
    guard installed.status == 0 else {
        throw TestFailure("groupsim app install failed (\(installed.status)): \(installed.stderr)")
    }
    return root
}

/// `groupsim exec --app com.example.notes --target TARGET -- COMMAND…` run to completion.
package func execAsExampleApp(_ command: [String], target: String = "app", root: TemporaryRoot) throws -> ProcessResult {
    try groupsim(["exec", "--app", "com.example.notes", "--target", target, "--"] + command, root: root)
}
