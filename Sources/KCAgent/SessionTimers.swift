/// The two deadlines of an unlocked agent, on a clock that counts suspend (`BootClock`):
/// idle (pushed back by `touch`, i.e. by requests that reveal a secret or write) and absolute
/// (fixed at unlock). Pure, for tests with an injected clock.
struct SessionTimers: Equatable {
    var idleTimeout: Double
    var idleDeadline: Double
    var absoluteDeadline: Double

    init(now: Double, idleTimeout: Double, maxTTL: Double) {
        self.idleTimeout = idleTimeout
        idleDeadline = now + idleTimeout
        absoluteDeadline = now + maxTTL
    }

    /// True once either deadline has passed.
    func hasExpired(at now: Double) -> Bool { now >= idleDeadline || now >= absoluteDeadline }

    /// Pushes the idle deadline back (never past the absolute one's meaning: both are checked).
    mutating func touch(at now: Double) { idleDeadline = now + idleTimeout }

    /// The earlier deadline.
    var nextDeadline: Double { min(idleDeadline, absoluteDeadline) }

    func idleLeft(at now: Double) -> Double { max(0, min(idleDeadline, absoluteDeadline) - now) }
    func absoluteLeft(at now: Double) -> Double { max(0, absoluteDeadline - now) }
}
