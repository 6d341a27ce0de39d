#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCSystem
import Keychain

/// The controlling terminal (`/dev/tty`), for prompts: secrets without echo, lines, yes/no.
///
/// Reads byte by byte in non-canonical mode with signals off, so Ctrl-C and Ctrl-D act at once
/// and cancel (errSecUserCanceled); the terminal settings are restored after every prompt, also
/// when a signal ends the process. Prompts go to the terminal, never to standard output, and
/// each prompt is the last thing written before reading.
public final class Terminal {
    private let descriptor: FileDescriptor

    /// Longest answer accepted at a prompt.
    public static let maximumLength = 4096

    private init(descriptor: FileDescriptor) { self.descriptor = descriptor }

    deinit { descriptor.close() }

    /// Opens the controlling terminal; errSecInteractionNotAllowed when there is none.
    /// `hint` says what to do instead (e.g. which non-interactive source to use).
    public static func open(hint: String? = nil) throws(KeychainError) -> Terminal {
        let fd = Glibc.open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else {
            throw KeychainError(.interactionNotAllowed, "a prompt is needed but there is no terminal", hint: hint)
        }
        guard isatty(fd) == 1 else {
            _ = Glibc.close(fd)
            throw KeychainError(.interactionNotAllowed, "a prompt is needed but /dev/tty is not a terminal", hint: hint)
        }
        return Terminal(descriptor: FileDescriptor(rawValue: fd))
    }

    /// Writes text to the terminal.
    public func write(_ text: String) {
        do throws(Errno) { try descriptor.write(text) } catch {}
    }

    /// Asks for a secret without echo. An empty answer, Ctrl-C or Ctrl-D is errSecUserCanceled.
    public func readSecret(prompt: String) throws(KeychainError) -> SecureBytes {
        let buffer = SecureBytes(count: Self.maximumLength)
        let count = try readAnswer(prompt: prompt, echo: false, into: buffer)
        guard count > 0 else { throw KeychainError(.userCanceled, "canceled: empty answer") }
        return buffer.slice(0..<count)
    }

    /// Asks for a line with echo. Enter alone gives `default` (or ""); Ctrl-C or Ctrl-D cancels.
    /// The caller writes the default into the prompt itself, e.g. "User name [deploy]: ".
    public func readLine(prompt: String, default defaultValue: String? = nil) throws(KeychainError) -> String {
        let buffer = SecureBytes(count: Self.maximumLength)
        let count = try readAnswer(prompt: prompt, echo: true, into: buffer)
        if count == 0 { return defaultValue ?? "" }
        return buffer.withUnsafeBytes { String(decoding: $0[0..<count], as: UTF8.self) }
    }

    /// Asks a yes/no question; only "y" or "yes" (any case) is yes. Ctrl-C or Ctrl-D cancels.
    public func confirm(prompt: String) throws(KeychainError) -> Bool {
        let answer = try readLine(prompt: prompt).lowercased()
        return answer == "y" || answer == "yes"
    }

    // MARK: - Reading

    /// Reads one answer into `buffer`; returns its length. Restores the terminal in every case.
    private func readAnswer(prompt: String, echo: Bool, into buffer: SecureBytes) throws(KeychainError) -> Int {
        var failure: KeychainError?
        let count = buffer.withUnsafeMutableBytes { raw -> Int in
            do throws(KeychainError) { return try readAnswer(prompt: prompt, echo: echo, into: raw) } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
        return count
    }

    private func readAnswer(prompt: String, echo: Bool, into raw: UnsafeMutableRawBufferPointer) throws(KeychainError) -> Int {
        let fd = descriptor.rawValue
        var saved = termios()
        guard tcgetattr(fd, &saved) == 0 else {
            throw KeychainError(.interactionNotAllowed, "cannot read the terminal's settings: \(Errno.current)")
        }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO | ECHOE | ECHOK | ECHONL | ICANON | ISIG | IEXTEN)
        withUnsafeMutableBytes(of: &quiet.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        TerminalRestorer.install(fd: fd, settings: saved)
        _ = tcsetattr(fd, TCSAFLUSH, &quiet)
        defer {
            _ = tcsetattr(fd, TCSAFLUSH, &saved)
            TerminalRestorer.uninstall()
            write("\n")   // Enter was not echoed
        }
        write(prompt)
        let bytes = raw.bindMemory(to: UInt8.self)
        var count = 0
        var byte: UInt8 = 0
        while true {
            let n = Glibc.read(fd, &byte, 1)
            if n < 0 {
                if errno == EINTR { continue }
                throw KeychainError(.io, "cannot read the terminal: \(Errno.current)")
            }
            if n == 0 { throw KeychainError(.userCanceled, "canceled: end of input at the prompt") }
            switch byte {
            case 0x03: throw KeychainError(.userCanceled, "canceled with Ctrl-C")
            case 0x04:
                if count == 0 { throw KeychainError(.userCanceled, "canceled with Ctrl-D") }
                byte = 0
                return count
            case 0x0A, 0x0D:
                byte = 0
                return count
            case 0x7F, 0x08:
                if count > 0 {
                    count -= 1
                    bytes[count] = 0
                    if echo { write("\u{8} \u{8}") }
                }
            case 0x15:   // Ctrl-U: erase the line
                if echo { write(String(repeating: "\u{8} \u{8}", count: count)) }
                for i in 0..<count { bytes[i] = 0 }
                count = 0
            default:
                guard count < bytes.count else { continue }
                bytes[count] = byte
                count += 1
                if echo { _ = Glibc.write(fd, &byte, 1) }
            }
        }
    }
}

/// Restores the terminal when a signal ends the process during a prompt.
private enum TerminalRestorer {
    nonisolated(unsafe) static var fd: Int32 = -1
    nonisolated(unsafe) static var settings = termios()
    static let signals: [Int32] = [SIGTERM, SIGHUP, SIGQUIT, SIGINT]

    static func install(fd: Int32, settings: termios) {
        Self.settings = settings
        Self.fd = fd
        for signalNumber in signals { signal(signalNumber, restoreAndReraise) }
    }

    static func uninstall() {
        for signalNumber in signals { signal(signalNumber, SIG_DFL) }
        fd = -1
    }
}

/// Signal handler: only async-signal-safe calls (tcsetattr, signal, raise).
private func restoreAndReraise(_ signalNumber: Int32) {
    if TerminalRestorer.fd >= 0 { _ = tcsetattr(TerminalRestorer.fd, TCSANOW, &TerminalRestorer.settings) }
    signal(signalNumber, SIG_DFL)
    raise(signalNumber)
}
