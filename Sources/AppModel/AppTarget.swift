import AppProtocol

/// Which of an app's targets a user's executable plays, by the short names
/// `groupsim exec --target`, a scenario's `exec:` process and GroupSimTesting take.
public enum AppTarget: String, Sendable, CaseIterable {
    case app, widget, intent

    package var role: Role {
        switch self {
        case .app: .mainApp
        case .widget: .widget
        case .intent: .intentExtension
        }
    }

    package init(role: Role) {
        switch role {
        case .mainApp: self = .app
        case .widget: self = .widget
        case .intentExtension: self = .intent
        }
    }
}
