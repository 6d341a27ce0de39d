import KCSession
import KCCrypto
import KCExchange
import KCFormat
import KCKeychain

/// Why a request's JSON description was refused (`AgentWireTable.encode`).
public enum AgentWireDescriptionError: Error, Sendable {
    /// The text is not JSON: the scanner's error, with its line.
    case json(ExchangeFileError)
    /// `field` (a path such as `queries[0].class`) is missing or not `expected`.
    case field(String, expected: String)
    /// A field the request does not have (misspelt?).
    case unknownField(String)
}

extension AgentWireTable {
    /// The frames of the request that `description` (JSON, Docs/AGENT.md "Test clients") names,
    /// written by `AgentRequest` itself. Secrets are JSON strings, unescaped into secure memory.
    public static func encode(_ description: SecureBytes) throws(AgentWireDescriptionError) -> [SecureBytes] {
        let request = description.withUnsafeBytes { raw -> Result<AgentRequest, AgentWireDescriptionError> in
            do throws(AgentWireDescriptionError) { return .success(try read(raw)) } catch { return .failure(error) }
        }
        return Array(try request.get().frames())
    }

    private static func read(_ raw: UnsafeRawBufferPointer) throws(AgentWireDescriptionError) -> AgentRequest {
        if let error = ExchangeText.invalidUTF8(raw) { throw .json(error) }
        var scanner = JSONScanner(bytes: raw)
        let root: JSONValue
        do throws(ExchangeFileError) { root = try scanner.document() } catch { throw .json(error) }
        var fields = try DescriptionFields(root, path: "", scanner: scanner)
        let request = try AgentRequest(describedBy: &fields)
        try fields.finish()
        return request
    }
}

extension AgentRequest {
    /// The request a JSON object names: `kind` (a name of `Kind`) and the fields of that case,
    /// by their Swift labels (absent flags false, absent optionals nil).
    init(describedBy fields: inout DescriptionFields) throws(AgentWireDescriptionError) {
        let name = try fields.string("kind").must(fields.path + "kind")
        guard let kind = Kind.allCases.first(where: { "\($0)" == name }) else { throw .field("kind", expected: "a request kind") }
        switch kind {
        case .status: self = .status
        case .lock: self = .lock
        case .compact: self = .compact
        case .check: self = .check
        case .liveVault: self = .liveVault
        case .liveSummary: self = .liveSummary
        case .shutdown: self = .shutdown
        case .unlock:
            self = .unlock(password: try fields.secret("password").must(fields.path + "password"),
                           idleTimeout: Double(try fields.integer("idleMilliseconds").must(fields.path + "idleMilliseconds")) / 1000,
                           maxTTL: Double(try fields.integer("maxTTLMilliseconds").must(fields.path + "maxTTLMilliseconds")) / 1000)
        case .find: self = .find(try fields.queries("queries"), revealing: try fields.bool("revealing"), password: try fields.secret("password"))
        case .search:
            self = .search(SearchQuery(terms: try fields.strings("terms"), itemClass: try fields.itemClass("class")))
        case .allItems: self = .allItems(revealing: try fields.bool("revealing"), password: try fields.secret("password"))
        case .add:
            self = .add(try fields.attributes("attributes"), secret: try fields.secret("secret").must(fields.path + "secret"),
                        updateExisting: try fields.bool("updateExisting"), password: try fields.secret("password"))
        case .addAll:
            var items: [ExchangeItem] = []
            for var item in try fields.objects("items") {
                var earlier: [ExchangeItem.EarlierVersion] = []
                for var version in try item.objects("earlierVersions") {
                    earlier.append(.init(secret: try version.secret("secret").must(version.path + "secret"),
                                         modified: try version.integer("modified").must(version.path + "modified")))
                    try version.finish()
                }
                items.append(ExchangeItem(attributes: try item.attributes("attributes"), secret: try item.secret("secret").must(item.path + "secret"),
                                          id: try item.hex("id"), created: try item.integer("created"),
                                          modified: try item.integer("modified"), earlierVersions: earlier))
                try item.finish()
            }
            self = .addAll(items, dryRun: try fields.bool("dryRun"))
        case .update:
            var changes: [Attribute: String?] = [:]
            if var object = try fields.object("changes") {
                for key in object.keys {
                    guard let attribute = Attribute(rawValue: key) else { throw .field(object.path + key, expected: "an attribute") }
                    changes[attribute] = .some(try object.string(key))
                }
            }
            self = .update(ItemUpdate(query: try fields.query("query"), changes: changes, secret: try fields.secret("secret"),
                                      requirePassword: try fields.optionalBool("requirePassword"),
                                      thisDeviceOnly: try fields.optionalBool("thisDeviceOnly"), password: try fields.secret("password")))
        case .delete: self = .delete(try fields.query("query"), password: try fields.secret("password"))
        case .merge: self = .merge(ours: try fields.hex("ours").must(fields.path + "ours"), theirs: try fields.hex("theirs").must(fields.path + "theirs"))
        case .export: self = .export(into: try fields.hex("into").must(fields.path + "into"))
        case .importing: self = .importing(try fields.hex("copy").must(fields.path + "copy"))
        case .summary: self = .summary(of: try fields.hex("of").must(fields.path + "of"))
        case .conflicts:
            self = .conflicts(itemID: try fields.hex("itemID"), revealing: try fields.bool("revealing"), password: try fields.secret("password"))
        case .history:
            self = .history(try fields.query("query"), revealing: try fields.bool("revealing"), password: try fields.secret("password"))
        case .tornTail: self = .tornTail(removing: try fields.bool("removing"))
        case .nameDevice: self = .nameDevice(try fields.string("name").must(fields.path + "name"), password: try fields.secret("password"))
        case .deleted: self = .deleted(try fields.queries("queries"), restoring: try fields.bool("restoring"))
        }
    }
}

/// The members of one JSON object of a description, each read once; `finish` refuses any left
/// unread (a misspelt field is an error, not a default). Values read as null are absent.
struct DescriptionFields {
    typealias Failure = AgentWireDescriptionError
    let path: String
    private let scanner: JSONScanner
    private let members: [(key: String, value: JSONValue)]
    private var read: Set<String> = []

    init(_ value: JSONValue, path: String, scanner: JSONScanner) throws(Failure) {
        guard case .object(let members, _) = value else { throw .field(path.isEmpty ? "the description" : path, expected: "an object") }
        (self.path, self.scanner, self.members) = (path.isEmpty ? "" : path + ".", scanner, members)
    }

    var keys: [String] { members.map(\.key) }

    func finish() throws(Failure) {
        if let unknown = members.first(where: { !read.contains($0.key) }) { throw .unknownField(path + unknown.key) }
    }

    /// The value of `key`; nil when absent or null.
    private mutating func value(_ key: String) -> JSONValue? {
        read.insert(key)
        guard let value = members.first(where: { $0.key == key })?.value else { return nil }
        if case .null = value { return nil }
        return value
    }


    private func range(_ value: JSONValue?, _ key: String) throws(Failure) -> Range<Int>? {
        guard let value else { return nil }
        guard case .string(let range) = value else { throw .field(path + key, expected: "a string") }
        return range
    }

    mutating func string(_ key: String) throws(Failure) -> String? {
        guard let range = try range(value(key), key) else { return nil }
        do throws(ExchangeFileError) { return try scanner.text(range) } catch { throw .json(error) }
    }

    mutating func secret(_ key: String) throws(Failure) -> SecureBytes? {
        guard let range = try range(value(key), key) else { return nil }
        do throws(ExchangeFileError) { return try scanner.secret(range) } catch { throw .json(error) }
    }

    mutating func hex(_ key: String) throws(Failure) -> [UInt8]? {
        guard let text = try string(key) else { return nil }
        guard let bytes = [UInt8](hexString: text) else { throw .field(path + key, expected: "hexadecimal digits") }
        return bytes
    }

    mutating func integer(_ key: String) throws(Failure) -> Int64? {
        switch value(key) {
        case nil: return nil
        case .integer(let number): return number
        default: throw .field(path + key, expected: "an integer")
        }
    }

    mutating func optionalBool(_ key: String) throws(Failure) -> Bool? {
        switch value(key) {
        case nil: return nil
        case .bool(let flag): return flag
        default: throw .field(path + key, expected: "true or false")
        }
    }

    mutating func bool(_ key: String) throws(Failure) -> Bool { try optionalBool(key) ?? false }

    mutating func object(_ key: String) throws(Failure) -> DescriptionFields? {
        guard let value = value(key) else { return nil }
        return try DescriptionFields(value, path: path + key, scanner: scanner)
    }

    mutating func objects(_ key: String) throws(Failure) -> [DescriptionFields] {
        guard let value = value(key) else { return [] }
        guard case .array(let elements) = value else { throw .field(path + key, expected: "an array") }
        var result: [DescriptionFields] = []
        for (index, element) in elements.enumerated() {
            result.append(try DescriptionFields(element, path: "\(path)\(key)[\(index)]", scanner: scanner))
        }
        return result
    }

    mutating func strings(_ key: String) throws(Failure) -> [String] {
        guard let value = value(key) else { return [] }
        guard case .array(let elements) = value else { throw .field(path + key, expected: "an array") }
        var result: [String] = []
        for element in elements {
            guard case .string(let range) = element else { throw .field(path + key, expected: "strings") }
            do throws(ExchangeFileError) { result.append(try scanner.text(range)) } catch { throw .json(error) }
        }
        return result
    }

    mutating func itemClass(_ key: String) throws(Failure) -> ItemClass? {
        guard let name = try string(key) else { return nil }
        guard let itemClass = ItemClass(rawValue: name) else { throw .field(path + key, expected: "an item class") }
        return itemClass
    }

    /// An object of attribute names and strings (a query's filters, an item's values).
    mutating func values(_ key: String) throws(Failure) -> [Attribute: String] {
        guard var object = try object(key) else { return [:] }
        var result: [Attribute: String] = [:]
        for name in object.keys {
            guard let attribute = Attribute(rawValue: name) else { throw .field(object.path + name, expected: "an attribute") }
            result[attribute] = try object.string(name).must(object.path + name)
        }
        return result
    }

    /// `{"class", "values", "requirePassword", "thisDeviceOnly"}`.
    mutating func attributes(_ key: String) throws(Failure) -> ItemAttributes {
        guard var object = try object(key) else { throw .field(path + key, expected: "an object") }
        let attributes = ItemAttributes(try object.itemClass("class").must(object.path + "class"), try object.values("values"),
                                        requirePassword: try object.bool("requirePassword"), thisDeviceOnly: try object.bool("thisDeviceOnly"))
        try object.finish()
        return attributes
    }

    /// `{"class", "filters", "ignoreCase", "matchAll", "itemID"}` (all optional).
    mutating func query(_ key: String) throws(Failure) -> Query {
        guard var object = try object(key) else { throw .field(path + key, expected: "an object") }
        let query = try object.query()
        try object.finish()
        return query
    }

    mutating func queries(_ key: String) throws(Failure) -> [Query] {
        var result: [Query] = []
        for var object in try objects(key) {
            result.append(try object.query())
            try object.finish()
        }
        return result
    }

    private mutating func query() throws(Failure) -> Query {
        Query(itemClass: try itemClass("class"), filters: try values("filters"), ignoreCase: try bool("ignoreCase"),
              matchAll: try bool("matchAll"), itemID: try hex("itemID"))
    }
}

private extension Optional {
    /// The value, which a description must give at `field`.
    func must(_ field: String) throws(AgentWireDescriptionError) -> Wrapped {
        guard let self else { throw .field(field, expected: "a value") }
        return self
    }
}
