// libFuzzer target for the vault parser: header decode, record frame scan and payload decode
// (the pure KCFormat layer, compiled into this binary from Sources/KCFormat/*.swift).
// Build and run: Tests/Fuzz/run.sh vault_parser SECONDS
//
// Invariants checked on every input (a violation traps, which libFuzzer reports as a crash):
// - a decoded header is within the KDF bounds and re-encodes to exactly the bytes it came from;
// - the frame scan only returns bodies inside the input, of the frame's length, in sequence order,
//   reports the end only at the end of the input, and always makes progress; a page frame only
//   where pages are allowed (a version-2 header, or no header) and within the page bounds;
// - a page's entries lie inside it, in order, each at least a payload's fixed part, filling it;
// - a decoded payload's fields lie inside the payload, in order, after the fixed part, and its fixed
//   part re-encodes to the same bytes; no tag but the frontier appears twice.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVaultParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let raw = UnsafeRawBufferPointer(start: data, count: size)
    let bytes = Array(raw)
    var start = 0
    var allowsPages = true
    if let header = try? VaultHeader.decode(bytes) {
        precondition(header.kdf.isWithinBounds, "header outside the KDF bounds accepted")
        precondition(header.encoded() == Array(bytes.prefix(VaultHeader.length)), "header does not re-encode to its bytes")
        start = recordStart(header, bytes)
        allowsPages = header.allowsVersion2Content
    }
    // The record area: after a valid header, else the whole input (so the scan sees arbitrary bytes).
    scanRecords(raw, from: start, allowsPages: allowsPages)
    // The whole input as a decrypted page.
    checkPage(raw)
    // The whole input as a decrypted payload.
    checkPayload(raw)
    // Again with every checksum made valid, so that mutations reach the checks behind the CRCs
    // (lengths, sequence numbers, KDF bounds, reserved bytes) instead of stopping at them.
    var fixed = bytes
    fixChecksums(&fixed)
    if fixed != bytes {
        fixed.withUnsafeBytes { fixedRaw in
            var fixedStart = 0
            var fixedAllowsPages = true
            if let header = try? VaultHeader.decode(fixed) {
                precondition(header.kdf.isWithinBounds && header.encoded() == Array(fixed.prefix(VaultHeader.length)))
                fixedStart = recordStart(header, fixed)
                fixedAllowsPages = header.allowsVersion2Content
            }
            scanRecords(fixedRaw, from: fixedStart, allowsPages: fixedAllowsPages)
        }
    }
    return 0
}

/// Where the records of `bytes` start: after the rotation proofs of a version-3 header, or at the
/// end of an input that ends inside them (which the reader must refuse as truncated).
func recordStart(_ header: VaultHeader, _ bytes: [UInt8]) -> Int {
    guard header.recordsOffset > bytes.count else { return header.recordsOffset }
    precondition((try? header.proofs(in: bytes)) == nil, "rotation proofs read past the end of the input")
    return bytes.count
}

/// Recomputes the header CRC (when the magic is there) and each frame's CRC along the chain of lengths.
func fixChecksums(_ bytes: inout [UInt8]) {
    var offset = 0
    if bytes.count >= VaultHeader.length && bytes.starts(with: VaultHeader.magic) {
        let crc = CRC32C.checksum(bytes[0..<136])
        for i in 0..<4 { bytes[136 + i] = UInt8(truncatingIfNeeded: crc >> (8 * i)) }
        offset = (try? VaultHeader.decode(bytes))?.recordsOffset ?? VaultHeader.length
    }
    while bytes.count - offset >= RecordFrame.length {
        let crc = CRC32C.checksum(bytes[offset..<(offset + 12)])
        for i in 0..<4 { bytes[offset + 12 + i] = UInt8(truncatingIfNeeded: crc >> (8 * i)) }
        let length = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3] & 0x7f) << 24
        offset += RecordFrame.length + length
    }
}

func scanRecords(_ raw: UnsafeRawBufferPointer, from start: Int, allowsPages: Bool) {
    var offset = start
    var sequence: UInt64 = 1
    while true {
        let scan: FrameScan
        do { scan = try RecordFrame.scan(raw, at: offset, expectedSequence: sequence, allowsPages: allowsPages) } catch { return }
        switch scan {
        case .end:
            precondition(offset == raw.count, "end reported before the end of the input")
            return
        case .tornTail:
            precondition(offset < raw.count, "torn tail at the end of the input")
            return
        case .record(let frame, let body):
            precondition(frame.sequence == sequence, "record out of sequence accepted")
            precondition(body.lowerBound == offset + RecordFrame.length && body.upperBound <= raw.count, "body outside the input")
            precondition(body.count == Int(frame.bodyLength), "body length differs from the frame")
            // What lies between nonce and tag stands in for a decrypted payload, or page.
            let inner = (body.lowerBound + RecordFrame.nonceLength)..<(body.upperBound - RecordFrame.tagLength)
            var records = 1
            if frame.isPage {
                precondition(allowsPages, "a page accepted where pages are not allowed")
                precondition(body.count >= RecordPage.minimumBodyLength && body.count <= RecordPage.maximumBodyLength)
                records = checkPage(UnsafeRawBufferPointer(rebasing: raw[inner])) ?? 1
            } else {
                precondition(body.count >= RecordFrame.minimumBodyLength && body.count <= RecordFrame.maximumBodyLength)
                checkPayload(UnsafeRawBufferPointer(rebasing: raw[inner]))
            }
            precondition(body.upperBound > offset, "no progress")
            offset = body.upperBound
            sequence += UInt64(records)
        }
    }
}

/// Checks the entries of `plain` read as a decrypted page, and each entry as a payload; returns
/// their number (nil when the page is refused).
@discardableResult
func checkPage(_ plain: UnsafeRawBufferPointer) -> Int? {
    guard let entries = try? RecordPage.entries(plain) else { return nil }
    precondition(!entries.isEmpty, "an empty page accepted")
    var position = RecordPage.countLength
    for entry in entries {
        precondition(entry.lowerBound == position + RecordPage.entryHeaderLength, "entry not where its length ends")
        precondition(entry.count >= RecordPayload.fixedLength, "entry shorter than a payload's fixed part")
        checkPayload(UnsafeRawBufferPointer(rebasing: plain[entry]))
        position = entry.upperBound
    }
    precondition(position == plain.count, "bytes after the last entry")
    return entries.count
}

func checkPayload(_ plain: UnsafeRawBufferPointer) {
    guard let payload = try? RecordPayload.decode(plain) else { return }
    precondition(payload.encodedFixedPart() == Array(plain.prefix(RecordPayload.fixedLength)), "fixed part does not re-encode")
    precondition(payload.recordID.counter > 0)
    precondition((payload.kind == .compaction) == (payload.itemID == [UInt8](repeating: 0, count: 16)))
    var position = RecordPayload.fixedLength
    var seen = Set<UInt8>()
    for field in payload.fields {
        precondition(field.range.lowerBound == position + 5, "field not where its header ends")
        precondition(field.range.upperBound <= plain.count, "field outside the payload")
        precondition(field.tag == FieldTag.frontier.rawValue || seen.insert(field.tag).inserted, "duplicate field accepted")
        position = field.range.upperBound
    }
    precondition(position == plain.count, "bytes after the last field")
}
