import Foundation
import SharedFiles
import TestSupport
import Testing

/// The secrets of the cloud and of each device: private files reached from the root through real folders only.
@Suite struct SecretFileTests {
    let root = TemporaryRoot()

    func secret(_ folder: String = "/cloud", name: String = "control.secret") throws -> SecretFile {
        SecretFile(folder: try ConfinedFolder(root.path + folder, top: root.path), name: name)
    }

    @Test func aSecretIsMadeOncePrivateAndReadBackTheSame() throws {
        let file = try secret()
        #expect(try file.read() == nil)
        let made = try file.readOrCreate()
        #expect(made.count == 64 && made.allSatisfy { $0.isHexDigit })
        #expect(try file.readOrCreate() == made)
        var info = stat()
        #expect(lstat(file.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path + "/cloud") == ["control.secret"])
    }

    /// A secret given from outside (`groupsim cloud trust`) must look made
    /// at random: 64 × "a" has the right shape and is refused, naming the file.
    @Test func aSecretThatWasTypedNotMadeIsRefused() throws {
        let file = try secret("/cloud/trusted-devices", name: "iPad.secret")
        for typed in [String(repeating: "a", count: 64), String(repeating: "deadbeef", count: 8)] {
            let refusal = #expect(throws: (any Error).self) { try file.replace(with: typed) }
            #expect("\(refusal.map { "\($0)" } ?? "")".contains(file.path) && "\(refusal.map { "\($0)" } ?? "")".contains("not made at random"))
        }
        #expect(try file.read() == nil)
        let made = try secret("/elsewhere").readOrCreate()
        try file.replace(with: made)
        #expect(try file.read() == made)
    }

    @Test func manyMakersAtOnceAgreeOnOneSecret() throws {
        let file = try secret()
        // Not a Mutex: Thread Sanitizer does not see its contended path.
        let made = UnsafeSendableBox<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let secret = Result { try file.readOrCreate() }
            made.update { $0.append((try? secret.get()) ?? "\(secret)") }
        }
        let secrets = made.value
        #expect(Set(secrets).count == 1 && secrets[0].count == 64, "\(secrets)")
    }

    @Test func aLinkAFileOthersMayReadOrAFileWithoutASecretIsRefusedNamingIt() throws {
        let outside = TemporaryRoot()
        let theirs = try SecretFile(folder: ConfinedFolder(outside.path, top: outside.path), name: "s").readOrCreate()
        try FileManager.default.createDirectory(atPath: root.path + "/cloud", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root.path + "/cloud/control.secret", withDestinationPath: outside.path + "/s")
        #expect(throws: SharedFileError.symbolicLink(path: root.path + "/cloud/control.secret")) { try secret().read() }
        #expect(!theirs.isEmpty)
        try FileManager.default.removeItem(atPath: root.path + "/cloud/control.secret")
        let made = try secret().readOrCreate()
        #expect(chmod(root.path + "/cloud/control.secret", 0o644) == 0)
        let open = Result { try secret().read() }
        #expect("\(open)".contains("mode 644") && "\(open)".contains("chmod 600"), "\(open)")
        #expect(chmod(root.path + "/cloud/control.secret", 0o600) == 0)
        #expect(try secret().read() == made)
        try Data("not a secret\n".utf8).write(to: URL(fileURLWithPath: root.path + "/cloud/control.secret"))
        let garbage = Result { try secret().read() }
        #expect("\(garbage)".contains(root.path + "/cloud/control.secret") && "\(garbage)".contains("does not hold a secret"), "\(garbage)")
        // A folder on the way that is a link is refused too.
        try FileManager.default.createSymbolicLink(atPath: root.path + "/devices", withDestinationPath: outside.path)
        #expect(throws: SharedFileError.symbolicLink(path: root.path + "/devices")) { try secret("/devices", name: "s").read() }
    }

    @Test func matchingComparesWholeSecrets() {
        let secret = String(repeating: "ab", count: 32)
        #expect(SecretFile.matches(secret, secret))
        #expect(!SecretFile.matches(String(secret.dropLast()) + "c", secret))
        #expect(!SecretFile.matches(String(secret.dropLast()), secret))
        #expect(!SecretFile.matches(secret + "a", secret))
        #expect(!SecretFile.matches("", secret))
    }
}
