import KCCrypto
import KCFTP
import KCKeychain
import XCTest

/// Everything the flow did, in order, so tests can check the order of effects.
final class EventLog {
    var events: [String] = []
}

/// A transport that answers from a script and records every call.
final class ScriptedTransport: FTPTransport {
    let log: EventLog
    var probeResult: FTPFailure?
    var loginResults: [FTPLoginResult]
    /// (user, password) of each login, in order.
    private(set) var logins: [(user: String, password: String)] = []

    init(log: EventLog, probe: FTPFailure? = nil, logins: [FTPLoginResult] = []) {
        self.log = log
        self.probeResult = probe
        self.loginResults = logins
    }

    func probe(_ target: FTPTarget, options: FTPConnectionOptions) -> FTPFailure? {
        log.events.append("probe \(target.host)")
        return probeResult
    }

    func login(_ target: FTPTarget, user: String, password: SecureBytes, options: FTPConnectionOptions) -> FTPLoginResult {
        let text = String(decoding: password.copyBytes(), as: UTF8.self)
        log.events.append("login \(user)")
        logins.append((user, text))
        guard !loginResults.isEmpty else {
            XCTFail("unexpected login attempt #\(logins.count) as \(user)")
            return .failed(.noSession)
        }
        return loginResults.removeFirst()
    }
}

/// A prompter that expects exact prompts in order and gives scripted answers.
final class ScriptedPrompter: FTPLoginPrompter {
    enum Step {
        case line(FTPQuestion, String)
        case secret(FTPQuestion, String)
        case confirm(FTPQuestion, Bool)
        /// The user presses Ctrl-C at this prompt.
        case cancel(FTPQuestion)
    }

    let log: EventLog
    let canPrompt: Bool
    var steps: [Step]
    private(set) var notices: [FTPNotice] = []

    init(log: EventLog, canPrompt: Bool = true, steps: [Step] = []) {
        self.log = log
        self.canPrompt = canPrompt
        self.steps = steps
    }

    func notice(_ notice: FTPNotice) {
        log.events.append("notice")
        notices.append(notice)
    }

    private func next(_ prompt: FTPQuestion, file: StaticString = #filePath, line: UInt = #line) throws(KeychainError) -> Step {
        log.events.append("prompt \(prompt)")
        XCTAssertTrue(canPrompt, "prompted without a terminal: \(prompt)")
        guard !steps.isEmpty else {
            XCTFail("unexpected prompt '\(prompt)'")
            throw KeychainError(.param)
        }
        let step = steps.removeFirst()
        let expected: FTPQuestion
        switch step {
        case .line(let p, _), .secret(let p, _), .confirm(let p, _), .cancel(let p): expected = p
        }
        XCTAssertEqual(prompt, expected)
        if case .cancel = step { throw KeychainError(.userCanceled) }
        return step
    }

    func readLine(_ prompt: FTPQuestion) throws(KeychainError) -> String {
        guard case .line(_, let answer) = try next(prompt) else { XCTFail("expected a line prompt"); return "" }
        return answer
    }

    func readSecret(_ prompt: FTPQuestion) throws(KeychainError) -> SecureBytes {
        guard case .secret(_, let answer) = try next(prompt) else { XCTFail("expected a secret prompt"); return SecureBytes(count: 0) }
        return SecureBytes(copying: Array(answer.utf8))
    }

    func confirm(_ prompt: FTPQuestion) throws(KeychainError) -> Bool {
        guard case .confirm(_, let answer) = try next(prompt) else { XCTFail("expected a confirmation"); return false }
        return answer
    }
}

/// Saved items in memory; records writes.
final class MemoryStore: FTPCredentialStore {
    let log: EventLog
    var items: [(attributes: ItemAttributes, password: String)]
    private(set) var added: [(attributes: ItemAttributes, password: String)] = []
    private(set) var updated: [(attributes: ItemAttributes, password: String)] = []

    init(log: EventLog, items: [(ItemAttributes, String)] = []) {
        self.log = log
        self.items = items.map { (attributes: $0.0, password: $0.1) }
    }

    var writes: Int { added.count + updated.count }

    func credentials(for target: FTPTarget) throws(KeychainError) -> [FTPCredential] {
        log.events.append("lookup")
        return items.filter { target.accepts($0.attributes) }
            .map { FTPCredential(attributes: $0.attributes, secret: SecureBytes(copying: Array($0.password.utf8))) }
    }

    func add(_ attributes: ItemAttributes, secret: SecureBytes) throws(KeychainError) {
        log.events.append("add")
        added.append((attributes, String(decoding: secret.copyBytes(), as: UTF8.self)))
    }

    func updateSecret(of credential: FTPCredential, secret: SecureBytes) throws(KeychainError) {
        log.events.append("update")
        updated.append((credential.attributes, String(decoding: secret.copyBytes(), as: UTF8.self)))
    }
}

func internetItem(_ server: String, account: String?, protocol proto: String = "ftp", port: String? = "21",
                  label: String? = nil) -> ItemAttributes {
    var attributes = ItemAttributes(.internet, [.server: server, .protocol: proto])
    attributes[.account] = account
    attributes[.port] = port
    attributes[.label] = label
    return attributes
}
