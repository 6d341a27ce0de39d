import KCCrypto
import KCFormat
import KCVault

extension Keychain {
    /// True for a version-2 vault, which may hold device-name records and this-device-only marks.
    public var allowsVersion2Content: Bool { vault.allowsVersion2Content }

    /// Names this machine's device in the vault: a device-name record (kind 6, Docs/FORMAT.md)
    /// holding `name`, which the sync copy carries to the other machines; the newest such record of
    /// a device names it. A version-1 vault is converted to version 2 first (the verified rewrite),
    /// with `password`. `name` must already be checked (1 to 64 UTF-8 bytes).
    public func nameDevice(_ name: String, password: SecureBytes?) throws(KeychainError) {
        do {
            if !vault.allowsVersion2Content { try vault.convertToCurrentFormat(password: password) }
        } catch { throw KeychainError(error) }
        do {
            try vault.append { _ in
                [PendingRecord(kind: .deviceName, itemID: [UInt8](repeating: 0, count: RecordPayload.idLength), base: nil,
                               fields: [(FieldTag.deviceName.rawValue, SecureBytes(copying: Array(name.utf8)))])]
            }
        } catch { throw KeychainError(error) }
    }
}
