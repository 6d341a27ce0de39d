import XCTest
@testable import KCSystem
import KCTestSupport

final class ChildProcessTests: XCTestCase {
    /// Runs `/bin/sh -c script` with `environment`, its standard output and descriptor 3 on pipes;
    /// returns how it ended and what it wrote on each.
    private func shell(_ script: String, environment: [String: String] = [:], newSession: Bool = false)
        throws -> (ChildProcess.Termination, String, String, pid_t) {
        let output = try Processes.pipe(), extra = try Processes.pipe()
        let child = try ChildProcess.spawn("/bin/sh", arguments: ["sh", "-c", script], environment: environment,
                                           descriptors: [1: output.write, 3: extra.write], newSession: newSession)
        output.write.close()
        extra.write.close()
        defer { output.read.close(); extra.read.close() }
        let standard = String(decoding: try output.read.readAll(), as: UTF8.self)
        let third = String(decoding: try extra.read.readAll(), as: UTF8.self)
        return (try child.wait(), standard, third, child.id)
    }

    /// Security review I5: an empty PATH entry (a trailing ':') or a relative one names the current
    /// folder, where kc might run a planted git or gpg: only absolute folders are searched.
    func testOnlyAbsolutePathEntriesAreSearched() throws {
        let folder = TemporaryFolder.make("kc-path")
        defer { TemporaryFolder.remove(folder) }
        try FileSystem.makeDirectories(folder + "/bin")
        for tool in [folder + "/tool", folder + "/bin/tool"] {
            let file = try FileDescriptor.open(tool, O_WRONLY | O_CREAT | O_EXCL, mode: 0o755)
            try file.write(all: Array("#!/bin/sh\n".utf8))
            file.close()
        }
        let previous = FileSystem.resolvedPath(".")!
        XCTAssertEqual(chdir(folder), 0)
        defer { _ = chdir(previous) }
        for searchPath in ["", ":", "/nonexistent:", ":/nonexistent", "/nonexistent::/nonexistent", ".", "bin", "./bin"] {
            XCTAssertNil(ChildProcess.find("tool", searchPath: searchPath), searchPath)
        }
        XCTAssertEqual(ChildProcess.find("tool", searchPath: "bin::/nonexistent:" + folder + "/bin"), folder + "/bin/tool")
        XCTAssertEqual(ChildProcess.find("sh", searchPath: ":/bin"), "/bin/sh")
    }

    func testExitStatusSignalAndOutputs() throws {
        let (ended, out, third, _) = try shell("printf one; printf three >&3; exit 3")
        XCTAssertEqual(ended, .exited(3))
        XCTAssertEqual(out, "one")
        XCTAssertEqual(third, "three")
        XCTAssertEqual(try shell("kill -9 $$").0, .signaled(9))
        XCTAssertTrue(try shell("exit 0").0.succeeded)
    }

    func testEnvironmentIsExactlyTheOneGiven() throws {
        let (_, out, _, _) = try shell("printf '%s|%s' \"$ONLY\" \"${HOME-unset}\"", environment: ["ONLY": "this"])
        XCTAssertEqual(out, "this|unset")
    }

    func testUnnamedStandardDescriptorsAreDevNullAndNothingElseIsInherited() throws {
        // Inherited without close-on-exec (dup clears it), as a parent shell may pass one: still not passed on.
        let stray = dup(FileDescriptor.standardError.rawValue)
        defer { close(stray) }
        let extra = try Processes.pipe()
        defer { extra.read.close() }
        let child = try ChildProcess.spawn("/bin/sleep", arguments: ["sleep", "60"], environment: [:], descriptors: [3: extra.write])
        extra.write.close()
        defer { kill(child.id, SIGKILL); _ = try? child.wait() }
        while (try? String(contentsOfFile: "/proc/\(child.id)/cmdline", encoding: .utf8))?.hasPrefix("sleep") != true {
            usleep(1000)
        }
        let folder = "/proc/\(child.id)/fd"
        // Right after exec the dynamic loader briefly opens the libraries (as 4, 5...): an inherited
        // descriptor stays, so the listing is read until it settles (at most 2 s).
        var open: [Int] = []
        for _ in 0..<200 {
            open = try FileManager.default.contentsOfDirectory(atPath: folder).compactMap { Int($0) }.sorted()
            if open == [0, 1, 2, 3] { break }
            usleep(10_000)
        }
        XCTAssertEqual(open, [0, 1, 2, 3])
        for number in 0...2 {
            XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\(number)"), "/dev/null")
        }
    }

    func testSwappedDescriptorsEachReachTheirTarget() throws {
        let a = try Processes.pipe(), b = try Processes.pipe()
        // Child 3 gets b's and child 4 a's write end, whatever their numbers here.
        let child = try ChildProcess.spawn("/bin/sh", arguments: ["sh", "-c", "printf B >&3; printf A >&4"], environment: [:],
                                           descriptors: [3: b.write, 4: a.write])
        a.write.close()
        b.write.close()
        XCTAssertEqual(try a.read.readAll(), Array("A".utf8))
        XCTAssertEqual(try b.read.readAll(), Array("B".utf8))
        a.read.close()
        b.read.close()
        XCTAssertEqual(try child.wait(), .exited(0))
    }

    func testASourceNumberedLikeAnUnnamedStandardDescriptorStillReachesItsTarget() throws {
        // As when kc was started with standard input closed and a pipe took number 0.
        let pipe = try Processes.pipe(), output = try Processes.pipe()
        let saved = dup(0)
        XCTAssertEqual(dup2(pipe.read.rawValue, 0), 0)
        pipe.read.close()
        defer { dup2(saved, 0); close(saved) }
        let child = try ChildProcess.spawn("/bin/sh", arguments: ["sh", "-c", "cat <&3"], environment: [:],
                                           descriptors: [1: output.write, 3: FileDescriptor(rawValue: 0)])
        output.write.close()
        try pipe.write.write("through 0")
        pipe.write.close()
        XCTAssertEqual(String(decoding: try output.read.readAll(), as: UTF8.self), "through 0")
        output.read.close()
        XCTAssertEqual(try child.wait(), .exited(0))
    }

    func testNewSession() throws {
        let (_, out, _, pid) = try shell("exec cat /proc/self/stat", newSession: true)
        let fields = out.split(separator: ")").last!.split(separator: " ")
        XCTAssertEqual(Int32(fields[3]), pid, "session id")
    }

    func testMissingProgramIsATypedError() {
        XCTAssertThrowsError(try ChildProcess.spawn("/nonexistent/program", arguments: ["x"], environment: [:])) {
            XCTAssertEqual($0 as? Errno, .noSuchFile)
        }
    }

    func testFindSearchesThePathInOrder() {
        XCTAssertEqual(ChildProcess.find("sh", searchPath: "/nonexistent:/bin:/usr/bin"), "/bin/sh")
        XCTAssertNil(ChildProcess.find("no-such-program-kc", searchPath: "/bin:/usr/bin"))
        XCTAssertNil(ChildProcess.find("passwd", searchPath: "/etc"), "not executable")
    }

    func testWritingToAPipeWithoutReaderIsEPIPE() throws {
        let pipe = try Processes.pipe()
        pipe.read.close()
        defer { pipe.write.close() }
        XCTAssertThrowsError(try [UInt8](repeating: 1, count: 10).withUnsafeBytes { try pipe.write.write(toPipe: $0) }) {
            XCTAssertEqual($0 as? Errno, Errno(rawValue: EPIPE))
        }
    }

    func testReadAvailableDoesNotWait() throws {
        let pipe = try Processes.pipe()
        defer { pipe.read.close(); pipe.write.close() }
        XCTAssertEqual(try pipe.read.readAvailable(upTo: 10), [])
        try pipe.write.write("ab")
        XCTAssertEqual(try pipe.read.readAvailable(upTo: 10), Array("ab".utf8))
    }
}
