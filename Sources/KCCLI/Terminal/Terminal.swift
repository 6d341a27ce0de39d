#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCSystem
import KCKeychain

/// The controlling terminal (`/dev/tty`), for prompts: secrets without echo, lines, yes/no.
///
/// Reads byte by byte in non-canonical mode with signals off, so Ctrl-C and Ctrl-D act at once
/// and cancel (errSecUserCanceled). Backspace, Ctrl-U (line) and Ctrl-W (word) erase; other
/// control characters (Ctrl-Z included) are ignored, never stored. An answer longer than
/// `maximumLength` is refused, not cut. The terminal settings are restored after every prompt,
/// also when a signal ends or stops the process (and set again when it continues). Prompts go to
/// the terminal, never to standard output, and each prompt is the last thing written before reading.
public final class Terminal {
    private let descriptor: FileDescriptor
    private let ownsDescriptor: Bool

    /// Longest answer accepted at a prompt.
    public static let maximumLength = 4096

    private init(descriptor: FileDescriptor, owned: Bool) {
        self.descriptor = descriptor
        self.ownsDescriptor = owned
    }

    /// A terminal the caller already holds open (e.g. standard input); never closed here.
    convenience init(borrowing descriptor: FileDescriptor) { self.init(descriptor: descriptor, owned: false) }

    deinit { if ownsDescriptor { descriptor.close() } }

    /// Opens the controlling terminal; errSecInteractionNotAllowed when there is none.
    /// `hint` says what to do instead (e.g. which non-interactive source to use).
    public static func open(hint: String? = nil) throws(CLIError) -> Terminal {
        let descriptor: FileDescriptor
        do throws(Errno) { descriptor = try FileDescriptor.open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC) } catch {
            throw CLIError(.interactionNotAllowed, "a prompt is needed but there is no terminal", hint: hint)
        }
        guard descriptor.isTerminal else {
            descriptor.close()
            throw CLIError(.interactionNotAllowed, "a prompt is needed but /dev/tty is not a terminal", hint: hint)
        }
        return Terminal(descriptor: descriptor, owned: true)
    }

    /// Writes text to the terminal.
    public func write(_ text: String) {
        do throws(Errno) { try descriptor.write(text) } catch {}
    }

    /// Asks for a secret without echo. An empty answer, Ctrl-C or Ctrl-D is errSecUserCanceled.
    public func readSecret(prompt: String) throws(CLIError) -> SecureBytes {
        let buffer = SecureBytes(count: Self.maximumLength)
        let count = try readAnswer(prompt: prompt, echo: false, into: buffer)
        guard count > 0 else { throw CLIError(.userCanceled, "canceled: empty answer") }
        return buffer.slice(0..<count)
    }

    /// Asks for a line with echo. Enter alone gives `default` (or ""); Ctrl-C or Ctrl-D cancels,
    /// and Esc alone too when `escapeCancels` (an arrow key's escape sequence is ignored).
    /// The caller writes the default into the prompt itself, e.g. "User name [deploy]: ".
    public func readLine(prompt: String, default defaultValue: String? = nil, escapeCancels: Bool = false) throws(CLIError) -> String {
        let buffer = SecureBytes(count: Self.maximumLength)
        let count = try readAnswer(prompt: prompt, echo: true, escapeCancels: escapeCancels, into: buffer)
        if count == 0 { return defaultValue ?? "" }
        return buffer.withUnsafeBytes { String(decoding: $0[0..<count], as: UTF8.self) }
    }

    /// Asks a yes/no question; only "y" or "yes" (any case) is yes. Ctrl-C or Ctrl-D cancels.
    public func confirm(prompt: String) throws(CLIError) -> Bool {
        let answer = try readLine(prompt: prompt).lowercased()
        return answer == "y" || answer == "yes"
    }

    // MARK: - Reading

    /// Reads one answer into `buffer`; returns its length. Restores the terminal in every case.
    private func readAnswer(prompt: String, echo: Bool, escapeCancels: Bool = false, into buffer: SecureBytes) throws(CLIError) -> Int {
        var failure: CLIError?
        let count = buffer.withUnsafeMutableBytes { raw -> Int in
            do throws(CLIError) { return try readAnswer(prompt: prompt, echo: echo, escapeCancels: escapeCancels, into: raw) } catch {
                failure = error
                return 0
            }
        }
        if let failure { throw failure }
        return count
    }

    private func readAnswer(prompt: String, echo: Bool, escapeCancels: Bool,
                            into raw: UnsafeMutableRawBufferPointer) throws(CLIError) -> Int {
        let fd = descriptor.rawValue
        var saved = termios()
        guard tcgetattr(fd, &saved) == 0 else {
            throw CLIError(.interactionNotAllowed, "cannot read the terminal's settings: \(Errno.current)")
        }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO | ECHOE | ECHOK | ECHONL | ICANON | ISIG | IEXTEN)
        withUnsafeMutableBytes(of: &quiet.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        TerminalRestorer.install(fd: fd, saved: saved, quiet: quiet)
        _ = tcsetattr(fd, TCSAFLUSH, &quiet)
        defer {
            _ = tcsetattr(fd, TCSAFLUSH, &saved)
            TerminalRestorer.uninstall()
            write("\n")   // Enter was not echoed
        }
        write(prompt)
        let bytes = raw.bindMemory(to: UInt8.self)
        var count = 0
        var tooLong = false
        var byte: UInt8 = 0
        while true {
            let result = withUnsafeMutableBytes(of: &byte) { raw in Result { () throws(Errno) in try descriptor.read(into: raw) } }
            let n: Int
            switch result {
            case .success(let count): n = count
            case .failure(let error): throw CLIError(.io, "cannot read the terminal: \(error)")
            }
            if n == 0 { throw CLIError(.userCanceled, "canceled: end of input at the prompt") }
            switch byte {
            case 0x03: throw CLIError(.userCanceled, "canceled with Ctrl-C")
            case 0x04:
                if count == 0 { throw CLIError(.userCanceled, "canceled with Ctrl-D") }
                byte = 0
                return count
            case 0x0A, 0x0D:
                byte = 0
                if tooLong {
                    for i in 0..<count { bytes[i] = 0 }
                    throw CLIError(.param, "the answer is longer than \(Self.maximumLength) bytes; nothing was kept")
                }
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
            case 0x17:   // Ctrl-W: erase the word before the cursor (and the spaces after it)
                var erased = 0
                while count > 0 && bytes[count - 1] == 0x20 { count -= 1; bytes[count] = 0; erased += 1 }
                while count > 0 && bytes[count - 1] != 0x20 { count -= 1; bytes[count] = 0; erased += 1 }
                if echo { write(String(repeating: "\u{8} \u{8}", count: erased)) }
            case 0x1B where escapeCancels:
                if !skipEscapeSequence() { throw CLIError(.userCanceled, "canceled with Esc") }
            case 0..<0x20:
                continue   // other control characters (Ctrl-Z, Esc, ...) are not part of an answer
            default:
                guard count < bytes.count else { tooLong = true; continue }
                bytes[count] = byte
                count += 1
                if echo { try? descriptor.write(all: [byte]) }
            }
        }
    }
}

extension Terminal {
    /// After an Esc: reads the rest of an escape sequence (an arrow key's `ESC [ A`) when one
    /// follows at once, and returns true; false for an Esc alone.
    fileprivate func skipEscapeSequence() -> Bool {
        func next(within milliseconds: Int32) -> UInt8? {
            var poller = pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, milliseconds) == 1 else { return nil }
            var byte: UInt8 = 0
            let n = withUnsafeMutableBytes(of: &byte) { raw in (try? descriptor.read(into: raw)) ?? 0 }
            return n == 1 ? byte : nil
        }
        guard let introducer = next(within: 30) else { return false }
        guard introducer == UInt8(ascii: "[") || introducer == UInt8(ascii: "O") else { return true }
        while let byte = next(within: 30), !(0x40...0x7E).contains(byte) {}
        return true
    }
}

/// Restores the terminal when a signal ends or stops the process during a prompt, and sets the
/// prompt's settings again when a stopped process continues.
private enum TerminalRestorer {
    nonisolated(unsafe) static var fd: Int32 = -1
    nonisolated(unsafe) static var saved = termios()
    nonisolated(unsafe) static var quiet = termios()
    /// Signals whose default action ends the process (a Swift trap is SIGILL or SIGTRAP).
    static let ending: [Int32] = [SIGTERM, SIGHUP, SIGQUIT, SIGINT, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2,
                                  SIGABRT, SIGILL, SIGTRAP, SIGBUS, SIGFPE, SIGSEGV]
    /// Signals whose default action stops it.
    static let stopping: [Int32] = [SIGTSTP, SIGTTIN, SIGTTOU]

    /// The handlers in place before the prompt (the Swift runtime's crash handlers, say).
    nonisolated(unsafe) static var previous: [Int32: __sighandler_t?] = [:]

    static func install(fd: Int32, saved: termios, quiet: termios) {
        Self.saved = saved
        Self.quiet = quiet
        Self.fd = fd
        for signalNumber in ending { catchUnlessIgnored(signalNumber, restoreAndReraise) }
        for signalNumber in stopping { catchUnlessIgnored(signalNumber, restoreAndStop) }
    }

    /// Installs `handler`, unless the signal is ignored (`nohup`, say): it stays ignored.
    private static func catchUnlessIgnored(_ signalNumber: Int32, _ handler: __sighandler_t) {
        let before = signal(signalNumber, handler)
        if unsafeBitCast(before, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) {
            signal(signalNumber, before)
        } else {
            previous[signalNumber] = before
        }
    }

    static func uninstall() {
        for (signalNumber, handler) in previous { signal(signalNumber, handler) }
        previous = [:]
        fd = -1
    }
}

/// Signal handler: only async-signal-safe calls (tcsetattr, signal, raise).
private func restoreAndReraise(_ signalNumber: Int32) {
    if TerminalRestorer.fd >= 0 { _ = tcsetattr(TerminalRestorer.fd, TCSANOW, &TerminalRestorer.saved) }
    signal(signalNumber, SIG_DFL)
    raise(signalNumber)
}

/// Signal handler for a stop: restore the terminal, stop (the signal is unblocked so that it acts
/// inside the handler), and once continued, catch it again and set the prompt's settings again.
/// Only async-signal-safe calls (tcsetattr, signal, raise, sigprocmask).
private func restoreAndStop(_ signalNumber: Int32) {
    let fd = TerminalRestorer.fd
    if fd >= 0 { _ = tcsetattr(fd, TCSANOW, &TerminalRestorer.saved) }
    signal(signalNumber, SIG_DFL)
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, signalNumber)
    raise(signalNumber)
    sigprocmask(SIG_UNBLOCK, &set, nil)   // the stop happens here
    signal(signalNumber, restoreAndStop)
    if fd >= 0 { _ = tcsetattr(fd, TCSANOW, &TerminalRestorer.quiet) }
}
