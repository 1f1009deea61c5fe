import CloudModel
import GroupDefaults
import SharedFiles

/// Where a simulation's cloud listens: `<root>/cloud/server.plist`, written
/// by the server once it is bound, read by agents on every connection attempt
/// (a restarted server may come back on another port) and by the CLI.
package struct ServerLocation: Sendable, Equatable {
    package var host: String
    package var port: Int
    package var pid: Int32

    package init(host: String, port: Int, pid: Int32) {
        self.host = host
        self.port = port
        self.pid = pid
    }

    package static func path(root: SimulationRoot) -> String { root.path + "/cloud/server.plist" }
    package static func dataFolder(root: SimulationRoot) -> String { root.path + "/cloud/data" }

    package static func read(root: SimulationRoot) throws -> ServerLocation? {
        let path = path(root: root)
        guard let fields = try SharedPlistFile.read(path: path, root: root.path) else { return nil }
        guard case .string(let host)? = fields["host"], case .integer(let port)? = fields["port"], (1...65_535).contains(port),
            case .integer(let pid)? = fields["pid"], let pid32 = Int32(exactly: pid)
        else {
            throw CloudFormatError("\(path) does not say where the cloud listens (host, port, pid); start it again with `groupsim cloud serve`")
        }
        return ServerLocation(host: host, port: Int(port), pid: pid32)
    }

    /// The server's own record of where it is bound, once it is.
    package func write(root: SimulationRoot) throws {
        try SharedPlistFile(path: Self.path(root: root), root: root.path).update {
            $0 = ["host": .string(host), "port": .integer(Int64(port)), "pid": .integer(Int64(pid))]
        }
    }

    /// Where this host reaches the cloud.
    package var address: CloudAddress { CloudAddress(host: host, port: port) }
    package var url: String { address.url }
}
