import KCKeychain
import KCSession

// The keychain's non-fatal findings travel in a `warnings` frame sent before a reply, so the
// front end words them as it does for a keychain of its own.

extension WireWriter {
    mutating func warnings(_ value: [KeychainWarning]) {
        u32(UInt32(value.count))
        for warning in value {
            switch warning {
            case .tornTail(let offset, let length): u8(0); u64(UInt64(offset)); u64(UInt64(length))
            case .rollback(let devices): u8(1); u64(UInt64(devices))
            case .anchorDamaged(let path): u8(2); string(path)
            case .anchorNotStored(let error): u8(3); keychainError(error)
            case .anotherVaultAtPath(let previous): u8(4); bytes(previous)
            case .readableByOthers(let mode): u8(5); u32(mode)
            case .agentMemoryNotLocked(let code): u8(6); u32(UInt32(bitPattern: code))
            case .repackFailed(let error): u8(7); keychainError(error)
            }
        }
    }
}

extension WireReader {
    mutating func warnings() throws(AgentError) -> [KeychainWarning] {
        var result: [KeychainWarning] = []
        for _ in 0..<(try count(minimumSize: 2)) {
            switch try u8() {
            case 0: result.append(.tornTail(offset: Int(clamping: try u64()), length: Int(clamping: try u64())))
            case 1: result.append(.rollback(devices: Int(clamping: try u64())))
            case 2: result.append(.anchorDamaged(path: try string()))
            case 3: result.append(.anchorNotStored(try keychainError()))
            case 4: result.append(.anotherVaultAtPath(previousID: try bytes()))
            case 5: result.append(.readableByOthers(mode: try u32()))
            case 6: result.append(.agentMemoryNotLocked(errno: Int32(bitPattern: try u32())))
            case 7: result.append(.repackFailed(try keychainError()))
            default: throw AgentError.protocolError(.badValue)
            }
        }
        return result
    }
}
