import Foundation

/// The fuzz targets, by the name scripts/fuzz.sh passes in GROUPSIM_FUZZ_TARGET.
/// Each takes one input and returns normally for any input it refuses; a
/// crash, a hang or a broken property (`require`) is a finding.
let fuzzTargets: [String: @Sendable (Data) -> Void] = [
    "binary": PlistFuzzTargets.binary,
    "xml": PlistFuzzTargets.xml,
    "old-style": PlistFuzzTargets.oldStyle,
    "launch-arguments": InputFuzzTargets.launchArguments,
    "control-protocol": InputFuzzTargets.controlProtocol,
    "scenario": InputFuzzTargets.scenario,
    "sync-message": SyncFuzzTargets.syncMessage,
    "cloud-file": CloudFileFuzzTargets.cloudFile,
]

/// The target this process runs, chosen once.
let selectedTarget: @Sendable (Data) -> Void = {
    let name = ProcessInfo.processInfo.environment["GROUPSIM_FUZZ_TARGET"] ?? ""
    guard let target = fuzzTargets[name] else {
        let names = fuzzTargets.keys.sorted().joined(separator: ", ")
        FileHandle.standardError.write(Data("groupsim-fuzz: set GROUPSIM_FUZZ_TARGET to one of: \(names)\n".utf8))
        exit(2)
    }
    return target
}()

/// libFuzzer's entry point: one input per call.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = bytes.map { Data(bytes: $0, count: count) } ?? Data()
    selectedTarget(data)
    return 0
}

/// A property every input must keep; a broken one stops the run as a crash
/// that libFuzzer saves, with what broke on stderr.
func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("property broken: \(message())") }
}
