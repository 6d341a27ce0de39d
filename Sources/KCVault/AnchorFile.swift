import KCFormat

/// The bytes of a rollback anchor file (Docs/FORMAT.md, "Anchor file"): two slots, each a
/// version vector with a generation number and a checksum, rewritten in place one at a time.
/// The slot with the higher generation that passes its checks is the anchor; a write goes to the
/// other one, so a write torn or lost by a power loss leaves the previous anchor readable.
///
/// The first format, one text line per device, is still read (`text`); kc replaces it with the
/// slots at its next write.
enum AnchorFile {
    static let magic: [UInt8] = Array("KCANCHOR".utf8)
    /// Slots start on this boundary, so that writing one never touches the other's blocks.
    static let blockSize = 4096
    /// Magic, generation (u64) and device count (u32) before the entries; CRC-32C (u32) after them.
    static let headerLength = magic.count + 8 + 4
    static let entryLength = RecordPayload.idLength + 8
    static let checksumLength = 4
    /// The largest anchor file kc reads or writes (regions of half this size, 349,524 devices
    /// each); a larger file is damaged.
    static let largestFile = 16 << 20
    /// The largest write assumed to reach the disk whole or not at all (a sector): a longer slot
    /// write may tear.
    static let atomicWrite = 512

    /// One slot as read: its generation and vector.
    struct Slot: Equatable {
        var generation: UInt64
        var vector: VersionVector
    }

    enum Contents: Equatable {
        /// The first format (an empty file is the empty vector).
        case text(VersionVector)
        /// The slot format: each slot that passes its checks (nil when torn, zeroed or never
        /// written), and the size of each slot's region (half the file).
        case slots(first: Slot?, second: Slot?, region: Int)
        /// Neither format: reported, never silently replaced.
        case damaged

        /// The anchor these contents hold; nil when damaged (or no slot passes its checks).
        var vector: VersionVector? {
            switch self {
            case .text(let vector): return vector
            case .slots: return newest?.slot.vector
            case .damaged: return nil
            }
        }

        /// The slot holding the anchor and its index (0 or 1): the valid one with the higher
        /// generation, the first on a tie.
        var newest: (index: Int, slot: Slot)? {
            guard case let .slots(first, second, _) = self else { return nil }
            switch (first, second) {
            case let (a?, b?): return b.generation > a.generation ? (1, b) : (0, a)
            case let (a?, nil): return (0, a)
            case let (nil, b?): return (1, b)
            case (nil, nil): return nil
            }
        }
    }

    /// Reads a whole anchor file.
    static func parse(_ bytes: [UInt8]) -> Contents {
        let region = bytes.count / 2
        if bytes.count >= 2 * blockSize, bytes.count % (2 * blockSize) == 0,
           bytes.starts(with: magic) || bytes[region...].starts(with: magic) {
            return .slots(first: slot(bytes[0..<region]), second: slot(bytes[region...]), region: region)
        }
        // The first format exactly as kc wrote it (FORMAT.md): lines sorted by device id, lower-case
        // hex, one space, a decimal counter, each ending in LF; any other spelling is damage.
        let text = String(decoding: bytes, as: UTF8.self)
        if let vector = VersionVector(text: text), Array(vector.text.utf8) == bytes {
            return .text(vector)
        }
        return .damaged
    }

    /// The slot in `bytes` (one region), nil unless its magic, count, order and checksum hold.
    static func slot(_ bytes: ArraySlice<UInt8>) -> Slot? {
        guard bytes.starts(with: magic) else { return nil }
        return bytes.withUnsafeBytes { raw -> Slot? in
            var reader = ByteReader(raw, offset: magic.count)
            do {
                let generation = try reader.u64()
                let count = Int(try reader.u32())
                guard count <= (raw.count - headerLength - checksumLength) / entryLength else { return nil }
                var vector = VersionVector()
                var previous: [UInt8]?
                for _ in 0..<count {
                    let device = try reader.bytes(RecordPayload.idLength)
                    let counter = try reader.u64()
                    if let previous, !previous.lexicographicallyPrecedes(device) { return nil }
                    previous = device
                    vector.raise(device, to: counter)
                }
                let end = reader.offset
                guard try reader.u32() == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<end])) else { return nil }
                return Slot(generation: generation, vector: vector)
            } catch {
                return nil
            }
        }
    }

    /// The bytes of one slot (without the padding up to its region's end).
    static func encode(_ slot: Slot) -> [UInt8] {
        var writer = ByteWriter(capacity: headerLength + slot.vector.counters.count * entryLength + checksumLength)
        writer.raw(magic)
        writer.u64(slot.generation)
        writer.u32(UInt32(slot.vector.counters.count))
        for (device, counter) in slot.vector.counters.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            writer.raw(device)
            writer.u64(counter)
        }
        writer.u32(CRC32C.checksum(writer.bytes))
        return writer.bytes
    }

    /// The length of a slot holding `devices` devices.
    static func slotLength(devices: Int) -> Int { headerLength + devices * entryLength + checksumLength }

    /// The region size for a slot of `length` bytes: whole blocks.
    static func region(for length: Int) -> Int { (length + blockSize - 1) / blockSize * blockSize }

    /// A whole new file holding `slot` in the first slot and nothing valid in the second, with
    /// regions large enough for twice as many devices (the file need not grow at the next one),
    /// within `largestFile`; nil when the slot alone does not fit.
    static func file(_ slot: Slot) -> [UInt8]? {
        let bytes = encode(slot)
        guard 2 * region(for: bytes.count) <= largestFile else { return nil }
        let region = min(region(for: bytes.count + slot.vector.counters.count * entryLength), largestFile / 2)
        return bytes + [UInt8](repeating: 0, count: 2 * region - bytes.count)
    }
}
