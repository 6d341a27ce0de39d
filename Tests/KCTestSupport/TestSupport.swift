import Foundation
import KCFormat

/// Private folders for tests: each test gets its own under /tmp and removes it when done.
public enum TemporaryFolder {
    /// Makes a new empty folder (mode 0700) named `PARENT/PREFIX-XXXXXX` and returns its path.
    public static func make(_ prefix: String = "kc-test", in parent: String = "/tmp") -> String {
        var template = Array("\(parent)/\(prefix)-XXXXXX".utf8CString)
        guard let path = mkdtemp(&template) else { fatalError("mkdtemp failed: errno \(errno)") }
        return String(cString: path)
    }

    /// A folder in memory (tmpfs) when the system has one, else /tmp: for tests that write and
    /// fsync many small vaults, where the disk's fsync would dominate.
    public static var memoryBacked: String {
        var status = stat()
        return stat("/dev/shm", &status) == 0 && access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
    }

    /// Removes `folder` and everything in it.
    public static func remove(_ folder: String) {
        _ = try? FileManager.default.removeItem(atPath: folder)
    }
}

extension KDFParameters {
    /// The Argon2id cost of every test vault: libsodium's minimum (1 pass, 8 KiB), so deriving
    /// the key costs microseconds. The end-to-end tests use the same (`FAST_KDF` in kcharness.py).
    public static let fastTest = KDFParameters(opsLimit: 1, memoryLimit: 8 << 10)
}
