import Foundation
import XCTest
import KCCrypto
import KCFormat
import KCVault
import KCTestSupport

/// A real vault written through `Vault.create` and `Vault.append` with the fast KDF, and helpers
/// to open arbitrary bytes through `Vault.open` (in a 0600 file, as kc would).
final class VaultFixture: @unchecked Sendable {
    let folder: String
    let password = SecureBytes(copying: Array("correct horse battery staple".utf8))
    /// The complete vault file.
    private(set) var bytes: [UInt8] = []
    /// Offsets of every record, then the file size.
    private(set) var boundaries: [Int] = []
    /// The secret each record stores (by index), to check that no wrong item is ever returned.
    private(set) var secrets: [[UInt8]] = []
    let scratch: String
    let stateDirectory: String

    init(records: Int, label: String = "a", secretLength: Int = 20) throws {
        folder = TemporaryFolder.make("kc-vaulttests")
        scratch = folder + "/scratch.kc"
        stateDirectory = folder + "/state-open"
        let path = folder + "/\(label).kc"
        let vault = try Vault.create(at: path, password: password, kdf: .fastTest, lockTimeout: 5,
                                     stateDirectory: folder + "/state-\(label)")
        for i in 0..<records {
            let secret = Array("\(label)-secret-\(i)-".utf8) + [UInt8](repeating: UInt8(65 + i % 26), count: secretLength)
            secrets.append(secret)
            let id = Array(Crypto.randomBytes(16))
            try vault.append { _ in
                [PendingRecord(kind: .put, itemID: id, base: nil, fields: [
                    (FieldTag.itemClass.rawValue, SecureBytes(copying: [1])),
                    (FieldTag.service.rawValue, SecureBytes(copying: Array("service-\(i).example.com".utf8))),
                    (FieldTag.account.rawValue, SecureBytes(copying: Array("account-\(i)".utf8))),
                    (FieldTag.secret.rawValue, SecureBytes(copying: secret)),
                ])]
            }
        }
        bytes = try XCTUnwrap(FileManager.default.contents(atPath: path)).map { $0 }
        boundaries = vault.records.map(\.offset) + [bytes.count]
        XCTAssertEqual(vault.records.count, records)
    }

    deinit { TemporaryFolder.remove(folder) }

    var recordCount: Int { boundaries.count - 1 }
    func record(_ i: Int) -> [UInt8] { Array(bytes[boundaries[i]..<boundaries[i + 1]]) }
    var header: [UInt8] { Array(bytes[0..<VaultHeader.length]) }
    var records: [[UInt8]] { (0..<recordCount).map(record) }

    /// What opening some bytes gave.
    enum Outcome {
        case opened(Vault)
        case failed(VaultError)
    }

    /// Writes `candidate` to a scratch file (0600) and opens it with the vault's password.
    func open(_ candidate: [UInt8], stateDirectory: String? = nil, scratch: String? = nil) -> Outcome {
        let scratch = scratch ?? self.scratch
        // pwrite + ftruncate rather than O_TRUNC: ext4 flushes a file truncated to zero and rewritten
        // when it is closed (auto_da_alloc), which would make these loops wait on the disk.
        let fd = open_(scratch)
        candidate.withUnsafeBytes { raw in
            var written = 0
            while written < raw.count {
                let n = pwrite(fd, raw.baseAddress! + written, raw.count - written, off_t(written))
                precondition(n > 0)
                written += n
            }
        }
        precondition(ftruncate(fd, off_t(candidate.count)) == 0)
        close(fd)
        do {
            return .opened(try Vault.open(at: scratch, lockTimeout: 5, stateDirectory: stateDirectory ?? self.stateDirectory) { self.password })
        } catch let error as VaultError {
            return .failed(error)
        } catch {
            XCTFail("unexpected error type: \(error)")
            return .failed(.keyDerivationFailed)
        }
    }

    /// Runs `body(index, scratchPath)` for every index in `0..<count`, spread over the cores, each
    /// worker with its own scratch file; returns the failures `body` reports (nil: fine), sorted.
    func parallel(_ count: Int, _ body: @Sendable (Int, String) -> String?) -> [String] {
        let workers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 8))
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let scratch = folder + "/scratch-\(worker).kc"
            for index in stride(from: worker, to: count, by: workers) {
                if let failure = body(index, scratch) { failures.add(index, failure) }
            }
        }
        return failures.sorted
    }

    private func open_(_ path: String) -> Int32 {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT, 0o600)
        precondition(fd >= 0)
        return fd
    }

    /// True when every record `vault` returns is one of ours, in order, with its own secret.
    func returnsOnlyOurRecords(_ vault: Vault) -> Bool {
        for (i, record) in vault.records.enumerated() {
            guard i < secrets.count, record.offset == boundaries[i], record.bytes(.secret) == secrets[i] else { return false }
        }
        return true
    }

    /// A frame rewritten with a new sequence number and a valid frame checksum.
    static func renumbered(_ record: [UInt8], _ sequence: UInt64) -> [UInt8] {
        let length = UInt32(record[0]) | UInt32(record[1]) << 8 | UInt32(record[2]) << 16 | UInt32(record[3]) << 24
        return RecordFrame(bodyLength: length, sequence: sequence).encoded() + record.dropFirst(RecordFrame.length)
    }
}


/// Failures collected from several threads.
final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [(Int, String)] = []
    func add(_ index: Int, _ text: String) { lock.lock(); items.append((index, text)); lock.unlock() }
    var sorted: [String] { lock.lock(); defer { lock.unlock() }; return items.sorted { $0.0 < $1.0 }.map(\.1) }
}

/// Thread-safe counters by name.
final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    func add(_ name: String) { lock.lock(); counts[name, default: 0] += 1; lock.unlock() }
    subscript(_ name: String) -> Int { lock.lock(); defer { lock.unlock() }; return counts[name] ?? 0 }
}
