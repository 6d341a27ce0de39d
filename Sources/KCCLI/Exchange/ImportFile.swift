#if canImport(Glibc)
import Glibc
#endif
import KCCrypto
import KCKeychain
import KCSystem

/// The file an import reads (an export of kc or of another password manager, a netrc file), whole,
/// in secure memory: guarded, left out of core dumps, wiped when released.
///
/// A regular file is read in one buffer of its size, checked before anything is read: up to
/// `limit`. A file up to half the locked-memory limit (RLIMIT_MEMLOCK) is held in locked memory;
/// a larger one in secure memory that is not locked (swappable), said in one notice, so that the
/// locked budget is left to the secrets parsed out of it. Anything else (a pipe, `<(...)`) is
/// read piece by piece, in locked memory, up to the same limit.
enum ImportFile {
    /// The largest file an import reads: 1 GiB, room for 1,000,000 entries of about 1 KiB (kc's
    /// own export with secrets takes about 370 bytes an item).
    static let limit = 1 << 30

    /// The contents of `path`; `notice` is told when they are not held in locked memory.
    static func read(_ path: String, limit: Int = limit, notice: (String) -> Void) throws(CLIError) -> SecureBytes {
        let descriptor: FileDescriptor
        do throws(Errno) {
            descriptor = try FileDescriptor.open(path, O_RDONLY)
        } catch {
            throw CLIError(.io, "cannot open \(path): \(error)")
        }
        defer { descriptor.close() }
        let status: FileStatus
        do throws(Errno) { status = try descriptor.status() } catch {
            throw CLIError(.io, "cannot inspect \(path): \(error)")
        }
        guard status.isRegularFile else { return try SecretSource.readAll(descriptor, what: path, limit: limit) }
        guard status.size <= limit else { throw tooLarge(path, limit) }
        let lockedBudget = Processes.lockedMemoryLimit.map { $0 / 2 } ?? .max
        let locked = status.size <= lockedBudget
        if !locked {
            notice("\(path) (\(ByteSize.describe(UInt64(status.size)))) is held in memory that is not locked against "
                   + "swapping: it is larger than half the locked-memory limit (ulimit -l); encrypt swap or raise the limit")
        }
        let buffer = locked ? SecureBytes(count: status.size) : SecureBytes(unlockedCount: status.size)
        var count = 0
        while count < buffer.count {
            let start = count
            let n = try readSome(descriptor, path) { read in
                buffer.withUnsafeMutableBytes { raw in read(UnsafeMutableRawBufferPointer(rebasing: raw[start...])) }
            }
            if n == 0 { return buffer.slice(0..<count) }   // it shrank meanwhile: what it holds now
            count += n
        }
        var extra = SecureBytes(count: 1)
        if try readSome(descriptor, path, { read in extra.withUnsafeMutableBytes { read($0) } }) > 0 {
            throw CLIError(.io, "\(path) grew while kc read it; nothing was imported",
                           hint: "import it once whatever writes it has finished")
        }
        extra = SecureBytes(count: 0)
        return buffer
    }

    /// One read(2) into the buffer `into` hands over; the byte count, 0 at the end of the file.
    private static func readSome(_ descriptor: FileDescriptor, _ path: String,
                                 _ into: ((UnsafeMutableRawBufferPointer) -> Result<Int, Errno>) -> Result<Int, Errno>)
        throws(CLIError) -> Int {
        let result = into { buffer in Result { () throws(Errno) in try descriptor.read(into: buffer) } }
        switch result {
        case .success(let n): return n
        case .failure(let error): throw CLIError(.io, "cannot read \(path): \(error)")
        }
    }

    private static func tooLarge(_ path: String, _ limit: Int) -> CLIError {
        usageError("\(path) is larger than \(ByteSize.describe(UInt64(limit))), the most an import reads "
                   + "(about 1,000,000 items)", hint: "split the export, or import it in parts")
    }
}
