#ifndef KC_LIBRARY_LOADER_H
#define KC_LIBRARY_LOADER_H
/* The one way kc opens a C library on first use (libcurl, libcrypto): the first of a list of
   sonames that loads, and every function kc calls resolved at once, or a reason. */
#include <stddef.h>

/* A function to resolve: its name, and where its address goes. */
typedef struct {
    const char *name;
    void **slot;
} kc_library_symbol;

/* dlopens the first of `libraries` that loads (RTLD_NOW|RTLD_LOCAL) and fills every symbol's
   slot. Returns 0; or -1 with the reason (the first soname's dlerror, or the function the library
   lacks; NUL-terminated, truncated to `len`) in `error`. Not thread-safe: call it once, under
   pthread_once. */
int kc_library_open(const char *const *libraries, size_t library_count, const kc_library_symbol *symbols,
                    size_t symbol_count, char *error, size_t len);
#endif
