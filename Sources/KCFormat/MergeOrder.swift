/// The merge order of records (Docs/SYNC.md): hybrid-logical-clock timestamp, then device id
/// (bytewise), then counter. Total over distinct record ids. An item's state is its last record
/// in this order, wherever the records lie in the file.
extension RecordPayload {
    /// True when this record comes before `other` in the merge order.
    public func comesBefore(_ other: RecordPayload) -> Bool {
        if timestamp != other.timestamp { return timestamp < other.timestamp }
        if recordID.device != other.recordID.device { return recordID.device.lexicographicallyPrecedes(other.recordID.device) }
        return recordID.counter < other.recordID.counter
    }
}
