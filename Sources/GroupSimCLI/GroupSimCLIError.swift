/// What a `groupsim` command did not find or could not read, worded like
/// macOS `defaults` for `groupsim defaults`: the domain, key and file involved. `description` is the
/// one place these become text.
enum GroupSimCLIError: Error, CustomStringConvertible {
    /// A domain with no file (`path`: where it was looked for, when said).
    case noDomain(domain: String, path: String?)
    case noPair(domain: String, key: String)
    /// A domain to change that does not exist: nothing was changed.
    case noDomainToChange(domain: String)
    case noKeyToRename(key: String, domain: String)
    case noKeyToDelete(key: String, domain: String)
    /// Domains that exist but could not be read (corrupt, or not a regular file): each name and why.
    case unreadableDomains([(domain: String, error: any Error)])

    var description: String {
        switch self {
        case .noDomain(let domain, let path): "Domain \(domain) does not exist" + (path.map { " (no file at '\($0)')" } ?? "")
        case .noPair(let domain, let key): "The domain/default pair of (\(domain), \(key)) does not exist"
        case .noDomainToChange(let domain): "Domain (\(domain)) not found. Defaults have not been changed."
        case .noKeyToRename(let key, let domain): "Key \(key) does not exist in domain \(domain); leaving defaults unchanged"
        case .noKeyToDelete(let key, let domain): "Domain (\(domain)) has no key \(key). Defaults have not been changed."
        case .unreadableDomains(let domains): domains.map { "domain \($0.domain) could not be read: \($0.error)" }.joined(separator: "\n")
        }
    }
}
