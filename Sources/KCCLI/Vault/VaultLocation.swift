#if canImport(Glibc)
import Glibc
#endif
import KCSystem
import KCKeychain

/// Where vaults, named keychains, the default keychain's name and the state folder live, from
/// the environment (XDG base directories).
public enum VaultLocation {
    /// The keychain used when none is named and no default is set.
    public static let fallbackName = "login"

    /// The vault: `--vault PATH`, else `--keychain NAME`, else `KC_VAULT`, else the default set
    /// by `kc keychain default`, else `login`; a name stands for `$XDG_DATA_HOME/kc/NAME.kc`.
    public static func resolve(vault: String?, keychain: String?, environment: [String: String]) throws(CLIError) -> String {
        if let vault { return vault }
        if let keychain { return try path(ofKeychain: keychain, environment) }
        if let path = variable("KC_VAULT", in: environment) { return path }
        return try path(ofKeychain: defaultName(environment), environment)
    }

    /// The folder of the named keychains: `$XDG_DATA_HOME/kc`, else `HOME/.local/share/kc`.
    public static func keychainFolder(_ environment: [String: String]) -> String {
        baseDirectory("XDG_DATA_HOME", default: ".local/share", environment) + "/kc"
    }

    /// `FOLDER/NAME.kc` for a valid name.
    public static func path(ofKeychain name: String, _ environment: [String: String]) throws(CLIError) -> String {
        try KeychainName.check(name)
        return keychainFolder(environment) + "/" + name + ".kc"
    }

    /// The names of the keychains in the folder (files `NAME.kc` with a valid name), sorted.
    public static func keychainNames(_ environment: [String: String]) -> [String] {
        FileSystem.names(in: keychainFolder(environment)).compactMap { file -> String? in
            guard file.hasSuffix(".kc") else { return nil }
            let name = String(file.dropLast(3))
            return KeychainName.problem(name) == nil ? name : nil
        }.sorted()
    }

    /// Where `kc keychain default` keeps the default's name: `$XDG_CONFIG_HOME/kc/default-keychain`,
    /// else `HOME/.config/kc/default-keychain`.
    public static func defaultFile(_ environment: [String: String]) -> String {
        baseDirectory("XDG_CONFIG_HOME", default: ".config", environment) + "/kc/default-keychain"
    }

    /// The default keychain's name: the one `kc keychain default` set, else `login`.
    public static func defaultName(_ environment: [String: String]) throws(CLIError) -> String {
        let file = defaultFile(environment)
        let descriptor: FileDescriptor
        do { descriptor = try FileDescriptor.open(file, O_RDONLY | O_NOFOLLOW) } catch {
            if error == .noSuchFile { return fallbackName }
            throw CLIError(.io, "cannot open \(file): \(error)")
        }
        defer { descriptor.close() }
        let bytes: [UInt8]
        do { bytes = try descriptor.readAll(limit: 4096) } catch { throw CLIError(.io, "cannot read \(file): \(error)") }
        var name = String(decoding: bytes, as: UTF8.self)
        if name.hasSuffix("\n") { name.removeLast() }
        if let problem = KeychainName.problem(name) {
            throw CLIError(.param, "\(file) does not hold a keychain name: \(problem)",
                                hint: "set the default again with 'kc keychain default NAME'")
        }
        return name
    }

    /// The state folder: `$XDG_STATE_HOME/kc`, else `HOME/.local/state/kc`.
    public static func stateFolder(environment: [String: String]) -> String {
        baseDirectory("XDG_STATE_HOME", default: ".local/state", environment) + "/kc"
    }

    /// An XDG base directory: the variable when it holds an absolute path (the specification
    /// says to ignore a relative one), else `HOME/fallback`.
    static func baseDirectory(_ name: String, default fallback: String, _ environment: [String: String]) -> String {
        if let value = variable(name, in: environment), value.hasPrefix("/") { return value }
        return homeDirectory(environment) + "/" + fallback
    }

    /// The home folder: `HOME` when it is an absolute path, else the user's passwd entry (cron,
    /// `env -i` and some service managers start kc without `HOME`).
    static func homeDirectory(_ environment: [String: String]) -> String {
        if let home = variable("HOME", in: environment), home.hasPrefix("/") { return home }
        if let entry = getpwuid(getuid()), let dir = entry.pointee.pw_dir { return String(cString: dir) }
        return "/"
    }

    /// A non-empty environment variable.
    static func variable(_ name: String, in environment: [String: String]) -> String? {
        guard let value = environment[name], !value.isEmpty else { return nil }
        return value
    }
}

/// The rules for a keychain's name: it becomes the file name `NAME.kc` in the keychain folder.
public enum KeychainName {
    /// The longest name, in bytes of UTF-8 (file names hold 255; room is left for `.kc` and the
    /// `.deleted-DATE` suffix a deleted keychain gets).
    public static let maximumLength = 200

    /// Why `name` is not a keychain name, or nil when it is one.
    public static func problem(_ name: String) -> String? {
        if name.isEmpty { return "it is empty" }
        if name.utf8.count > maximumLength { return "it is longer than \(maximumLength) bytes" }
        if name.contains("/") { return "it contains '/'" }
        if name.hasPrefix(".") { return "it starts with '.'" }
        if name.hasPrefix("-") { return "it starts with '-'" }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format }) {
            return "it contains a control character"
        }
        return nil
    }

    /// Throws errSecParam when `name` is not a keychain name.
    public static func check(_ name: String) throws(CLIError) {
        guard let problem = problem(name) else { return }
        throw CLIError(.param, "'\(Printable.text(name))' is not a keychain name: \(problem)",
                            hint: "a name is up to \(maximumLength) bytes, without '/' or control characters, "
                                + "and does not start with '.' or '-'")
    }
}
