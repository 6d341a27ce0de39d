import KCCrypto
import KCFormat
import KCSync
import KCKeychain
import KCVault

/// Everything a front end asks of one vault, whoever answers: the vault opened in this process
/// (`LocalSession`, which is also what the agent's server runs with the key it holds), its
/// unlocked agent (`AgentSession`, KCCommandSession), or the agent until it ends and then the
/// vault opened here (`FallbackSession`, what a command gets from its context). A command asks
/// for its session once and sends every request through it, so the rule "agent or vault" is
/// decided in one place.
///
/// Each request throws the session's `Failure`: `KeychainError` for the vault opened here
/// (`LocalSession`), `SessionError` for a session the agent may answer (the agent's own failures
/// beside the keychain's). The sync requests throw untyped: a `MergeError` when copies cannot be
/// merged, a `SyncCopy.Problem` or git failure from a round, else a `KeychainError` or a
/// `SessionError`.
public protocol KeychainSession<Failure>: ItemStore {
    /// Every version of the single item `query` selects, oldest first; secrets only when `revealing`.
    func history(_ query: Query, revealing: Bool) throws(Failure) -> [ItemVersion]
    /// The deleted items still in the vault that match any of `queries` (`Keychain.deletedItems`).
    func deletedItems(matchingAny queries: [Query]) throws(Failure) -> [DeletedItem]
    /// Brings back the deleted items `queries` select (`Keychain.restore`); the items restored.
    func restore(anyOf queries: [Query]) throws(Failure) -> [Item]
    /// Keeps only each item's current version: the record counts before and after.
    func compact() throws(Failure) -> (before: Int, after: Int)
    /// The vault's torn tail as read now (nil: none), removed when `removing`.
    func tornTail(removing: Bool) throws(Failure) -> (offset: Int, length: Int)?
    /// Walks the whole file, past damage (`Keychain.check`); reveals and writes nothing.
    func check() throws(Failure) -> CheckReport
    /// The items in conflict (only `itemID`'s when given), their versions' secrets when `revealing`.
    func conflicts(of itemID: [UInt8]?, revealing: Bool) throws(Failure) -> [ItemConflict]
    /// Names this machine's device `name` (checked already) in the vault.
    func nameDevice(_ name: String) throws(Failure)

    /// The live vault's record ids and version vector as the sync copy would receive them.
    func liveSummary() throws -> CopySummary
    /// The record ids and version vector of `copy`, a copy of this vault (the remote's, say).
    func summary(of copy: [UInt8]) throws -> CopySummary
    /// Runs `body` with the live vault's file less the records that stay on this machine (a sync
    /// copy being made); this process holds the vault's lock meanwhile when it reads it itself.
    func withLiveVault(_ body: ([UInt8]) throws -> Void) throws
    /// `theirs` merged into `ours`, two copies of this vault (git's merge driver; no lock taken).
    func merge(ours: [UInt8], theirs: [UInt8]) throws -> MergeSummary
    /// One `kc sync` round (`SyncRound`): `round` makes it for the keys at hand, given the master
    /// password when this process holds the key (nil when the agent does: no driver descriptor);
    /// `unlock` gives the key of a copy rotated elsewhere (`SyncRound.run(_:unlock:)`).
    func sync(_ round: (SecureBytes?) throws -> SyncRound,
              unlock: @escaping (VaultHeader, SecureBytes) -> SecureBytes?) throws -> SyncRound.Report
}

/// The master password of one command: asked once, and the one already given (typed for an item
/// that asks for it again, say) used for every later need, so a descriptor that can be read only
/// once is never read twice and a person never types it twice. Only a password that proved wrong
/// is asked again, and only while `tries` allows (a person at a terminal: a few tries).
public final class MasterPasswordSource {
    /// Why the password is wanted, for the prompt.
    public enum Purpose: Sendable { case open, askAgain }

    private let ask: (Purpose) throws(KeychainError) -> SecureBytes
    private let tries: () -> Int
    /// The password given so far, if any.
    public private(set) var given: SecureBytes?
    /// How often `ask` ran (once, or more after wrong passwords: `rejectGiven`).
    public private(set) var asked = 0

    /// `ask` prompts (or reads a descriptor or file) for `purpose`; `tries` is how many times in
    /// all it may run when the passwords it gives are wrong (asked when one is: the source is
    /// known by then).
    public init(given: SecureBytes? = nil, tries: @escaping () -> Int = { 1 },
                ask: @escaping (Purpose) throws(KeychainError) -> SecureBytes) {
        self.given = given
        self.tries = tries
        self.ask = ask
    }

    /// Forgets the password `ask` gave, which proved wrong, when another try is left: true when
    /// the next `password()` asks again. A password given at creation is never asked again.
    public func rejectGiven() -> Bool {
        guard given != nil, asked > 0, asked < tries() else { return false }
        given = nil
        return true
    }

    /// Runs `body` (which uses `password()`) again after each wrong password while tries are
    /// left (`rejectGiven`); each run derives the key anew.
    public func retryingWrongPassword<T>(_ body: () throws(KeychainError) -> T) throws(KeychainError) -> T {
        while true {
            do { return try body() } catch where Self.isWrongPassword(error) && rejectGiven() {
                continue
            }
        }
    }

    /// Whether `error` says the master password is wrong.
    public static func isWrongPassword(_ error: KeychainError) -> Bool {
        if case .vault(.wrongPassword) = error.reason { return true }
        return false
    }

    /// The password: the one given, else asked now (once).
    public func password(for purpose: Purpose = .open) throws(KeychainError) -> SecureBytes {
        if let given { return given }
        asked += 1
        let password = try ask(purpose)
        given = password
        return password
    }
}
