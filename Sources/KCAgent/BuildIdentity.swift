#if canImport(Glibc)
import Glibc
#endif

/// The build id both sides of the hello send: the identity of the running executable file
/// (device, inode, size, modification time of `/proc/self/exe`). Every build, install or
/// upgrade writes a new file, so an agent started before kc was replaced is told apart by its
/// clients; two kc processes of one installed file agree. One `stat`, no hashing.
///
/// Debug (test) builds take `KC_TEST_BUILD_ID` instead when it is set; the release binary has
/// no trace of it.
enum BuildIdentity {
    static let current: String = {
        #if KC_FAULT_SEAM
        if let forced = getenv("KC_TEST_BUILD_ID") { return String(cString: forced) }
        #endif
        var st = stat()
        guard stat("/proc/self/exe", &st) == 0 else { return "unknown" }
        return "exe-\(st.st_dev)-\(st.st_ino)-\(st.st_size)-\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
    }()
}
