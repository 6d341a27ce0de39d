import KCSync
import KCVault

/// What `kc sync status` tells of the live vault against the remote's copy: the records not yet
/// sent and not yet received, and every device that wrote to either, with the highest record
/// counter seen of it (its frontier) and its newest name (the live vault's over the remote's).
public struct SyncComparison: Sendable {
    public struct Device: Sendable {
        public let id: [UInt8]
        public let name: String?
        public let frontier: UInt64
    }

    public let notYetSent: Int
    public let notYetReceived: Int
    /// Sorted by device id.
    public let devices: [Device]

    public init(live: CopySummary, remote: CopySummary) {
        let liveIDs = Set(live.items.keys), remoteIDs = Set(remote.items.keys)
        notYetSent = liveIDs.subtracting(remoteIDs).count
        notYetReceived = remoteIDs.subtracting(liveIDs).count
        let names = remote.names.merging(live.names) { _, here in here }
        devices = live.vector.joined(with: remote.vector).counters.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map {
            Device(id: $0.key, name: names[$0.key], frontier: $0.value)
        }
    }
}

extension KeychainSession {
    /// The live vault against `upstream`, the remote's copy as last fetched (nil: none yet).
    public func comparison(with upstream: [UInt8]?) throws -> SyncComparison {
        SyncComparison(live: try liveSummary(), remote: try upstream.map(summary(of:)) ?? CopySummary(records: []))
    }
}
