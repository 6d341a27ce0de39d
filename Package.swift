// swift-tools-version:6.0
import PackageDescription

/// Test-only fault seam: compiled into debug (test) builds, never into the release binary.
let faultSeam: [SwiftSetting] = [.define("KC_FAULT_SEAM", .when(configuration: .debug))]

let package = Package(
    name: "kc",
    products: [
        .executable(name: "kc", targets: ["kc"]),
    ],
    targets: [
        // System-library shims.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CSystemShim"),
        // libcurl, loaded with dlopen on first use (not linked: kc starts faster); builds against the
        // libcurl4-openssl-dev headers (`make deps`).
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("dl")]),

        // Layers, bottom up. Each imports only layers below it.
        .target(name: "KCSystem", dependencies: ["CSystemShim"], swiftSettings: faultSeam),
        .target(name: "KCCrypto", dependencies: ["CSodium"]),
        .target(name: "KCFormat"),
        .target(name: "KCVault", dependencies: ["KCSystem", "KCCrypto", "KCFormat"], swiftSettings: faultSeam),
        .target(name: "Keychain", dependencies: ["KCVault", "KCCrypto", "KCFormat", "KCSystem"]),
        .target(name: "KCFTP", dependencies: ["CCurl", "Keychain", "KCCrypto"]),
        .target(name: "KCCLI", dependencies: ["Keychain", "KCFTP", "KCVault", "KCCrypto", "KCSystem", "KCFormat"],
                swiftSettings: faultSeam),
        .executableTarget(name: "kc", dependencies: ["KCCLI"],
                          linkerSettings: [.unsafeFlags(["-static-stdlib"])]),

        .testTarget(name: "KCSystemTests", dependencies: ["KCSystem"]),
        .testTarget(name: "KCCryptoTests", dependencies: ["KCCrypto"]),
        .testTarget(name: "KCFormatTests", dependencies: ["KCFormat", "KCCrypto", "KCVault", "Keychain"]),
        .testTarget(name: "KCVaultTests", dependencies: ["KCVault", "KCCrypto", "KCFormat", "KCSystem"]),
        .testTarget(name: "KeychainTests", dependencies: ["Keychain", "KCVault", "KCCrypto"]),
        .testTarget(name: "KCFTPTests", dependencies: ["KCFTP", "Keychain", "KCCrypto"]),
        .testTarget(name: "KCCLITests", dependencies: ["KCCLI", "Keychain"]),
    ]
)
