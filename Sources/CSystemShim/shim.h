#ifndef KC_CSYSTEMSHIM_H
#define KC_CSYSTEMSHIM_H
#include <sys/prctl.h>
#include <sys/resource.h>
/* prctl is variadic and absent from Swift's Glibc module: wrap what kc needs. */
static inline int kc_set_not_dumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }
static inline int kc_disable_core_files(void) {
    struct rlimit zero = { 0, 0 };
    return setrlimit(RLIMIT_CORE, &zero);
}
#endif
