#include "kc_curl.h"
#include "kc_library_loader.h"
#include <pthread.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The resolved functions. Their types come from <curl/curl.h> (typeof names a function
   without referencing the symbol), so a prototype mismatch is a compile error. */
static struct {
    __typeof__(curl_global_init) *global_init;
    __typeof__(curl_easy_init) *easy_init;
    __typeof__(curl_easy_cleanup) *easy_cleanup;
    __typeof__(curl_easy_perform) *easy_perform;
    __typeof__(curl_easy_strerror) *easy_strerror;
    __typeof__(curl_easy_recv) *easy_recv;
    __typeof__(curl_easy_send) *easy_send;
    __typeof__(curl_easy_setopt) *easy_setopt;
    __typeof__(curl_easy_getinfo) *easy_getinfo;
} api;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
/* Empty once libcurl is loaded; otherwise why it could not be. Written only inside load_once. */
static char load_error[512] = "not loaded";

static void load(void) {
    static const char *const libraries[] = {"libcurl.so.4", "libcurl.so"};
    const kc_library_symbol symbols[] = {
        {"curl_global_init", (void **)&api.global_init},
        {"curl_easy_init", (void **)&api.easy_init},
        {"curl_easy_cleanup", (void **)&api.easy_cleanup},
        {"curl_easy_perform", (void **)&api.easy_perform},
        {"curl_easy_strerror", (void **)&api.easy_strerror},
        {"curl_easy_recv", (void **)&api.easy_recv},
        {"curl_easy_send", (void **)&api.easy_send},
        {"curl_easy_setopt", (void **)&api.easy_setopt},
        {"curl_easy_getinfo", (void **)&api.easy_getinfo},
    };
    if (kc_library_open(libraries, sizeof libraries / sizeof libraries[0], symbols,
                        sizeof symbols / sizeof symbols[0], load_error, sizeof load_error) != 0) return;
    /* libcurl (like OpenSSL's users) appends every TLS session's keys to the file named by
       SSLKEYLOGFILE, read once here: with it, a capture of the FTPS traffic reveals PASS. */
    unsetenv("SSLKEYLOGFILE");
    CURLcode code = api.global_init(CURL_GLOBAL_DEFAULT);
    if (code != CURLE_OK) {
        snprintf(load_error, sizeof load_error, "curl_global_init failed: %s", api.easy_strerror(code));
        return;
    }
    load_error[0] = '\0';
}

int kc_curl_load(char *error, size_t len) {
    pthread_once(&load_once, load);
    if (load_error[0] == '\0') return 0;
    if (error != NULL && len > 0) snprintf(error, len, "%s", load_error);
    return -1;
}

CURL *kc_curl_easy_init(void) { return api.easy_init(); }
void kc_curl_easy_cleanup(CURL *h) { api.easy_cleanup(h); }
CURLcode kc_curl_easy_perform(CURL *h) { return api.easy_perform(h); }
const char *kc_curl_easy_strerror(CURLcode code) { return api.easy_strerror(code); }
CURLcode kc_curl_easy_recv(CURL *h, void *buffer, size_t length, size_t *received) {
    return api.easy_recv(h, buffer, length, received);
}
CURLcode kc_curl_easy_send(CURL *h, const void *buffer, size_t length, size_t *sent) {
    return api.easy_send(h, buffer, length, sent);
}

CURLcode kc_curl_setopt_string(CURL *h, CURLoption o, const char *v) { return api.easy_setopt(h, o, v); }
CURLcode kc_curl_setopt_long(CURL *h, CURLoption o, long v) { return api.easy_setopt(h, o, v); }
CURLcode kc_curl_setopt_pointer(CURL *h, CURLoption o, void *v) { return api.easy_setopt(h, o, v); }
CURLcode kc_curl_setopt_header_function(CURL *h, kc_curl_write_cb f) {
    return api.easy_setopt(h, CURLOPT_HEADERFUNCTION, f);
}
CURLcode kc_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return api.easy_getinfo(h, i, v); }
CURLcode kc_curl_getinfo_socket(CURL *h, curl_socket_t *v) { return api.easy_getinfo(h, CURLINFO_ACTIVESOCKET, v); }

static curl_socket_t open_given_socket(void *clientp, curlsocktype purpose, struct curl_sockaddr *address) {
    (void)purpose; (void)address;
    return dup((int)(intptr_t)clientp);
}

static int given_socket_is_connected(void *clientp, curl_socket_t fd, curlsocktype purpose) {
    (void)clientp; (void)fd; (void)purpose;
    return CURL_SOCKOPT_ALREADY_CONNECTED;
}

CURLcode kc_curl_use_connected_socket(CURL *h, int fd) {
    CURLcode rc = api.easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open_given_socket);
    if (rc == CURLE_OK) rc = api.easy_setopt(h, CURLOPT_OPENSOCKETDATA, (void *)(intptr_t)fd);
    if (rc == CURLE_OK) rc = api.easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, given_socket_is_connected);
    return rc;
}
