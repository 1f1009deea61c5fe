import AppModel
import AppProtocol
import DeviceState
import Foundation
import GroupDefaults
import Guarded
import PropertyList
import SharedFiles

/// The widget's timeline: it renders a snapshot of the shown keys, and
/// renders again only when the timeline is reloaded — on a change, on a
/// period, or on request, as the manifest says. Between reloads the card is
/// stale by design, as on iOS.
/// Unchecked Sendable: the card and the observation, timer and listener are read and changed under `lock`.
final class WidgetTimeline: @unchecked Sendable {
    let manifest: AppManifest.Widget
    unowned let session: AppSession
    private var changeObservation: DefaultsObservation?
    private var timer: DispatchSourceTimer?
    private var reloadListener: (domain: PersistentDomain, id: Int)?
    private let lock = Locked()
    private(set) var card: [CardLine] = []

    init(manifest: AppManifest.Widget, session: AppSession) throws {
        self.manifest = manifest
        self.session = session
        listenForReloadRequests()
    }

    /// WidgetCenter.reloadTimelines from the app reaches every widget whatever its policy.
    /// Opened before the process says it is ready: a request made right after
    /// `ready` would otherwise be in the file's first read, and never heard as a change.
    private func listenForReloadRequests() {
        do {
            let center = try WidgetCenterFile(root: session.context.root, device: session.context.device).domain()
            let bundle = session.target.bundleIdentifier
            let id = center.addListener { [weak self] change in
                // A reload from the app, or one deferred past the day's budget, delivered as the next day began.
                if let reason = WidgetCenterFile.reason(for: change, bundle: bundle, kind: nil) { self?.reload(reason: reason) }
            }
            reloadListener = (center, id)
        } catch {
            session.events.emit(.warning(kind: "widget-center", message: "cannot listen for timeline reloads: \(error)"))
        }
    }

    func start() {
        reload(reason: "initial")
        switch manifest.timeline {
        case .onChange:
            let heard = heardKeys()
            let observer = manifest.observer
            changeObservation = session.store.observe(nil) { [weak self] change in
                // didChangeNotification is posted for this process's own changes only.
                if observer == .didChangeNotification, change.origin != .thisProcess { return }
                if heard.contains(change.key) { self?.reload(reason: "change") }
            }
            // A change that landed between the first snapshot and the
            // observer's registration would otherwise never reach the card.
            if snapshot() != lock.withLock({ card }) { reload(reason: "change") }
        case .periodic(let seconds):
            let timer = DispatchSource.makeTimerSource(queue: .global())
            timer.schedule(deadline: .now() + seconds, repeating: seconds)
            timer.setEventHandler { [weak self] in self?.reload(reason: "period") }
            timer.resume()
            self.timer = timer
        case .manual:
            break
        }
    }

    /// The keys whose changes reload the timeline. Key-value observing
    /// reads a shown key as a key path: a dotted one observes the key before
    /// the dot, so a key named with a dot never reloads it (said at launch).
    private func heardKeys() -> Set<String> {
        guard manifest.observer == .keyValueObserving else { return Set(manifest.shows) }
        var keys: Set<String> = []
        for shown in manifest.shows {
            let path = KeyValueObservingPath(shown)
            if let warning = path.neverDeliveredWarning(observing: "the widget observing '\(shown)'", keyPath: shown) {
                session.events.emit(.warning(kind: Diagnostic.Kind.keyPathNeverObserved.rawValue, message: warning))
            }
            if let key = path.key { keys.insert(key) }
        }
        return keys
    }

    private func snapshot() -> [CardLine] {
        manifest.shows.map { key in
            let found = session.store.lookup(key)
            return CardLine(key: key, value: found?.value, domain: found?.domain)
        }
    }

    /// Takes a new snapshot of the shown keys and renders it. A reload the
    /// widget was asked for reads the files first (a change's is already in the view).
    func reload(reason: String) {
        if reason != "change" { DomainRegistry.shared.reloadOpenDomainsFromDisk() }
        let lines = snapshot()
        lock.withLock { card = lines }
        session.events.emit(.render(card: lines, reason: reason))
    }

    deinit {
        timer?.cancel()
        if let reloadListener { reloadListener.domain.removeListener(reloadListener.id) }
    }
}
