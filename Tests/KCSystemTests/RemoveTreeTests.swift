import Foundation
import XCTest
@testable import KCSystem

/// `FileSystem.removeTree`: a folder kc made and gives up on goes whole, and a symbolic link in it
/// is removed without touching what it points to.
extension FileDescriptorTests {
    func testRemoveTreeRemovesNestedFilesAndNeverFollowsLinks() throws {
        let tree = folder + "/tree", outside = folder + "/outside"
        try FileSystem.makeDirectories(tree + "/a/b")
        try FileSystem.makeDirectories(outside)
        try FileSystem.writeAtomically(Array("x".utf8), to: tree + "/a/b/file")
        try FileSystem.writeAtomically(Array("keep".utf8), to: outside + "/kept")
        XCTAssertEqual(symlink(outside, tree + "/a/link"), 0)
        try FileSystem.removeTree(tree)
        XCTAssertFalse(FileSystem.exists(tree))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: outside + "/kept")), Data("keep".utf8))
        try FileSystem.removeTree(tree)   // nothing there: nothing to do
    }
}
