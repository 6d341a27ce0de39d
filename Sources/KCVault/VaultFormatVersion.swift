import KCCrypto
import KCFormat

/// Format versions (Docs/FORMAT.md, "Format versions"): kc reads versions 1 and 2 and writes
/// version 2 when it creates or rewrites a file; appends keep the file's version. What only
/// version 2 allows (page frames, record kinds 4-6) is written to a version-1 file only after
/// converting it with the verified rewrite (`convertToCurrentFormat`).
extension Vault {
    /// The format version of the file as read (`VaultHeader.version`).
    public var formatVersion: UInt16 { header.version }

    /// True when the file may hold page frames and record kinds 4-6 (a version-2 file).
    public var allowsVersion2Content: Bool { header.allowsVersion2Content }

    /// Converts a version-1 file to the current version by the verified rewrite (the one
    /// `compact` and `passwd` use: new file, read back and verified, renamed over), keeping every
    /// record, its payload and its order. The vault key is wrapped anew (fresh salt and key nonce,
    /// same KDF parameters) under `password`, or else the master password this vault was opened
    /// with. Does nothing on a file already at the current version. Returns false, writing
    /// nothing, when no password is at hand (after `forgetPassword`). A given password that
    /// does not unwrap the current key is `wrongPassword`.
    @discardableResult
    public func convertToCurrentFormat(password given: SecureBytes? = nil) throws(VaultError) -> Bool {
        if header.version >= VaultHeader.currentVersion { return true }
        guard let secret = given ?? password else { return false }
        try exclusively { (records) throws(VaultError) in
            if given != nil, try !verifies(password: secret) { throw VaultError.wrongPassword }
            return (try Vault.currentVersion(of: header, key: key, password: secret), key, records.map { $0.plaintextWithoutBatchMarker() })
        }
        return true
    }

    /// The header a rewrite of this vault writes: the current one when it already has the current
    /// version; else the same vault id, KDF parameters and key wrapped anew under the kept master
    /// password in a current-version header. Without a kept password the file keeps its version.
    func rewriteHeader() throws(VaultError) -> VaultHeader {
        guard let password else { return header }
        return try Vault.currentVersion(of: header, key: key, password: password)
    }

    /// `header` at the current version, wrapping `key` under `password` (a fresh salt and key
    /// nonce, its KDF parameters); `header` itself when it is current already.
    static func currentVersion(of header: VaultHeader, key: SecureBytes, password: SecureBytes) throws(VaultError) -> VaultHeader {
        if header.version >= VaultHeader.currentVersion { return header }
        return try makeHeader(vaultID: header.vaultID, key: key, password: password, kdf: header.kdf)
    }
}
