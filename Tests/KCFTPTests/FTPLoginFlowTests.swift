import KCCrypto
import KCFTP
import KCKeychain
import XCTest

final class FTPLoginFlowTests: XCTestCase {
    var log = EventLog()
    let host = "ftp.example.com"
    let rejected = FTPLoginResult.rejected(reply: "530 Login incorrect.")

    override func setUp() { log = EventLog() }

    private func run(_ url: String = "ftp://ftp.example.com", user: String? = nil, save: FTPSavePolicy = .ask,
                     stdin: String? = nil, insecure: Bool = false,
                     transport: ScriptedTransport, store: MemoryStore, prompter: ScriptedPrompter)
        -> Result<FTPLoginOutcome, FTPLoginError> {
        let options = FTPLoginOptions(target: try! FTPTarget.parse(url), user: user, save: save,
                                      stdinPassword: stdin.map { SecureBytes(copying: Array($0.utf8)) },
                                      connection: FTPConnectionOptions(insecure: insecure))
        let flow = FTPLoginFlow(options: options, transport: transport, store: store, prompter: prompter)
        let result: Result<FTPLoginOutcome, FTPLoginError>
        do { result = .success(try flow.run()) } catch { result = .failure(error) }
        XCTAssertTrue(prompter.steps.isEmpty, "prompts left unasked: \(prompter.steps)")
        return result
    }

    private func status(_ result: Result<FTPLoginOutcome, FTPLoginError>) -> KeychainStatus? {
        if case .failure(let error) = result { return error.status }
        return nil
    }

    func testFoundAndAcceptedWritesNothingAndNeverPrompts() {
        let store = MemoryStore(log: log, items: [(internetItem(host, account: "deploy"), "s3cret")])
        let transport = ScriptedTransport(log: log, logins: [.success])
        let prompter = ScriptedPrompter(log: log)
        let result = run(transport: transport, store: store, prompter: prompter)
        XCTAssertEqual(try result.get(), FTPLoginOutcome(user: "deploy", saved: .usedSaved))
        XCTAssertEqual(transport.logins.map(\.password), ["s3cret"])
        XCTAssertEqual(store.writes, 0)
        XCTAssertEqual(log.events, ["notice", "probe ftp.example.com", "lookup", "login deploy"],
                       "warn about clear text, connect, then look up, then log in")
        XCTAssertEqual(prompter.notices, [.clearText(host: "ftp.example.com")])
    }

    func testFoundRejectedThenCorrectedAndUpdated() {
        let store = MemoryStore(log: log, items: [(internetItem(host, account: "deploy"), "old")])
        let transport = ScriptedTransport(log: log, logins: [rejected, .success])
        let prompter = ScriptedPrompter(log: log, steps: [
            .line(.userName(default: "deploy"), ""),
            .secret(.password(user: "deploy", host: "ftp.example.com"), "new"),
            .confirm(.updateSavedPassword(user: "deploy", host: "ftp.example.com"), true),
        ])
        let result = run(transport: transport, store: store, prompter: prompter)
        XCTAssertEqual(try result.get(), FTPLoginOutcome(user: "deploy", saved: .updated))
        XCTAssertEqual(transport.logins.map(\.password), ["old", "new"])
        XCTAssertEqual(store.updated.map(\.password), ["new"])
        XCTAssertEqual(store.updated.first?.attributes[.account], "deploy")
        XCTAssertEqual(store.added.count, 0)
        XCTAssertTrue(prompter.notices.contains(.savedPasswordRejected(user: "deploy", host: host, reply: "530 Login incorrect.")))
    }

    func testRejectedThenAnotherAccountIsSavedAsANewItem() {
        let store = MemoryStore(log: log, items: [(internetItem(host, account: "deploy"), "old")])
        let transport = ScriptedTransport(log: log, logins: [rejected, .success])
        let prompter = ScriptedPrompter(log: log, steps: [
            .line(.userName(default: "deploy"), "other"),
            .secret(.password(user: "other", host: "ftp.example.com"), "pw"),
            .confirm(.savePassword, true),
        ])
        XCTAssertEqual(try run(transport: transport, store: store, prompter: prompter).get(),
                       FTPLoginOutcome(user: "other", saved: .added))
        XCTAssertEqual(store.added.first?.attributes[.account], "other")
        XCTAssertEqual(store.updated.count, 0, "the deploy item is left alone")
    }

    func testNotFoundTypedAndSaved() {
        let store = MemoryStore(log: log)
        let transport = ScriptedTransport(log: log, logins: [.success])
        let prompter = ScriptedPrompter(log: log, steps: [
            .line(.userName(default: nil), "alice"),
            .secret(.password(user: "alice", host: "ftp.example.com"), "pw"),
            .confirm(.savePassword, true),
        ])
        let result = run("ftp://ftp.example.com:2121/pub", transport: transport, store: store, prompter: prompter)
        XCTAssertEqual(try result.get(), FTPLoginOutcome(user: "alice", saved: .added))
        XCTAssertEqual(store.added.count, 1)
        XCTAssertEqual(store.added.first?.password, "pw")
        XCTAssertEqual(store.added.first?.attributes.values,
                       [.server: host, .protocol: "ftp", .port: "2121", .path: "/pub", .account: "alice", .label: host,
                        .authenticationType: "default"])
        XCTAssertTrue(prompter.notices.contains(.noSavedPassword(user: nil, host: "ftp.example.com:2121", protocol: "ftp")))
    }

    func testNotFoundUserFromURLTypedAndNotSaved() {
        let store = MemoryStore(log: log)
        let transport = ScriptedTransport(log: log, logins: [.success])
        let prompter = ScriptedPrompter(log: log, steps: [
            .secret(.password(user: "deploy", host: "ftp.example.com"), "pw"),
            .confirm(.savePassword, false),
        ])
        let result = run("ftp://deploy@ftp.example.com", transport: transport, store: store, prompter: prompter)
        XCTAssertEqual(try result.get(), FTPLoginOutcome(user: "deploy", saved: .notSaved))
        XCTAssertEqual(store.writes, 0)
    }

    func testCancelAtEachPromptWritesNothing() {
        let prompts: [[ScriptedPrompter.Step]] = [
            [.cancel(.userName(default: nil))],
            [.line(.userName(default: nil), "alice"), .cancel(.password(user: "alice", host: "ftp.example.com"))],
            [.line(.userName(default: nil), "alice"), .secret(.password(user: "alice", host: "ftp.example.com"), "")],   // empty = cancel
            [.line(.userName(default: nil), "alice"), .secret(.password(user: "alice", host: "ftp.example.com"), "pw"),
             .cancel(.savePassword)],
        ]
        for (index, steps) in prompts.enumerated() {
            log = EventLog()
            let store = MemoryStore(log: log)
            let transport = ScriptedTransport(log: log, logins: index == 3 ? [.success] : [])
            let result = run(transport: transport, store: store, prompter: ScriptedPrompter(log: log, steps: steps))
            XCTAssertEqual(status(result), .userCanceled, "case \(index)")
            XCTAssertEqual(store.writes, 0, "case \(index)")
            XCTAssertEqual(transport.logins.count, index == 3 ? 1 : 0, "case \(index)")
        }
    }

    func testThreeWrongAttemptsIsAuthFailed() {
        let store = MemoryStore(log: log)
        let transport = ScriptedTransport(log: log, logins: [rejected, rejected, rejected])
        let prompter = ScriptedPrompter(log: log, steps: [
            .secret(.password(user: "deploy", host: "ftp.example.com"), "a"),
            .line(.userName(default: "deploy"), ""),
            .secret(.password(user: "deploy", host: "ftp.example.com"), "b"),
            .line(.userName(default: "deploy"), "other"),
            .secret(.password(user: "other", host: "ftp.example.com"), "c"),
        ])
        let result = run("ftp://deploy@ftp.example.com", transport: transport, store: store, prompter: prompter)
        XCTAssertEqual(status(result), .authFailed)
        XCTAssertEqual(transport.logins.map(\.user), ["deploy", "deploy", "other"])
        XCTAssertEqual(store.writes, 0)
        XCTAssertEqual(prompter.notices.filter { $0 == .loginIncorrect(reply: "530 Login incorrect.") }.count, 3)
    }

    func testSavedRejectedDoesNotCountAsATypedAttempt() {
        let store = MemoryStore(log: log, items: [(internetItem(host, account: "deploy"), "old")])
        let transport = ScriptedTransport(log: log, logins: [rejected, rejected, rejected, .success])
        let prompter = ScriptedPrompter(log: log, steps: [
            .line(.userName(default: "deploy"), ""), .secret(.password(user: "deploy", host: "ftp.example.com"), "a"),
            .line(.userName(default: "deploy"), ""), .secret(.password(user: "deploy", host: "ftp.example.com"), "b"),
            .line(.userName(default: "deploy"), ""), .secret(.password(user: "deploy", host: "ftp.example.com"), "c"),
            .confirm(.updateSavedPassword(user: "deploy", host: "ftp.example.com"), false),
        ])
        XCTAssertEqual(try run(transport: transport, store: store, prompter: prompter).get().saved, .notSaved)
    }

    func testNoTerminalWhenAPromptIsNeeded() {
        let store = MemoryStore(log: log)
        let transport = ScriptedTransport(log: log)
        let result = run("ftp://deploy@ftp.example.com", transport: transport, store: store,
                         prompter: ScriptedPrompter(log: log, canPrompt: false))
        XCTAssertEqual(status(result), .interactionNotAllowed)
        XCTAssertEqual(transport.logins.count, 0, "no login attempt without a password")
        XCTAssertEqual(log.events.prefix(3), ["notice", "probe ftp.example.com", "lookup"])
    }

    func testNoTerminalAfterTheSavedPasswordIsRejected() {
        let store = MemoryStore(log: log, items: [(internetItem(host, account: "deploy"), "old")])
        let transport = ScriptedTransport(log: log, logins: [rejected])
        let result = run(transport: transport, store: store, prompter: ScriptedPrompter(log: log, canPrompt: false))
        XCTAssertEqual(status(result), .interactionNotAllowed)
        XCTAssertEqual(transport.logins.count, 1)
    }

    func testProbeFailuresComeBeforeLookupAndPrompts() {
        let cases: [(FTPFailure, KeychainStatus)] = [
            (.cannotConnect(host: "ftp.example.com", port: 21, reason: "refused"), .io),
            (.untrusted(host: "ftp.example.com", detail: "self-signed"), .notTrusted), (.noTLS(host: "ftp.example.com", reply: nil), .io),
        ]
        for (failure, expected) in cases {
            log = EventLog()
            let store = MemoryStore(log: log, items: [(internetItem(host, account: "deploy", protocol: "ftps"), "pw")])
            let result = run("ftps://ftp.example.com", transport: ScriptedTransport(log: log, probe: failure), store: store,
                             prompter: ScriptedPrompter(log: log))
            XCTAssertEqual(status(result), expected)
            XCTAssertEqual(log.events, ["probe ftp.example.com"], "nothing after a failed connection")
        }
    }

    func testNetworkFailureDuringLoginIsIOAndSavesNothing() {
        let store = MemoryStore(log: log)
        let transport = ScriptedTransport(log: log, logins: [.failed(.closed(host: "ftp.example.com", awaited: nil))])
        let prompter = ScriptedPrompter(log: log, steps: [.secret(.password(user: "deploy", host: "ftp.example.com"), "pw")])
        let result = run("ftp://deploy@ftp.example.com", save: .yes, transport: transport, store: store, prompter: prompter)
        XCTAssertEqual(status(result), .io)
        XCTAssertEqual(store.writes, 0)
    }

    func testSeveralMatchesAreChosenOnTheTerminal() {
        let store = MemoryStore(log: log, items: [
            (internetItem(host, account: "alice", label: "Alice"), "pa"),
            (internetItem(host, account: "bob", label: "Bob"), "pb"),
        ])
        let transport = ScriptedTransport(log: log, logins: [.success])
        let prompter = ScriptedPrompter(log: log, steps: [.line(.chooseSavedPassword(count: 2), "3"), .line(.chooseSavedPassword(count: 2), "2")])
        XCTAssertEqual(try run(transport: transport, store: store, prompter: prompter).get(),
                       FTPLoginOutcome(user: "bob", saved: .usedSaved))
        XCTAssertEqual(transport.logins.map(\.password), ["pb"])
        XCTAssertTrue(prompter.notices.contains(.severalSavedPasswords(
            host: host, choices: [internetItem(host, account: "alice", label: "Alice"), internetItem(host, account: "bob", label: "Bob")])))
        XCTAssertTrue(prompter.notices.contains(.answerOutOfRange(count: 2)))
    }

    func testSeveralMatchesWithoutATerminalSayHowToNarrow() {
        let store = MemoryStore(log: log, items: [(internetItem(host, account: "alice"), "pa"), (internetItem(host, account: "bob"), "pb")])
        let transport = ScriptedTransport(log: log)
        let result = run(transport: transport, store: store, prompter: ScriptedPrompter(log: log, canPrompt: false))
        guard case .failure(.severalSavedPasswords(let accounts)) = result else { return XCTFail("expected several matches") }
        XCTAssertEqual(accounts, ["alice", "bob"])
        XCTAssertEqual(status(result), .param)
        XCTAssertEqual(transport.logins.count, 0)
    }

    func testUserFlagAndURLUserNarrowTheLookup() {
        let items = [(internetItem(host, account: "alice"), "pa"), (internetItem(host, account: "bob"), "pb")]
        for (url, user) in [("ftp://bob@ftp.example.com", nil), ("ftp://alice@ftp.example.com", "bob")] {
            log = EventLog()
            let transport = ScriptedTransport(log: log, logins: [.success])
            let outcome = try? run(url, user: user, transport: transport, store: MemoryStore(log: log, items: items),
                                   prompter: ScriptedPrompter(log: log, canPrompt: false)).get()
            XCTAssertEqual(outcome, FTPLoginOutcome(user: "bob", saved: .usedSaved), "--user wins over the URL")
            XCTAssertEqual(transport.logins.map(\.password), ["pb"])
        }
    }

    func testPasswordFromStandardInput() {
        // Replaces the saved password, saved without asking with --save yes, no terminal needed.
        let store = MemoryStore(log: log, items: [(internetItem(host, account: "deploy"), "old")])
        let transport = ScriptedTransport(log: log, logins: [.success])
        let outcome = try? run(save: .yes, stdin: "new", transport: transport, store: store,
                               prompter: ScriptedPrompter(log: log, canPrompt: false)).get()
        XCTAssertEqual(outcome, FTPLoginOutcome(user: "deploy", saved: .updated))
        XCTAssertEqual(transport.logins.map(\.password), ["new"])
        XCTAssertEqual(store.updated.map(\.password), ["new"])

        // --save ask without a terminal: logged in, not saved, and said so.
        log = EventLog()
        let prompter = ScriptedPrompter(log: log, canPrompt: false)
        let notSaved = try? run("ftp://deploy@ftp.example.com", stdin: "pw", transport: ScriptedTransport(log: log, logins: [.success]),
                                store: MemoryStore(log: log), prompter: prompter).get()
        XCTAssertEqual(notSaved?.saved, .notSaved)
        XCTAssertTrue(prompter.notices.contains(.notSavedWithoutTerminal))

        // Rejected: one attempt, errSecAuthFailed, no prompt even with a terminal.
        log = EventLog()
        let once = ScriptedTransport(log: log, logins: [rejected])
        let result = run("ftp://deploy@ftp.example.com", save: .yes, stdin: "bad", transport: once,
                         store: MemoryStore(log: log), prompter: ScriptedPrompter(log: log))
        XCTAssertEqual(status(result), .authFailed)
        XCTAssertEqual(once.logins.count, 1)
    }

    func testSaveNoNeverWritesAndSaveYesNeverAsks() {
        let transport = ScriptedTransport(log: log, logins: [.success])
        let store = MemoryStore(log: log)
        let prompter = ScriptedPrompter(log: log, steps: [.secret(.password(user: "deploy", host: "ftp.example.com"), "pw")])
        XCTAssertEqual(try run("ftp://deploy@ftp.example.com", save: .no, transport: transport, store: store, prompter: prompter).get().saved,
                       .notSaved)
        XCTAssertEqual(store.writes, 0)
        let yesStore = MemoryStore(log: log)
        let yesPrompter = ScriptedPrompter(log: log, steps: [.secret(.password(user: "deploy", host: "ftp.example.com"), "pw")])
        XCTAssertEqual(try run("ftp://deploy@ftp.example.com", save: .yes, transport: ScriptedTransport(log: log, logins: [.success]),
                               store: yesStore, prompter: yesPrompter).get().saved, .added)
        XCTAssertEqual(yesStore.added.count, 1)
    }

    func testPasswordStoredForFTPSIsNeverSentOverPlainFTP() {
        let store = MemoryStore(log: log, items: [(internetItem(host, account: "deploy", protocol: "ftps"), "tls-only")])
        let transport = ScriptedTransport(log: log)
        let result = run("ftp://deploy@ftp.example.com", transport: transport, store: store,
                         prompter: ScriptedPrompter(log: log, canPrompt: false))
        XCTAssertEqual(status(result), .interactionNotAllowed)
        XCTAssertTrue(transport.logins.isEmpty)
    }

    func testClearTextWarningOnlyForRemotePlainFTP() {
        let remote = ScriptedPrompter(log: log, steps: [.secret(.password(user: "deploy", host: "ftp.example.com"), "")])
        _ = run("ftp://deploy@ftp.example.com", transport: ScriptedTransport(log: log), store: MemoryStore(log: log), prompter: remote)
        XCTAssertEqual(remote.notices.filter { $0 == .clearText(host: "ftp.example.com") }.count, 1)
        for url in ["ftp://deploy@127.0.0.1", "ftps://deploy@ftp.example.com"] {
            let prompter = ScriptedPrompter(log: log, steps: [.secret(.password(user: "deploy", host: try! FTPTarget.parse(url).host), "")])
            _ = run(url, transport: ScriptedTransport(log: log), store: MemoryStore(log: log), prompter: prompter)
            XCTAssertFalse(prompter.notices.contains { if case .clearText = $0 { return true } else { return false } }, url)
        }
        let insecure = ScriptedPrompter(log: log, steps: [.secret(.password(user: "deploy", host: "ftp.example.com"), "")])
        _ = run("ftps://deploy@ftp.example.com", insecure: true, transport: ScriptedTransport(log: log),
                store: MemoryStore(log: log), prompter: insecure)
        XCTAssertTrue(insecure.notices.contains(.certificateNotVerified(host: "ftp.example.com")))
    }

    func testUserNamesWithLineBreaksAreRefused() {
        let result = run("ftp://ftp.example.com", user: "evil\r\nDELE x", transport: ScriptedTransport(log: log),
                         store: MemoryStore(log: log), prompter: ScriptedPrompter(log: log))
        XCTAssertEqual(status(result), .param)
    }

    func testInsecureAsksBeforeSendingASavedPassword() {
        let saved = [(internetItem(host, account: "deploy", protocol: "ftps"), "saved-pw")]
        // Confirmed: sent.
        let yes = ScriptedTransport(log: log, logins: [.success])
        let confirmed = run("ftps://ftp.example.com", insecure: true, transport: yes, store: MemoryStore(log: log, items: saved),
                            prompter: ScriptedPrompter(log: log, steps: [
                                .confirm(.sendToUnverifiedServer(user: "deploy", host: "ftp.example.com"), true),
                            ]))
        XCTAssertEqual(try confirmed.get(), FTPLoginOutcome(user: "deploy", saved: .usedSaved))
        XCTAssertEqual(yes.logins.map(\.password), ["saved-pw"])
        // Declined: canceled, nothing sent.
        let no = ScriptedTransport(log: log)
        let declined = run("ftps://ftp.example.com", insecure: true, transport: no, store: MemoryStore(log: log, items: saved),
                           prompter: ScriptedPrompter(log: log, steps: [
                               .confirm(.sendToUnverifiedServer(user: "deploy", host: "ftp.example.com"), false),
                           ]))
        XCTAssertEqual(status(declined), .userCanceled)
        XCTAssertTrue(no.logins.isEmpty)
        // No terminal: not sent, and the failure says why.
        let none = ScriptedTransport(log: log)
        let refused = run("ftps://ftp.example.com", insecure: true, transport: none, store: MemoryStore(log: log, items: saved),
                          prompter: ScriptedPrompter(log: log, canPrompt: false))
        guard case .failure(.terminalNeeded(.unverifiedServerConfirmation(user: "deploy"))) = refused else {
            return XCTFail("expected a refusal, got \(refused)")
        }
        XCTAssertTrue(none.logins.isEmpty)
        // Verified TLS, or a password given on standard input: no question.
        let verified = ScriptedTransport(log: log, logins: [.success])
        _ = try? run("ftps://ftp.example.com", transport: verified, store: MemoryStore(log: log, items: saved),
                     prompter: ScriptedPrompter(log: log, canPrompt: false)).get()
        XCTAssertEqual(verified.logins.count, 1)
    }
}
