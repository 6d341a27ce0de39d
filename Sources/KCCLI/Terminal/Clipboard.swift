import KCCrypto
import KCSystem
import KCKeychain

/// The desktop's clipboard, through the user's own program found on PATH: wl-copy (and wl-paste)
/// under Wayland, else xclip or xsel under X11. A secret reaches the program on its standard
/// input, never on its command line; the program's environment is the user's without kc's own
/// variables (`Context.childEnvironment`).
struct Clipboard {
    /// A clipboard program: how kc copies, reads back and clears with it, and its Debian package.
    struct Tool {
        let name: String
        let package: String
        let copy: [String]
        /// The program and arguments that print the clipboard's content.
        let paste: (name: String, arguments: [String])
        let clear: [String]
    }

    static let wlCopy = Tool(name: "wl-copy", package: "wl-clipboard", copy: [],
                             paste: ("wl-paste", ["--no-newline"]), clear: ["--clear"])
    /// xclip has no clear: it copies nothing (standard input is empty).
    static let xclip = Tool(name: "xclip", package: "xclip", copy: ["-selection", "clipboard", "-in"],
                            paste: ("xclip", ["-selection", "clipboard", "-out"]), clear: ["-selection", "clipboard", "-in"])
    static let xsel = Tool(name: "xsel", package: "xsel", copy: ["--clipboard", "--input"],
                           paste: ("xsel", ["--clipboard", "--output"]), clear: ["--clipboard", "--clear"])

    let tool: Tool
    /// Where the copying and the reading program are.
    let copyPath: String
    let pastePath: String
    /// The environment the clipboard programs run with.
    let environment: [String: String]

    /// The clipboard of the session `environment` describes (WAYLAND_DISPLAY, DISPLAY, PATH), its
    /// programs run with that environment (`Context.childEnvironment`). errSecInteractionNotAllowed
    /// when there is no display, or no clipboard program for it.
    static func find(environment: [String: String]) throws(CLIError) -> Clipboard {
        var candidates: [Tool] = []
        if VaultLocation.variable("WAYLAND_DISPLAY", in: environment) != nil { candidates.append(wlCopy) }
        if VaultLocation.variable("DISPLAY", in: environment) != nil { candidates += [xclip, xsel] }
        guard !candidates.isEmpty else {
            throw CLIError(.interactionNotAllowed, "there is no display to copy to (neither WAYLAND_DISPLAY nor DISPLAY is set)",
                                hint: "run kc in a graphical session, or leave out --clip to print the secret")
        }
        let searchPath = environment["PATH"] ?? "/usr/bin:/bin"
        for tool in candidates {
            if let copyPath = ChildProcess.find(tool.name, searchPath: searchPath),
               let pastePath = ChildProcess.find(tool.paste.name, searchPath: searchPath) {
                return Clipboard(tool: tool, copyPath: copyPath, pastePath: pastePath, environment: environment)
            }
        }
        let names = candidates.map { $0.paste.name == $0.name ? $0.name : "\($0.name) (with \($0.paste.name))" }
        let listed = names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " or " + names.last!
        throw missingProgram("--clip needs \(listed) on PATH, and none was found", packages: candidates.map(\.package))
    }

    /// Puts `secret` on the clipboard. errSecIO when the program cannot run or fails.
    func copy(_ secret: SecureBytes) throws(CLIError) {
        let outcome = try run(copyPath, tool.copy, input: secret)
        guard outcome.termination.succeeded else {
            throw CLIError(.io, "\(tool.name) could not copy to the clipboard (\(Self.describe(outcome.termination)))"
                                + (outcome.errors.isEmpty ? "" : ": \(outcome.errors)"),
                                hint: "check that the display in WAYLAND_DISPLAY or DISPLAY is running and reachable")
        }
    }

    /// What the clipboard holds, when it is at most `limit` bytes; nil when it is longer, empty of
    /// any text, or cannot be read (and for a `limit` of `Int.max`, which one byte more would overflow).
    func contents(upTo limit: Int) -> SecureBytes? {
        guard limit < Int.max, let outcome = try? run(pastePath, tool.paste.arguments, outputLimit: limit),
              outcome.termination.succeeded, let output = outcome.output, output.count <= limit else { return nil }
        return output
    }

    /// True once the clipboard holds `secret`, asked again every 20 ms for up to `seconds`: xclip
    /// and xsel claim the clipboard from the process they leave behind, a moment after the one kc
    /// waits for has ended.
    func holds(_ secret: SecureBytes, within seconds: Double) -> Bool {
        let deadline = BootClock.now() + seconds
        while true {
            if let held = contents(upTo: secret.count), held.isEqual(to: secret) { return true }
            if BootClock.now() >= deadline { return false }
            BootClock.sleep(seconds: 0.02)
        }
    }

    /// Empties the clipboard (best effort).
    func clear() {
        _ = try? run(copyPath, tool.clear, input: SecureBytes(count: 0))
    }

    /// How a clipboard program ended, its first line of error output, and what it printed (up to
    /// `outputLimit` bytes, in secure memory; none when it printed more) when asked for.
    private struct Outcome {
        var termination: ChildProcess.Termination
        var errors: String
        var output: SecureBytes?
    }

    /// Runs `path` with `arguments`, feeding it `input` (standard input is /dev/null without it).
    /// Only the first program's end is waited for: xclip, xsel and wl-copy leave a process behind
    /// that serves the clipboard and holds the error pipe open, so its output is read as it stands.
    private func run(_ path: String, _ arguments: [String], input: SecureBytes? = nil,
                     outputLimit: Int? = nil) throws(CLIError) -> Outcome {
        let name = String(path.split(separator: "/").last ?? Substring(path))
        do throws(Errno) {
            let errorPipe = try Processes.pipe()
            defer { errorPipe.read.close() }
            var inputPipe: (read: FileDescriptor, write: FileDescriptor)?, outputPipe: (read: FileDescriptor, write: FileDescriptor)?
            let child: ChildProcess
            do throws(Errno) {
                if input != nil { inputPipe = try Processes.pipe() }
                if outputLimit != nil { outputPipe = try Processes.pipe() }
                var descriptors: [Int32: FileDescriptor] = [2: errorPipe.write]
                descriptors[0] = inputPipe?.read
                descriptors[1] = outputPipe?.write
                child = try ChildProcess.spawn(path, arguments: [name] + arguments, environment: environment, descriptors: descriptors)
            } catch {
                for end in [inputPipe?.read, inputPipe?.write, outputPipe?.read, outputPipe?.write, errorPipe.write] { end?.close() }
                throw error
            }
            errorPipe.write.close()
            inputPipe?.read.close()
            outputPipe?.write.close()
            if let inputPipe, let input {
                // A program that ended before reading all of it is reported by its status below.
                input.withUnsafeBytes { bytes in try? inputPipe.write.write(toPipe: bytes) }
                inputPipe.write.close()
            }
            var output: SecureBytes?
            if let outputPipe, let outputLimit {
                output = try? SecretSource.readAll(outputPipe.read, what: "the clipboard", limit: outputLimit)
                outputPipe.read.close()
            }
            let termination = try child.wait()
            let errors = (try? errorPipe.read.readAvailable(upTo: 4096)) ?? []
            let firstLine = String(decoding: errors, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
            return Outcome(termination: termination, errors: Printable.text(firstLine), output: output)
        } catch {
            throw CLIError(.io, "cannot run \(path): \(error)")
        }
    }

    private static func describe(_ termination: ChildProcess.Termination) -> String {
        switch termination {
        case .exited(let status): return "exit status \(status)"
        case .signaled(let signal): return "ended by signal \(signal)"
        }
    }
}
