import AppProtocol

/// Events of modules above this one (a widget's `render`, SimulatedWidgetKit)
/// for the program's control channel, if one serves; nothing otherwise.
package enum ControlEvents {
    package static func emit(_ event: AppEvent) { ControlTap.emit(event, from: .current) }
}
