import KCKeychain
import KCSession

// The hints of a lookup that found nothing and of an add that found the item already there: the
// step a newcomer misses (-i, kc search, -U), said once the failure is known.

/// `error` with a hint when it is errSecItemNotFound for `queries` and one helps: `-i` when the
/// same queries ignoring case match an item, else `kc search TERM` when a search for the name
/// (or account) finds one. The look costs a second read of the vault, so it is made only for a
/// person (standard error a terminal): a script's lookup reads the vault once. Any other failure,
/// or a failure of the second look, leaves it as it was.
func withNotFoundHint(_ error: CLIError, queries: [Query], store: any ItemStore<SessionError>, _ context: Context) -> CLIError {
    guard error.status == .itemNotFound, case .keychain(let inner) = error, case .none = inner.reason,
          context.errors.isTerminal else { return error }
    let message = FailureWording(error).message
    if queries.contains(where: { !$0.ignoreCase }) {
        let ignoringCase = queries.map { query -> Query in
            var query = query
            query.ignoreCase = true
            return query
        }
        if let found = try? store.find(anyOf: ignoringCase, revealing: false), !found.isEmpty {
            return CLIError(.itemNotFound, message, hint: "an item matches when case is ignored: add -i (--ignore-case)")
        }
    }
    let named: [Attribute] = [.label, .service, .server, .account]
    guard let term = named.lazy.compactMap({ attribute in queries.lazy.compactMap { $0.filters[attribute] }.first }).first,
          !term.isEmpty, let found = try? store.search(SearchQuery(terms: [term])), !found.isEmpty else { return error }
    let shown = Printable.text(term)
    return CLIError(.itemNotFound, message, hint: "to look for '\(shown)' in every attribute: kc search \(shellWord(shown))")
}

/// `error` with the hint to add -U when it is errSecDuplicateItem from `kc add`.
func withDuplicateHint(_ error: CLIError) -> CLIError {
    guard error.status == .duplicateItem, case .keychain(let inner) = error, case .none = inner.reason else { return error }
    return CLIError(.duplicateItem, FailureWording(error).message, hint: "to update that item instead, add -U (--update-existing)")
}

/// `word` as typed in a shell: as it is when it holds only safe characters, else in single quotes.
private func shellWord(_ word: String) -> String {
    let safe = word.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-@/:+,%=".unicodeScalars.contains($0) }
    return safe ? word : "'" + word.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
}
