import KCCLI
import KCSystem
#if canImport(Glibc)
import Glibc
#endif

ProcessHardening.disableCoreDumps()
ProcessHardening.occupyClosedStandardDescriptors()
// First of all, before anything reads argv: a `security add-*-password -w PASSWORD` leaves it here.
let commandLine = CommandLineSecret.take(argc: CommandLine.argc, argv: CommandLine.unsafeArgv)
CLI.runAndExit(CLI.arguments(invokedAs: commandLine.arguments), commandLineSecret: commandLine.secret)
