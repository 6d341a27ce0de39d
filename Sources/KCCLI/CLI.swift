import KCSystem
import Keychain

/// The command-line interface: parse, run the command, report failures, return the exit status.
public enum CLI {
    /// Runs kc with `arguments` (without the program name) and returns the exit status.
    public static func run(_ arguments: [String],
                           environment: [String: String] = Context.processEnvironment(),
                           output: OutputStream = .standardOutput(),
                           errors: OutputStream = .standardError()) -> Int32 {
        defer {
            output.flush()
            errors.flush()
        }
        let outcome: ParseOutcome
        do throws(KeychainError) {
            outcome = try CommandTable.parser.parse(arguments)
        } catch {
            report(error, to: errors)
            return error.status.exitCode
        }
        switch outcome {
        case .version:
            output.writeLine("kc \(KCVersion.current)")
            return 0
        case .help(let words, _):
            do throws(KeychainError) {
                output.write(try HelpFormatter.help(for: words, in: CommandTable.parser))
                return 0
            } catch {
                report(error, to: errors)
                return error.status.exitCode
            }
        case .run(let invocation):
            let context = Context(globals: invocation.globals, environment: environment, output: output, errors: errors)
            do throws(KeychainError) {
                return try invocation.command.handler(invocation, context)
            } catch {
                output.flush()
                report(error, to: errors)
                return error.status.exitCode
            }
        }
    }

    /// `kc: error: DETAIL (errSecName)` and, when there is one, `kc: hint: HINT`.
    public static func report(_ error: KeychainError, to errors: OutputStream) {
        errors.writeLine("kc: error: \(oneLine(error.detail)) (\(error.status.name))")
        if let hint = error.hint { errors.writeLine("kc: hint: \(oneLine(hint))") }
    }

    private static func oneLine(_ text: String) -> String {
        Printable.text(text.split(separator: "\n", omittingEmptySubsequences: true).joined(separator: "; "))
    }
}
