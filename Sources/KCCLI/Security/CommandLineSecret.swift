#if canImport(Glibc)
import Glibc
#endif
import KCCrypto

/// The password of `security add-generic-password ... -w PASSWORD` (and add-internet-password),
/// the one secret kc accepts on its command line, taken out of the process's argument memory
/// before anything else reads it: copied into locked memory and overwritten in place with `x`,
/// so /proc/PID/cmdline and ps no longer show it. Until then (from exec to this call) it is there.
public enum CommandLineSecret {
    /// What stands for the taken password in the arguments kc parses: a NUL, which no word of a
    /// real command line can hold.
    static let placeholder = "\0"

    /// kc's arguments, program name first, as strings, with the password replaced by `placeholder`,
    /// and the password itself when there was one.
    public static func take(argc: Int32, argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>)
        -> (arguments: [String], secret: SecureBytes?) {
        let words = (0..<Int(argc)).compactMap { argv[$0] }
        var secret: SecureBytes?
        var replaced: [Int: Int] = [:]   // word -> offset of the placeholder
        if let start = subcommandIndex(words), let subcommand = SecuritySubcommand.named(String(cString: words[start])),
           !subcommand.secretLetters.isEmpty {
            let options = Array(words[(start + 1)...])
            let scan = GetOpt.scan(subcommand.letters, count: options.count) { word, offset in
                UInt8(bitPattern: options[word][offset])
            }
            for option in scan.options where subcommand.secretLetters.contains(option.letter) {
                guard let location = option.value else { continue }
                let text = options[location.word] + location.offset
                let length = strlen(text)
                secret = SecureBytes(copying: UnsafeRawBufferPointer(start: text, count: length))
                memset(text, Int32(UInt8(ascii: "x")), length)
                replaced[start + 1 + location.word] = location.offset
            }
        }
        let arguments = words.enumerated().map { index, word in
            let text = String(cString: word)
            guard let offset = replaced[index] else { return text }
            return String(decoding: text.utf8.prefix(offset), as: UTF8.self) + placeholder
        }
        return (arguments, secret)
    }

    /// The index of the `security` subcommand's name: right after the program name when kc runs
    /// as `security`, else after `security` following kc's global options only.
    private static func subcommandIndex(_ words: [UnsafeMutablePointer<CChar>]) -> Int? {
        guard let program = words.first else { return nil }
        if CLI.programName(String(cString: program)) == SecuritySubcommand.programName { return words.count > 1 ? 1 : nil }
        var index = 1
        while index < words.count {
            let word = String(cString: words[index])
            if word == securityCommandName { return index + 1 < words.count ? index + 1 : nil }
            guard word.hasPrefix("-") else { return nil }
            if word.hasPrefix("--"), !word.contains("="), GlobalOptions.spec(long: String(word.dropFirst(2)))?.takesValue == true {
                index += 1
            }
            index += 1
        }
        return nil
    }
}
