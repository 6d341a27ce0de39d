import KCCrypto
import KCFormat
import KCVault

/// The vault keys a merge may open copies with (Docs/SYNC.md, "Password changes and key
/// rotations"): the key the caller has, and every earlier key found in the earlier-key records
/// (kind 5) of the copies opened with them. A class, so that what one merge learns serves the
/// next merges of the same sync.
public final class VaultKeys {
    /// Known keys, the caller's first, in the order they were learned.
    public private(set) var all: [SecureBytes]
    /// Headers whose key is known (the live vault's first, then those of the copies opened): a
    /// copy with another header that no known key opens was re-keyed elsewhere (`keyNotKnown`).
    public private(set) var knownHeaders: [VaultHeader] = []
    /// Asked for the key of a header whose copy none of the known keys opens (a key rotated on
    /// another machine): it unwraps it with a master password, or returns nil when it cannot.
    /// Only `adopt` asks it, and only within this vault's own KDF cost.
    private let unlock: (VaultHeader) -> SecureBytes?
    /// Headers `adopt` refused, and why: never asked for again.
    private var refused: [(header: VaultHeader, error: MergeError)] = []

    public init(_ key: SecureBytes, header: VaultHeader? = nil, unlock: @escaping (VaultHeader) -> SecureBytes? = { _ in nil }) {
        all = [key]
        knownHeaders = header.map { [$0] } ?? []
        self.unlock = unlock
    }

    /// The key the caller started with.
    public var first: SecureBytes { all[0] }

    /// Adds `key` unless it is known already.
    public func add(_ key: SecureBytes) {
        if !all.contains(where: { $0.isEqual(to: key) }) { all.append(key) }
    }

    /// Adds the earlier keys kept in `records`.
    public func learn(from records: [VaultRecord]) {
        for record in records where record.payload.kind == .earlierKey {
            if let key = record.secureField(.earlierKey) { add(key) }
        }
    }

    /// A copy read whole, and the key it was read with.
    struct Opened {
        let image: VaultImage
        let key: SecureBytes
    }

    /// Copies to learn earlier keys from only when a copy opens with none of the known keys
    /// (reading them costs a pass over their records).
    private var laterSources: [[UInt8]] = []

    /// Learns the earlier keys of `bytes` (a copy one of the known keys opens) the first time a
    /// copy opens with none of them.
    public func learnLater(from bytes: [UInt8]) { laterSources.append(bytes) }

    /// `bytes` read whole with the first known key that reads it, learning its earlier keys
    /// (and, when no known key reads it, those of the sources kept for later first).
    private func attempt(_ bytes: [UInt8]) -> Opened? {
        while true {
            for key in all {
                guard let image = try? VaultImage(bytes: bytes, key: key) else { continue }
                learn(from: image.records)
                if !knownHeaders.contains(image.header) { knownHeaders.append(image.header) }
                return Opened(image: image, key: key)
            }
            guard learnNextSource() else { return nil }
        }
    }

    /// Learns the earlier keys of the next copy kept for later; false when none is left.
    private func learnNextSource() -> Bool {
        guard !laterSources.isEmpty else { return false }
        let source = laterSources.removeFirst()
        if let image = all.lazy.compactMap({ try? VaultImage(bytes: source, key: $0) }).first { learn(from: image.records) }
        return true
    }

    /// Why `bytes` (the copy of `side`) opens with no known key: `keyNotKnown` when its first
    /// record does not read and its header is not one whose key is known (its key was rotated
    /// elsewhere); else what reading it with the first key found.
    private func failure(_ bytes: [UInt8], side: MergeSide) -> MergeError {
        do { _ = try VaultImage(bytes: bytes, key: first) } catch {
            if case .damaged(let offset) = error, let header = try? VaultImage.header(of: bytes), offset == header.recordsOffset,
               !knownHeaders.isEmpty, !knownHeaders.contains(header) {
                return .keyNotKnown(side, header)
            }
            return .unreadable(side, error)
        }
        return .resultNotVerified   // it opened after all: not expected
    }

    /// Opens `ours` and `theirs`, each with the first known key that reads it whole, learning
    /// the earlier keys of each copy opened (so a copy under the newest key opens the others).
    func open(ours: [UInt8], theirs: [UInt8]) throws(MergeError) -> (ours: Opened, theirs: Opened) {
        var opened: [MergeSide: Opened] = [:]
        let copies: [(MergeSide, [UInt8])] = [(.ours, ours), (.theirs, theirs)]
        var progress = true
        while progress && opened.count < 2 {
            progress = false
            for (side, bytes) in copies where opened[side] == nil {
                if let copy = attempt(bytes) { opened[side] = copy; progress = true }
            }
        }
        for (side, bytes) in copies where opened[side] == nil { throw failure(bytes, side: side) }
        return (opened[.ours]!, opened[.theirs]!)
    }

    /// The records of `bytes` (the copy of `side`), read whole with a known key, or with the key
    /// of its header once `adopt` took it.
    public func records(of bytes: [UInt8], side: MergeSide = .theirs) throws(MergeError) -> [VaultRecord] {
        try VaultMerge.checkSize(bytes.count, of: side)
        if let copy = attempt(bytes) { return copy.image.records }
        let error = failure(bytes, side: side)
        guard case .keyNotKnown(_, let header) = error else { throw error }
        return try adopt(header, of: bytes, side: side).records
    }

    /// Takes the key of `header`, the header of `bytes` (the copy of `side`, which no known key
    /// opens), for that of a key rotation made on another machine (Docs/SYNC.md, rule 8), only
    /// when the copy proves it descends from this vault; the one place a key not derived from
    /// this vault's own keys is let in. In order:
    /// 1. one of its rotation proofs (Docs/FORMAT.md, "Rotation proofs": clear values after a
    ///    version-3 header) verifies under a key this machine has (the caller's, or an earlier key
    ///    of its copies), else `notLinked`, before `unlock` is asked and before anything is
    ///    derived: a copy someone made under a key of their own and gave this vault's id (a
    ///    foreign vault) carries none, and neither does a rotation written by a kc without them;
    /// 2. its KDF cost is at most this vault's own header's (the first known), pass for pass and
    ///    byte for byte, else `keyDerivationTooCostly` and `unlock` is not asked;
    /// 3. `unlock` gives its key, else `keyNotKnown`;
    /// 4. the copy reads whole with it, else `unreadable`;
    /// 5. it holds an earlier-key record (kind 5, sealed under that key) with a key this machine
    ///    has, else `notLinked`. Chained rotations keep every key they replaced, and each of two
    ///    concurrent rotations keeps the common one, so every honest rotation passes 1 and 5.
    /// Only then is the key added (with the copy's earlier keys). A header refused is refused
    /// again, for either side, without asking.
    func adopt(_ header: VaultHeader, of bytes: [UInt8], side: MergeSide) throws(MergeError) -> VaultImage {
        if let earlier = refused.first(where: { $0.header == header }) { throw earlier.error.on(side) }
        do throws(MergeError) {
            let copy = try linkedCopy(header, of: bytes, side: side)
            learn(from: copy.image.records)
            add(copy.key)
            remember(header)
            return copy.image
        } catch {
            refused.append((header, error))
            throw error
        }
    }

    /// `adopt`'s checks: the copy read with the key of `header`, and that key.
    private func linkedCopy(_ header: VaultHeader, of bytes: [UInt8], side: MergeSide) throws(MergeError) -> Opened {
        guard let own = knownHeaders.first?.kdf else { throw .keyNotKnown(side, header) }
        while learnNextSource() {}   // every earlier key this machine has
        guard provesRotation(bytes) else { throw .notLinked(side, header) }
        guard header.kdf.opsLimit <= own.opsLimit, header.kdf.memoryLimit <= own.memoryLimit else {
            throw .keyDerivationTooCostly(side, asked: header.kdf, allowed: own)
        }
        guard let key = unlock(header) else { throw .keyNotKnown(side, header) }
        let image: VaultImage
        do { image = try VaultImage(bytes: bytes, key: key) } catch { throw .unreadable(side, error) }
        let linked = image.records.contains { record in
            guard record.payload.kind == .earlierKey, let earlier = record.secureField(.earlierKey) else { return false }
            return all.contains { $0.isEqual(to: earlier) }
        }
        guard linked else { throw .notLinked(side, header) }
        return Opened(image: image, key: key)
    }
}

extension VaultMerge {
    /// `merge(ours:theirs:keys:)`, with the key of a copy that none of `keys` opens once
    /// `keys.adopt` took it (asked once per header, refused unless the copy is linked to the vault).
    public static func merge(ours: [UInt8], theirs: [UInt8], unlocking keys: VaultKeys) throws(MergeError) -> Result {
        var asked: [VaultHeader] = []
        while true {
            do { return try merge(ours: ours, theirs: theirs, keys: keys) } catch {
                guard case .keyNotKnown(let side, let header) = error, !asked.contains(header) else { throw error }
                asked.append(header)
                _ = try keys.adopt(header, of: side == .ours ? ours : theirs, side: side)
            }
        }
    }
}

extension VaultKeys {
    /// True when one of the rotation proofs of `bytes` was made with one of the known keys over
    /// its header (Docs/FORMAT.md, "Rotation proofs"): read in clear, nothing derived.
    func provesRotation(_ bytes: [UInt8]) -> Bool {
        guard let (header, proofs) = try? VaultImage.rotationProofs(of: bytes), !proofs.isEmpty else { return false }
        let encoded = header.encoded()
        return all.contains { key in
            let expected = Crypto.rotationProof(of: encoded, earlierKey: key)
            return proofs.contains { Crypto.constantTimeEqual($0, expected) }
        }
    }

    /// Counts `header` among those whose key is known.
    func remember(_ header: VaultHeader) {
        if !knownHeaders.contains(header) { knownHeaders.append(header) }
    }
}
