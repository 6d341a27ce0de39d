// Stand-ins for the Keychain and KCCLI types the parser files name, so that they compile alone.
public enum KeychainStatus: Int32, Sendable { case param = -50 }

public struct KeychainError: Error, Sendable {
    public var status: KeychainStatus
    public var detail: String?
    public var hint: String?
    public init(_ status: KeychainStatus, _ detail: String? = nil, hint: String? = nil) {
        self.status = status
        self.detail = detail
        self.hint = hint
    }
}

public final class Context {}
