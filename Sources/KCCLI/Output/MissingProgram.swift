import KCKeychain

/// A program or library kc runs that is not installed (gpg, git, a clipboard program, libcurl):
/// errSecNotAvailable whichever it is, with a hint naming the Debian packages that provide it
/// (`packages`, the first one preferred).
func missingProgram(_ message: String, packages: [String]) -> CLIError {
    CLIError(.notAvailable, message,
                  hint: "install \(packages.joined(separator: " or ")) (Debian: apt-get install \(packages[0]))")
}
