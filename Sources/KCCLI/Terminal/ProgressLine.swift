import KCSystem
import KCVault

/// How far a command's long work has come (`kc: import: reading the vault 45%`), on standard
/// error only when it is a terminal: drawn in place after a carriage return, at most ten times a
/// second, and erased before anything else is written to either stream and when the work ends.
/// A pipe or a file never sees it.
public final class ProgressLine {
    private let title: String
    private let descriptor: FileDescriptor
    /// The characters of the line drawn last (0: nothing on the screen).
    private var drawnWidth = 0
    private var lastDraw = -Double.infinity
    private var lastStage = ""

    /// Redraws at most this often.
    static let interval = 0.1

    /// A progress line for `title` (a command's name), or nil when standard error is not a terminal.
    init?(title: String, errors: Output) {
        guard errors.isTerminal, let descriptor = errors.descriptor else { return nil }
        self.title = title
        self.descriptor = descriptor
    }

    /// Shows `done` of `total` of `stage`, unless the line was drawn less than `interval` ago for
    /// the same stage (a new stage shows at once).
    func show(_ stage: String, done: Int, total: Int) {
        let now = BootClock.now()
        guard now - lastDraw >= Self.interval || stage != lastStage else { return }
        lastDraw = now
        lastStage = stage
        let percent = total > 0 ? min(100, max(0, done) * 100 / total) : 0
        let text = "kc: \(title): \(stage) \(percent)%"
        let width = text.unicodeScalars.count
        draw("\r" + text + String(repeating: " ", count: max(0, drawnWidth - width)))
        drawnWidth = width
    }

    /// The vault's reports, in the words of this line.
    var vaultProgress: VaultProgress {
        { [weak self] work, done, total in
            switch work {
            case .readingRecords: self?.show("reading the vault", done: done, total: total)
            case .sealingRecords: self?.show("encrypting records", done: done, total: total)
            case .verifyingRecords: self?.show("verifying the new file", done: done, total: total)
            }
        }
    }

    /// Clears the line, leaving the cursor where it began; the next `show` draws at once.
    func erase() {
        guard drawnWidth > 0 else { return }
        draw("\r" + String(repeating: " ", count: drawnWidth) + "\r")
        drawnWidth = 0
        lastDraw = -Double.infinity
    }

    private func draw(_ text: String) {
        do throws(Errno) { try descriptor.write(text) } catch {}
    }
}
