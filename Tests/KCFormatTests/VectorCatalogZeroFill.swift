import KCFormat

/// Zero fill: what a power loss leaves when a file grew but some of the append's sectors never
/// reached the disk (Docs/FORMAT.md, "Reading rules"), and the damage that rule must not excuse.
extension VectorCatalog {
    /// `item` with a secret of `count` bytes, so that its record spans several sectors.
    static func withSecret(_ item: VectorItem, _ count: Int) -> VectorItem {
        var large = item
        large.secret = [UInt8](repeating: 0x61, count: count)
        return large
    }

    /// `bytes` with `range` (file offsets) set to zero.
    static func zeroed(_ bytes: [UInt8], _ range: Range<Int>) -> [UInt8] {
        var out = bytes
        out.replaceSubrange(range, with: [UInt8](repeating: 0, count: range.count))
        return out
    }

    static func zeroFill() throws -> [TestVector] {
        let sector = RecordFrame.sectorSize
        func up(_ offset: Int) -> Int { (offset + sector - 1) / sector * sector }
        let std = try standard()
        let end = std.bytes.count
        let items = [githubUpdated, ftp]
        func torn(_ name: String, _ comment: String, _ bytes: [UInt8]) -> TestVector {
            TestVector(name: name, comment: comment, expect: .truncated, records: 5, items: items,
                       warning: "torn-tail offset=\(end) length=\(bytes.count - end)", bytes: bytes)
        }
        // valid-items + a sixth record of 5.5 KiB (11 sectors), and a seventh after it.
        var large = std
        large.append(put(withSecret(old, 5500), counter: 6))
        var more = large
        more.append(put(github, counter: 7, base: 1))
        let middle = up(end + RecordFrame.length) + 2 * sector          // a whole sector inside the sixth record's body
        // valid-items + a sixth record ending 10 bytes past a sector boundary (its secret sized to that end).
        func sixth(_ secret: Int) -> VectorVault {
            var v = std
            v.append(put(withSecret(old, secret), counter: 6))
            return v
        }
        let short = sixth(1000 + ((10 - sixth(1000).bytes.count % sector) + sector) % sector)
        // An append of three records of 1 KiB after one put; zero fill from the first sector boundary
        // inside the second one's body to the end of the file.
        var batch = try VectorVault(label: "batch-zero-filled")
        batch.append(put(github, counter: 1))
        for (index, item) in [ftp, githubUpdated, old].enumerated() {
            batch.append(batched(put(withSecret(item, 1000), counter: UInt64(index + 2), base: item.id == github.id ? 1 : 0),
                                 remaining: UInt32(2 - index)))
        }
        let batchStart = batch.offset(ofRecord: 1)
        let batchGap = up(batch.offset(ofRecord: 2) + 2 * RecordFrame.length)     // a whole sector inside the second's body
        let thirdZero = up(batch.offset(ofRecord: 3) + 2 * RecordFrame.length)    // from inside the third's body to the end
        // valid-items + a sixth record ending 8 bytes before a sector boundary, then a large seventh
        // whose frame that boundary cuts: the sector after it lost, the later ones written.
        let straddle = sixth(1000 + ((sector - 8 - sixth(1000).bytes.count % sector) + sector) % sector)
        var seventh = straddle
        seventh.append(put(withSecret(github, 3000), counter: 7, base: 1))
        let straddleEnd = straddle.bytes.count
        let batchZero = up(batch.offset(ofRecord: 2) + 2 * RecordFrame.length)
        return [
            torn("truncated-zero-filled-frame",
                 "valid-items + a sixth record of 5.5 KiB whose bytes from its frame to file offset \(up(end)) (the next sector boundary) are zero, the rest written: its frame fails its checksum because zero fill reached it, and no frame follows, so a torn tail",
                 zeroed(large.bytes, end..<up(end))),
            TestVector(name: "record-zero-filled-sector-then-record",
                       comment: "valid-items + a sixth record of 5.5 KiB whose sector at file offset \(middle) is zero + a seventh record that authenticates: a readable record follows, so the zero sector is damage (the sixth record fails authentication), not a torn tail",
                       expect: .recordFailure, error: "record-authentication-failed offset=\(end)",
                       bytes: zeroed(more.bytes, middle..<(middle + sector))),
            TestVector(name: "record-zero-fill-under-16-bytes",
                       comment: "valid-items + a sixth record whose last 10 bytes, from file offset \(short.bytes.count - 10) (a sector boundary) to the end, are zero: fewer zero bytes than a tag show no zero fill, so damage (it fails authentication), not a torn tail",
                       expect: .recordFailure, error: "record-authentication-failed offset=\(end)",
                       bytes: zeroed(short.bytes, (short.bytes.count - 10)..<short.bytes.count)),
            TestVector(name: "truncated-zero-filled-batch-gap",
                       comment: "the append of truncated-zero-filled-batch whose sector at file offset \(batchGap) (inside the second record's body) is zero, its tag written, and whose bytes from file offset \(thirdZero) (inside the third's body) to the end are zero: the second fails authentication and the third, whose frame checks, holds a lost sector too, so nothing readable follows: a torn tail from the batch's first record",
                       expect: .truncated, records: 1, items: [github],
                       warning: "torn-tail offset=\(batchStart) length=\(batch.bytes.count - batchStart)",
                       bytes: zeroed(zeroed(batch.bytes, batchGap..<(batchGap + sector)), thirdZero..<batch.bytes.count)),
            TestVector(name: "truncated-zero-filled-frame-end",
                       comment: "valid-items + a sixth record ending at file offset \(straddleEnd), 8 bytes before a sector boundary, + a seventh record of 3 KiB whose sector from \(up(straddleEnd)) is zero, the later ones written: the seventh's frame (its first 8 bytes written) fails its checksum because zero fill reached it, and no frame follows, so a torn tail",
                       expect: .truncated, records: 6, items: items,
                       warning: "torn-tail offset=\(straddleEnd) length=\(seventh.bytes.count - straddleEnd)",
                       bytes: zeroed(seventh.bytes, up(straddleEnd)..<(up(straddleEnd) + sector))),
            TestVector(name: "truncated-zero-filled-batch",
                       comment: "a put, then an append of three records of 1 KiB (batch fields 2, 1, 0) whose bytes from file offset \(batchZero) (a sector boundary inside the second one's body) to the end are zero: the second fails authentication, nothing readable follows, so a torn tail from the batch's first record",
                       expect: .truncated, records: 1, items: [github],
                       warning: "torn-tail offset=\(batchStart) length=\(batch.bytes.count - batchStart)",
                       bytes: zeroed(batch.bytes, batchZero..<batch.bytes.count)),
        ]
    }
}
