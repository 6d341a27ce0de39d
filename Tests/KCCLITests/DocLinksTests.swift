import XCTest

/// Every relative link of the README and of `Docs/*.md` leads to a file that exists and, when it names
/// a heading (`FILE.md#heading`), to a heading of that file, with GitHub's anchor for it.
final class DocLinksTests: XCTestCase {
    /// The README and every Markdown file directly in Docs/, as paths relative to the repository.
    static func documents() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: GeneratedDocsTests.root + "/Docs")
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "Docs/" + $0 }
    }

    /// The targets of `[text](target)` and `![alt](target)` outside code, without a title.
    static func links(in markdown: String) -> [String] {
        var targets: [String] = []
        var inFence = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inFence.toggle(); continue }
            if inFence { continue }
            let text = line.split(separator: "`", omittingEmptySubsequences: false)
                .enumerated().filter { $0.offset % 2 == 0 }.map(\.element).joined(separator: " ")
            var rest = Substring(text)
            while let open = rest.range(of: "](") {
                let after = rest[open.upperBound...]
                guard let close = after.firstIndex(of: ")") else { break }
                let target = after[..<close].split(separator: " ").first.map(String.init) ?? ""
                targets.append(target)
                rest = after[close...]
            }
        }
        return targets
    }

    /// GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`.
    static func anchor(_ heading: String) -> String {
        String(heading.lowercased().compactMap { c -> Character? in
            if c == " " { return "-" }
            if c.isLetter || c.isNumber || c == "-" || c == "_" { return c }
            return nil
        })
    }

    static func anchors(in markdown: String) -> Set<String> {
        var result: Set<String> = []
        var inFence = false
        for line in markdown.split(separator: "\n") {
            if line.hasPrefix("```") { inFence.toggle(); continue }
            guard !inFence, line.hasPrefix("#") else { continue }
            let heading = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
            var name = anchor(heading)
            var n = 0
            while result.contains(name) { n += 1; name = anchor(heading) + "-\(n)" }
            result.insert(name)
        }
        return result
    }

    static func problems(in document: String, text: String, read: (String) -> String?) -> [String] {
        let folder = document.contains("/") ? String(document[..<document.lastIndex(of: "/")!]) : ""
        var problems: [String] = []
        for target in links(in: text) where !target.contains("://") && !target.hasPrefix("mailto:") {
            let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
            let file = String(parts[0])
            var path = file.isEmpty ? document : (folder.isEmpty ? file : folder + "/" + file)
            while let up = path.range(of: "[^/]+/\\.\\./", options: .regularExpression) { path.removeSubrange(up) }
            guard let content = read(path) else { problems.append("\(document): \(target): no file \(path)"); continue }
            if parts.count == 2, path.hasSuffix(".md"), !anchors(in: content).contains(String(parts[1])) {
                problems.append("\(document): \(target): no heading #\(parts[1]) in \(path)")
            }
        }
        return problems
    }

    static func read(_ path: String) -> String? {
        let full = GeneratedDocsTests.root + "/" + path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: full, isDirectory: &isFolder) else { return nil }
        if isFolder.boolValue { return "" }
        return (try? String(contentsOfFile: full, encoding: .utf8)) ?? ""
    }

    func testEveryRelativeLinkLeadsToAFileAndHeading() throws {
        var checked = 0
        for document in try Self.documents() {
            let text = try XCTUnwrap(Self.read(document), document)
            checked += Self.links(in: text).count
            for problem in Self.problems(in: document, text: text, read: Self.read) { XCTFail(problem) }
        }
        XCTAssertGreaterThan(checked, 50, "the links were not found at all")
    }

    /// The checker itself: a missing file, a missing heading and a good link.
    func testTheCheckerFindsBrokenLinks() {
        let files = ["Docs/A.md": "# A\n\n## Use `kc sync`, now\n", "Docs/B.md": "x"]
        let text = "[a](A.md#use-kc-sync-now) [b](B.md) `[c](C.md)` [d](C.md) [e](A.md#none) [f](https://x.example/y)\n"
        let found = Self.problems(in: "Docs/T.md", text: text) { files[$0] }
        XCTAssertEqual(found, ["Docs/T.md: C.md: no file Docs/C.md", "Docs/T.md: A.md#none: no heading #none in Docs/A.md"])
    }
}
