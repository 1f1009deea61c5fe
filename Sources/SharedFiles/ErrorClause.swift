/// An error's text as the middle of a caller's own sentence ("could not
/// save …: <clause>. The change stays …"): without the final period most of
/// this project's error texts end with, so no sentence ends twice.
package func errorClause(_ error: any Error) -> String {
    let text = String(describing: error)
    guard text.hasSuffix("."), !text.hasSuffix("..") else { return text }
    return String(text.dropLast())
}
