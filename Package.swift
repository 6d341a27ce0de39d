// swift-tools-version:6.0
import PackageDescription

/// Test-only fault seam: compiled into debug (test) builds, never into the release binary.
let faultSeam: [SwiftSetting] = [.define("KC_FAULT_SEAM", .when(configuration: .debug))]

/// Every target sees only the members of the modules it imports itself (no transitive leaks).
let strict: [SwiftSetting] = [.enableUpcomingFeature("MemberImportVisibility")]

let package = Package(
    name: "kc",
    products: [
        .executable(name: "kc", targets: ["kc"]),
    ],
    targets: [
        // System-library shims.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CSystemShim"),
        // zxcvbn's password-strength estimate (Debian's libzxcvbn-dev, no pkg-config file; at run
        // time libzxcvbn0, 53 relocations: nothing measurable at start-up).
        .systemLibrary(name: "CZxcvbn", providers: [.apt(["libzxcvbn-dev"])]),
        // libcurl, loaded with dlopen on first use (not linked: kc starts faster); builds against the
        // libcurl4-openssl-dev headers (`make deps`).
        // The one loader of libraries opened on first use (dlopen and dlsym, with a reason on failure).
        .target(name: "CLibraryLoader", linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "CCurl", dependencies: ["CLibraryLoader"], swiftSettings: strict),
        // OpenSSL's libcrypto (HMAC-SHA-1/2, SHA-1: what libsodium lacks), loaded with dlopen on first
        // use as libcurl is; builds against the libssl-dev headers (`make deps`).
        .target(name: "CLibCrypto", dependencies: ["CLibraryLoader"], swiftSettings: strict),

        // Layers, bottom up. Each imports only layers below it.
        .target(name: "KCSystem", dependencies: ["CSystemShim"], swiftSettings: strict + faultSeam),
        .target(name: "KCCrypto", dependencies: ["CSodium", "CLibCrypto"], swiftSettings: strict),
        .target(name: "KCFormat", swiftSettings: strict),
        // The EFF word list file, embedded into the binary as it is (C23 #embed).
        .target(name: "CWordList"),
        .target(name: "KCGenerator", dependencies: ["KCCrypto", "CWordList", "CZxcvbn"], swiftSettings: strict),
        .target(name: "KCVault", dependencies: ["KCSystem", "KCCrypto", "KCFormat"], swiftSettings: strict),
        .target(name: "KCKeychain", dependencies: ["KCVault", "KCCrypto", "KCFormat", "KCSystem"], swiftSettings: strict),
        .target(name: "KCSync", dependencies: ["KCVault", "KCCrypto", "KCFormat", "KCSystem"], swiftSettings: strict),
        .target(name: "KCFTP", dependencies: ["CCurl", "KCKeychain", "KCCrypto"], swiftSettings: strict),
        // The session layer: every request a front end makes of one vault (`KeychainSession`) and its
        // answer by the vault opened in this process (`LocalSession`), which the agent's server runs too.
        .target(name: "KCSession", dependencies: ["KCSync", "KCKeychain", "KCVault", "KCFormat", "KCCrypto", "KCSystem"],
                swiftSettings: strict),
        .target(name: "KCAgent", dependencies: ["KCSession", "KCSystem", "KCCrypto", "KCFormat", "KCVault", "KCKeychain", "KCSync", "KCExchange"],
                swiftSettings: strict + faultSeam),
        // The session a command gets: the vault's agent while it answers (`AgentSession`, the client's
        // side), then the vault opened here (`FallbackSession`, the one owner of that rule).
        .target(name: "KCCommandSession", dependencies: ["KCAgent", "KCSession", "KCSync", "KCKeychain", "KCVault", "KCFormat", "KCCrypto", "KCSystem"],
                swiftSettings: strict),
        // The importers: other managers' files (Bitwarden JSON, CSV exports), kc's own JSON and CSV,
        // and a pass store (each entry decrypted by the user's own gpg), read into items.
        .target(name: "KCExchange", dependencies: ["KCKeychain", "KCCrypto", "KCSystem", "KCFormat"], swiftSettings: strict),
        .target(name: "KCCLI", dependencies: ["KCCommandSession", "KCSession", "KCKeychain", "KCSync", "KCFTP", "KCAgent", "KCExchange", "KCVault", "KCCrypto", "KCSystem", "KCFormat", "KCGenerator"],
                swiftSettings: strict),
        // The Swift runtime and libstdc++ linked statically (Sources/kc/link/libstdc++.so points the
        // runtime's -lstdc++ at libstdc++.a): a kc process starts without relocating libstdc++.so.
        .executableTarget(name: "kc", dependencies: ["KCCLI", "KCSystem"], exclude: ["link"], swiftSettings: strict,
                          linkerSettings: [.unsafeFlags(["-static-stdlib", "-L\(Context.packageDirectory)/Sources/kc/link"])]),

        // Shared by the test targets: temporary folders and the fast test KDF.
        .target(name: "KCTestSupport", dependencies: ["KCFormat"], path: "Tests/KCTestSupport", swiftSettings: strict),
        .testTarget(name: "KCSystemTests", dependencies: ["KCSystem", "KCTestSupport"], swiftSettings: strict),
        .testTarget(name: "KCCryptoTests", dependencies: ["KCCrypto", "CSodium"], swiftSettings: strict),
        .testTarget(name: "KCGeneratorTests", dependencies: ["KCGenerator", "KCCrypto"], swiftSettings: strict),
        .testTarget(name: "KCFormatTests", dependencies: ["KCFormat", "KCCrypto"], swiftSettings: strict),
        .testTarget(name: "ConformanceTests", dependencies: ["KCFormat", "KCCrypto", "KCVault", "KCKeychain", "KCTestSupport"],
                    swiftSettings: strict),
        .testTarget(name: "KCVaultTests", dependencies: ["KCVault", "KCCrypto", "KCFormat", "KCSystem", "KCTestSupport"],
                    swiftSettings: strict),
        .testTarget(name: "KCKeychainTests", dependencies: ["KCKeychain", "KCVault", "KCCrypto", "KCFormat", "KCTestSupport"],
                    swiftSettings: strict),
        .testTarget(name: "KCExchangeTests", dependencies: ["KCExchange", "KCKeychain", "KCCrypto", "KCTestSupport"],
                    swiftSettings: strict),
        .testTarget(name: "KCSyncTests", dependencies: ["KCSync", "KCKeychain", "KCVault", "KCCrypto", "KCFormat", "KCSystem", "KCTestSupport"],
                    swiftSettings: strict),
        .testTarget(name: "KCFTPTests", dependencies: ["KCFTP", "CCurl", "KCKeychain", "KCCrypto", "KCFormat", "KCTestSupport"],
                    swiftSettings: strict),
        .testTarget(name: "KCAgentTests", dependencies: ["KCAgent", "KCSession", "KCSync", "KCKeychain", "KCVault", "KCCrypto", "KCFormat", "KCSystem", "KCTestSupport"],
                    swiftSettings: strict),
        .testTarget(name: "KCCommandSessionTests", dependencies: ["KCCommandSession", "KCSession", "KCAgent", "KCSync", "KCKeychain", "KCVault",
                                                          "KCFormat", "KCCrypto", "KCSystem", "KCTestSupport"], swiftSettings: strict),
        .testTarget(name: "KCCLITests", dependencies: ["KCCLI", "KCCommandSession", "KCSession", "KCExchange", "KCAgent", "KCFTP", "KCKeychain", "KCSync", "KCVault", "KCFormat", "KCCrypto", "KCSystem"], swiftSettings: strict),
    ]
)
