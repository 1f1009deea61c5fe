/// The version `groupsim --version` reports; CHANGELOG.md has a section for each.
enum GroupSimVersion {
    static let current = "0.9.0-dev"
}
