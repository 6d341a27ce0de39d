import Keychain

/// The FTP layer's errors are still worded where they are raised (`KeychainError.Reason.worded`).
extension KeychainError {
    init(_ status: KeychainStatus, _ message: String) {
        self.init(status, .worded(message: message, hint: nil))
    }

    var detail: String {
        if case .worded(let message, _) = reason { return message }
        return ""
    }

    var hint: String? {
        if case .worded(_, let hint) = reason { return hint }
        return nil
    }
}
