/// Where a cloud can be reached: a host (a name, an IPv4 address, or an
/// IPv6 address) and a TCP port. Written `HOST:PORT` (`[IPv6]:PORT`) for
/// `--listen`, and `http://HOST:PORT` for a device whose cloud runs on
/// another host.
package struct CloudAddress: Sendable, Equatable, CustomStringConvertible {
    package var host: String
    package var port: Int

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// The longest host accepted: a DNS name's limit.
    static let maximumHostBytes = 253

    /// `HOST:PORT`, `[IPv6]:PORT`; port 0 asks for any free port.
    package init(listen text: String) throws(CloudFormatError) {
        self = try Self.parse(text, what: "--listen", example: "127.0.0.1:7400, 0.0.0.0:7400 or [::1]:7400", allowAnyPort: true)
    }

    /// `http://HOST:PORT` (a trailing `/` is allowed): a cloud's URL as its
    /// `listening` line prints it.
    package init(url text: String) throws(CloudFormatError) {
        guard text.hasPrefix("http://") else {
            throw CloudFormatError(
                "\(CloudFormatError.name(text)) is not a cloud's URL: write it http://HOST:PORT, as `groupsim cloud serve` prints it")
        }
        var rest = text.dropFirst("http://".count)
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        self = try Self.parse(String(rest), what: "the URL", example: "http://10.0.0.1:7400", allowAnyPort: false)
    }

    private static func parse(_ text: String, what: String, example: String, allowAnyPort: Bool) throws(CloudFormatError) -> CloudAddress {
        let problem = { (why: String) in CloudFormatError("\(what) \(CloudFormatError.name(text)) \(why) (for example \(example))") }
        guard let colon = text.lastIndex(of: ":") else { throw problem("has no :PORT") }
        var host = String(text[..<colon])
        let portText = text[text.index(after: colon)...]
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), host.count > 2 else { throw problem("opens [ for an IPv6 address but does not close it before :PORT") }
            host = String(host.dropFirst().dropLast())
            guard host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { throw problem("has no IPv6 address between [ and ]") }
        } else {
            guard !host.contains(":") else { throw problem("has an IPv6 address: put it in brackets, [ADDRESS]:PORT") }
        }
        guard !host.isEmpty, host.utf8.count <= maximumHostBytes else { throw problem("has no host before :PORT") }
        guard
            host.unicodeScalars.allSatisfy({
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-.:".unicodeScalars.contains($0))
            })
        else { throw problem("has a host with characters no host name or address has") }
        guard portText.count <= 5, portText.allSatisfy({ ("0"..."9").contains($0) }), let port = Int(portText),
            (allowAnyPort ? 0 : 1)...65_535 ~= port
        else {
            throw problem("has no port from \(allowAnyPort ? 0 : 1) to 65535 after the last ':'")
        }
        return CloudAddress(host: host, port: port)
    }

    /// How a process on this host reaches a cloud bound here: the wildcard
    /// addresses (every interface) are reached through loopback.
    package var local: CloudAddress {
        switch host {
        case "0.0.0.0": CloudAddress(host: "127.0.0.1", port: port)
        case "::": CloudAddress(host: "::1", port: port)
        default: self
        }
    }

    /// `HOST:PORT`, with an IPv6 address in brackets (as in a URL and a `Host` header).
    package var hostAndPort: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }
    package var url: String { "http://" + hostAndPort }
    package var description: String { url }
}
