import KCCrypto

/// An item edited concurrently on two machines (Docs/SYNC.md, rule 5), as `kc conflicts` shows it:
/// the version that won and the others, each with the device that wrote it, when, and the item it
/// stores (nil for a deletion; its secret empty unless revealed).
public struct ItemConflict: Sendable {
    public struct Version: Sendable {
        public let device: [UInt8]
        /// Milliseconds since 1970 (the record's timestamp).
        public let written: Int64
        public let item: Item?

        public init(device: [UInt8], written: Int64, item: Item?) {
            self.device = device
            self.written = written
            self.item = item
        }
    }

    public let itemID: [UInt8]
    public let winner: Version
    public let others: [Version]

    public init(itemID: [UInt8], winner: Version, others: [Version]) {
        self.itemID = itemID
        self.winner = winner
        self.others = others
    }

    /// True when a version has the require-password mark (revealing its secret asks again).
    public var asksAgain: Bool { ([winner] + others).contains { $0.item?.attributes.requirePassword == true } }
}
