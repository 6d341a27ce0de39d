import KCCLI
import KCSystem
#if canImport(Glibc)
import Glibc
#endif

ProcessHardening.disableCoreDumps()
exit(CLI.run(CLI.arguments(invokedAs: CommandLine.arguments)))
