#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCSystem
import KCKeychain

// --clip and --clip-timeout of `find -w` and `generate`, and the hidden command that clears the
// clipboard afterwards.

/// The options that copy a secret instead of printing it.
let clipOptions: [OptionSpec] = [
    .flag(ClipOptions.clip, help: "Copy the secret to the clipboard instead of printing it (wl-copy, xclip or xsel); standard output stays empty."),
    .value(ClipOptions.timeout, valueName: "SECONDS",
           help: "With --clip: clear the clipboard after SECONDS if it still holds the secret (default \(ClipRequest.defaultTimeout); 0: never)."),
]

/// The rules of the clip options, for every command that has them.
let clipRules: [OptionRule] = [.requires("clip-timeout", anyOf: ["clip"])]

/// What the help of a command with --clip says about it.
let clipHelp = """
    --clip copies the secret to the clipboard instead of printing it: through wl-copy under Wayland \
    (WAYLAND_DISPLAY set), else xclip or xsel under X11 (DISPLAY set), found on PATH; the secret reaches \
    the program on its standard input. After --clip-timeout seconds (default \(ClipRequest.defaultTimeout), \
    at most \(ClipRequest.timeoutRange.upperBound); 0 never clears) a background kc empties the clipboard if \
    it still holds that secret, as 'pass -c' does; a later copy is left alone. Without a display: \
    errSecInteractionNotAllowed (exit 36); without any of those programs: errSecNotAvailable (exit 53), \
    with a hint naming the Debian package.
    """

/// --clip and --clip-timeout as given.
struct ClipOptions {
    static let clip = Option.flag("clip")
    static let timeout = Option.parsed("clip-timeout") { text throws(ParseError) in
        guard let value = Int(text), text.allSatisfy(\.isASCII), ClipRequest.timeoutRange.contains(value) else {
            throw ParseError("--clip-timeout must be a whole number of seconds from \(ClipRequest.timeoutRange.lowerBound) "
                             + "to \(ClipRequest.timeoutRange.upperBound), not '\(text)'")
        }
        return value
    }

    let clip: Bool
    let timeout: Int?

    init(_ values: OptionValues) {
        clip = values[Self.clip]
        timeout = values[Self.timeout]
    }
}

/// A checked --clip: the clipboard to copy to and when to clear it.
struct ClipRequest {
    static let defaultTimeout = 45
    static let timeoutRange = 0...86_400
    /// The hidden command the clearing process runs.
    static let clearerCommand = "__clear-clipboard"
    /// The descriptor on which the clearing process receives the secret's fingerprint.
    static let handoverDescriptor: Int32 = 3
    /// How long kc waits for the clipboard to show what it copied.
    static let confirmationWait = 5.0

    let clipboard: Clipboard
    let timeout: Int

    /// The request of `options`, or nil without --clip; its clipboard found before the vault is opened.
    static func parse(_ options: ClipOptions, _ context: Context) throws(CLIError) -> ClipRequest? {
        guard options.clip else { return nil }
        return ClipRequest(clipboard: try Clipboard.find(environment: context.childEnvironment), timeout: options.timeout ?? defaultTimeout)
    }

    /// Copies `secret` (`what`, in the notice) and arranges for it to be cleared. The clearing
    /// process starts first, so a secret is never copied without one; it gets the fingerprint only
    /// once the copy succeeded (a closed pipe without it makes it leave at once).
    func copy(_ secret: SecureBytes, what: String, _ context: Context) throws(CLIError) {
        var handover: FileDescriptor?
        if timeout > 0 {
            handover = try startClearer()
        }
        defer { handover?.close() }
        try clipboard.copy(secret)
        if !clipboard.holds(secret, within: Self.confirmationWait) {
            context.warn("\(clipboard.tool.paste.name) did not show the copied secret within \(Int(Self.confirmationWait)) s; "
                         + "another program may have taken the clipboard")
        }
        if let handover {
            let key = SecureBytes.random(count: Crypto.hashLength)
            var length = UInt64(secret.count).littleEndian
            let message = SecureBytes.concatenating([
                SecureBytes(copying: withUnsafeBytes(of: &length) { Array($0) }), key, Crypto.keyedHash(secret, key: key),
            ])
            message.withUnsafeBytes { bytes in try? handover.write(toPipe: bytes) }
        }
        context.notice("copied \(what) to the clipboard; " + (timeout > 0 ? "it will be cleared in \(timeout) s" : "it will not be cleared (--clip-timeout 0)"))
    }

    /// Starts `kc __clear-clipboard SECONDS` (kc's own executable, never one found on PATH) detached:
    /// its own session, standard descriptors on /dev/null (a `$(kc ...)` never waits for it).
    /// Returns the pipe to hand it the fingerprint.
    private func startClearer() throws(CLIError) -> FileDescriptor {
        do throws(Errno) {
            let pipe = try Processes.pipe()
            defer { pipe.read.close() }
            do throws(Errno) {
                _ = try Processes.spawnItselfDetached(arguments: [Self.clearerCommand, String(timeout)],
                                                     environment: clipboard.environment, passing: pipe.read, as: Self.handoverDescriptor)
            } catch {
                pipe.write.close()
                throw error
            }
            return pipe.write
        } catch {
            throw CLIError(.io, "cannot start the process that clears the clipboard: \(error); nothing was copied")
        }
    }
}

/// `kc __clear-clipboard SECONDS`: reads the length, key and keyed BLAKE2b hash of the copied
/// secret from descriptor 3, waits SECONDS, and empties the clipboard only if what it holds then
/// has that length and hash. It never holds the secret itself, only what the clipboard holds.
let clipboardClearerCommand = CommandSpec(
    ClipRequest.clearerCommand, abstract: "Clear the clipboard later if it still holds a secret (started by --clip).",
    arguments: [ArgumentSpec("SECONDS", help: "How long to wait.")], hidden: true,
    handler: { invocation, context throws(CLIError) in
        guard let seconds = Int(invocation.arguments[0]), ClipRequest.timeoutRange.contains(seconds) else { return 2 }
        let handover = FileDescriptor(rawValue: ClipRequest.handoverDescriptor)
        let message = try? SecretSource.readAll(handover, what: "the fingerprint", limit: 4096)
        handover.close()
        let hashLength = Crypto.hashLength
        guard let message, message.count == 8 + 2 * hashLength,
              let length = message.slice(0..<8).withUnsafeBytes({ Int(exactly: UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self))) })
        else { return 0 }
        let key = message.slice(8..<8 + hashLength), hash = message.slice(8 + hashLength..<8 + 2 * hashLength)
        BootClock.sleep(seconds: Double(seconds))
        guard let clipboard = try? Clipboard.find(environment: context.childEnvironment),
              let held = clipboard.contents(upTo: length), held.count == length,
              Crypto.keyedHash(held, key: key).isEqual(to: hash) else { return 0 }
        clipboard.clear()
        return 0
    })
