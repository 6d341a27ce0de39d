import KCSession
import KCSystem
import KCVault
import KCKeychain

// Keychain errors cross the wire as data: the result code and the reason, so that the front end
// words an agent's failure exactly as one of its own. Enums travel by their raw values.

extension WireWriter {
    mutating func keychainError(_ error: KeychainError) {
        u32(UInt32(bitPattern: error.status.rawValue))
        switch error.reason {
        case .none: u8(0)
        case .vault(let vault): vaultError(vault)
        case .ambiguousMatch(let items, let count):
            // The matches shown stay within `Channel.listSplit` bytes (attributes have no limit of
            // their own, and a frame has one); the count is the whole.
            u8(2)
            u32(UInt32(clamping: count))
            var shown = WireWriter(), number: UInt32 = 0
            for item in items where shown.count < Channel.listSplit {
                shown.item(item, revealing: false)
                number += 1
            }
            u32(number)
            append(shown)
        case .primaryKeyCollision: u8(3)
        case .invalidAttribute(let attribute, let value):
            u8(4)
            self.attribute(attribute)
            string(value)
        case .changedSinceSalvageConfirmed: u8(5)
        case .unexpected(let text):
            u8(6)
            string(text)
        case .notAnItem(let bad):
            u8(8)
            notAnItem(bad)
        }
    }

    private mutating func vaultError(_ error: VaultError) {
        switch error {
        case .noSuchVault(let path): u8(20); string(path)
        case .alreadyExists(let path): u8(21); string(path)
        case .wrongPassword: u8(22)
        case .lockTimeout(let seconds): u8(23); f64(seconds)
        case .io(let operation, let path, let errno):
            u8(24)
            u8(operation.rawValue)
            string(path)
            u32(UInt32(bitPattern: errno.rawValue))
        case .keyDerivationFailed: u8(25)
        case .replacedByAnotherVault(let path): u8(26); string(path)
        case .passwordChanged(let path): u8(27); string(path)
        case .rollback(let devices):
            u8(28)
            u32(UInt32(devices.count))
            for device in devices { string(device) }
        case .recordTooLarge(let bytes): u8(29); u64(UInt64(bytes))
        case .anchorDamaged(let path): u8(30); string(path)
        case .corrupt(let format): u8(31); formatError(format)
        case .badRecordPayload(let sequence, let offset, let format): u8(32); u64(sequence); i64(Int64(offset)); formatError(format)
        case .brokenBatch(let sequence, let offset): u8(33); u64(sequence); i64(Int64(offset))
        case .recordAuthenticationFailed(let offset, let sequence): u8(34); i64(Int64(offset)); u64(sequence)
        case .unsafeFile(let path, let problem): u8(35); string(path); vaultFileProblem(problem)
        case .unsafeStateFile(let path, let problem): u8(36); string(path); ownershipProblem(problem)
        case .deviceIDDamaged(let path): u8(37); string(path)
        case .stateFileNotWritten(let failure): u8(38); stagedFailure(failure)
        case .vaultNotWritten(let failure): u8(39); stagedFailure(failure)
        case .readOnly(let path, let errno): u8(40); string(path); u32(UInt32(bitPattern: errno.rawValue))
        }
    }
}

extension WireReader {
    mutating func keychainError() throws(AgentError) -> KeychainError {
        guard let status = KeychainStatus(rawValue: Int32(bitPattern: try u32())) else { throw AgentError.protocolError(.badValue) }
        let reason: KeychainError.Reason
        switch try u8() {
        case 0: reason = .none
        case 2:
            let matching = Int(try u32())
            var items: [Item] = []
            for _ in 0..<(try count(minimumSize: 30)) { items.append(try item()) }
            guard items.count <= matching else { throw AgentError.protocolError(.badValue) }
            reason = .ambiguousMatch(items, count: matching)
        case 3: reason = .primaryKeyCollision
        case 4: reason = .invalidAttribute(try attribute(), try string())
        case 5: reason = .changedSinceSalvageConfirmed
        case 6: reason = .unexpected(try string())
        case 8: reason = .notAnItem(try notAnItem())
        case 20: reason = .vault(.noSuchVault(path: try string()))
        case 21: reason = .vault(.alreadyExists(path: try string()))
        case 22: reason = .vault(.wrongPassword)
        case 23: reason = .vault(.lockTimeout(seconds: try f64()))
        case 24:
            guard let operation = FileOperation(rawValue: try u8()) else { throw AgentError.protocolError(.badValue) }
            reason = .vault(.io(operation: operation, path: try string(),
                                errno: Errno(rawValue: Int32(bitPattern: try u32()))))
        case 25: reason = .vault(.keyDerivationFailed)
        case 26: reason = .vault(.replacedByAnotherVault(path: try string()))
        case 27: reason = .vault(.passwordChanged(path: try string()))
        case 28:
            var devices: [String] = []
            for _ in 0..<(try count(minimumSize: 4)) { devices.append(try string()) }
            reason = .vault(.rollback(devices: devices))
        case 29: reason = .vault(.recordTooLarge(bytes: Int(clamping: try u64())))
        case 30: reason = .vault(.anchorDamaged(path: try string()))
        case 31: reason = .vault(.corrupt(try formatError()))
        case 32: reason = .vault(.badRecordPayload(sequence: try u64(), offset: Int(clamping: try i64()), try formatError()))
        case 33: reason = .vault(.brokenBatch(sequence: try u64(), offset: Int(clamping: try i64())))
        case 34: reason = .vault(.recordAuthenticationFailed(offset: Int(clamping: try i64()), sequence: try u64()))
        case 35: reason = .vault(.unsafeFile(path: try string(), problem: try vaultFileProblem()))
        case 36: reason = .vault(.unsafeStateFile(path: try string(), problem: try ownershipProblem()))
        case 37: reason = .vault(.deviceIDDamaged(path: try string()))
        case 38: reason = .vault(.stateFileNotWritten(try stagedFailure()))
        case 39: reason = .vault(.vaultNotWritten(try stagedFailure()))
        case 40: reason = .vault(.readOnly(path: try string(), errno: Errno(rawValue: Int32(bitPattern: try u32()))))
        default: throw AgentError.protocolError(.badValue)
        }
        return KeychainError(status, reason)
    }
}
