import KCCLI
import KCSystem
#if canImport(Glibc)
import Glibc
#endif

ProcessHardening.disableCoreDumps()
exit(CLI.run(Array(CommandLine.arguments.dropFirst())))
