import KCVault

/// The words for damage the tolerant walk found (`kc check`, `kc repair --salvage`).
enum ProblemWording {
    static func text(_ problem: VaultInspection.Problem) -> String {
        let at = "at offset \(problem.offset)"
        switch problem.kind {
        case .badFrame(let error):
            return FormatWording.text(error)
        case .unreadableToEnd(let bytes):
            return "the \(bytes) bytes \(at) up to the end of the file hold no readable record"
        case .authenticationFailed(let sequence):
            return "record \(sequence) \(at) failed authentication (damaged, tampered, moved or from another vault)"
        case .badPayload(let sequence, let error):
            return "record \(sequence) \(at): \(FormatWording.text(error))"
        case .leftOut(let sequence, let reason):
            return "record \(sequence) \(at) \(text(reason)): left out"
        case .missing(let records, let before):
            let what = records.lowerBound == records.upperBound ? "record \(records.lowerBound) is" : "records \(records.lowerBound) to \(records.upperBound) are"
            return "record \(before) \(at): \(what) missing before it (removed)"
        case .breaksBatch(let sequence, let batchOffset, let count):
            return "record \(sequence) \(at) breaks the batch of \(count) record(s) at offset \(batchOffset), which is dropped"
        case .incompleteBatch(let count):
            return "the batch of \(count) record(s) \(at) is incomplete and is dropped"
        }
    }

    private static func text(_ reason: VaultInspection.ReplayReason) -> String {
        switch reason {
        case .sequenceNotAfter(let last): return "does not come after record \(last) (a copy or a replay)"
        case .sameRecordID: return "repeats a record already read (a copy or a replay)"
        case .beforeCompaction: return "is older than the compaction before it (a replay)"
        }
    }
}
