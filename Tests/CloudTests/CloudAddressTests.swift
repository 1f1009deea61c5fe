import CloudModel
import Testing

/// `--listen HOST:PORT` and a device's `server` URL: what is accepted, and
/// that anything else is refused with the text and an example.
@Suite struct CloudAddressTests {
    @Test(arguments: [
        ("127.0.0.1:7400", "127.0.0.1", 7400), ("0.0.0.0:0", "0.0.0.0", 0), ("[::1]:80", "::1", 80), ("[::]:65535", "::", 65_535),
        ("cloud-1.example.test:443", "cloud-1.example.test", 443),
    ])
    func listenAddressesAreRead(text: String, host: String, port: Int) throws {
        #expect(try CloudAddress(listen: text) == CloudAddress(host: host, port: port))
    }

    @Test(arguments: [
        "", ":", "7400", "host:", ":7400", "host:65536", "host:-1", "host:+80", "host: 80", "host:0x10", "::1:80", "[::1:80", "[]:80",
        "[host]:80", "a b:80", "hôst:80", "host/x:80", "host:99999999999999999999", String(repeating: "a", count: 254) + ":80",
    ])
    func badListenAddressesAreRefused(text: String) {
        #expect(throws: CloudFormatError.self) { try CloudAddress(listen: text) }
    }

    @Test func urlsAreReadAndWrittenBack() throws {
        #expect(try CloudAddress(url: "http://10.0.0.1:7400").url == "http://10.0.0.1:7400")
        #expect(try CloudAddress(url: "http://10.0.0.1:7400/") == CloudAddress(host: "10.0.0.1", port: 7400))
        #expect(try CloudAddress(url: "http://[fe80::1]:7400").url == "http://[fe80::1]:7400")
        for bad in ["https://10.0.0.1:7400", "10.0.0.1:7400", "http://10.0.0.1:0", "http://10.0.0.1", "http://10.0.0.1:7400/v1", "http://"] {
            #expect(throws: CloudFormatError.self, "\(bad)") { try CloudAddress(url: bad) }
        }
        let error = #expect(throws: CloudFormatError.self) { try CloudAddress(url: "10.0.0.1:7400") }
        #expect(error?.description.contains("http://HOST:PORT") == true)
    }

    @Test func wildcardAddressesAreReachedThroughLoopback() {
        #expect(CloudAddress(host: "0.0.0.0", port: 9).local == CloudAddress(host: "127.0.0.1", port: 9))
        #expect(CloudAddress(host: "::", port: 9).local == CloudAddress(host: "::1", port: 9))
        #expect(CloudAddress(host: "10.1.2.3", port: 9).local == CloudAddress(host: "10.1.2.3", port: 9))
    }
}
