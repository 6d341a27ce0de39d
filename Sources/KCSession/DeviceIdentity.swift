import KCVault
import KCKeychain

/// This machine's device id in its state folder (`StateFolder`), for the front ends.
public enum DeviceIdentity {
    /// The device id this machine writes as, nil when it has none yet.
    public static func current(stateDirectory: String) -> [UInt8]? {
        try? StateFolder(stateDirectory).existingDeviceID()
    }

    /// The device ids this machine wrote as before `kc sync reset-device` replaced them.
    public static func former(stateDirectory: String) -> Set<[UInt8]> {
        Set((try? StateFolder(stateDirectory).formerDeviceIDs()) ?? [])
    }

    /// Gives this machine a new random device id: the old one (nil: none) and the new.
    public static func replace(stateDirectory: String) throws(KeychainError) -> (old: [UInt8]?, new: [UInt8]) {
        do { return try StateFolder(stateDirectory).replaceDeviceID() } catch { throw KeychainError(error) }
    }
}
