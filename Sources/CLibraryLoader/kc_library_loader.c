#include "kc_library_loader.h"
#include <dlfcn.h>
#include <stdio.h>

int kc_library_open(const char *const *libraries, size_t library_count, const kc_library_symbol *symbols,
                    size_t symbol_count, char *error, size_t len) {
    void *library = NULL;
    char first_error[512] = "";
    for (size_t i = 0; i < library_count && library == NULL; i++) {
        library = dlopen(libraries[i], RTLD_NOW | RTLD_LOCAL);
        const char *why = library == NULL ? dlerror() : NULL;
        if (i == 0 && why != NULL) snprintf(first_error, sizeof first_error, "%s", why);
    }
    if (library == NULL) {
        snprintf(error, len, "%s", first_error[0] ? first_error : "not found");
        return -1;
    }
    for (size_t i = 0; i < symbol_count; i++) {
        *symbols[i].slot = dlsym(library, symbols[i].name);
        if (*symbols[i].slot == NULL) {
            snprintf(error, len, "the library has no function %s", symbols[i].name);
            return -1;
        }
    }
    return 0;
}
