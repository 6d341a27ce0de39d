#ifndef KC_CURL_H
#define KC_CURL_H
/* libcurl, loaded on first use. kc does not link libcurl (it would cost every command the
   dynamic loading of libcurl and the ~30 libraries it needs): `kc_curl_load` dlopens
   libcurl.so.4 and resolves the few functions below. <curl/curl.h> is included only for
   types and constants; call the kc_curl_* functions, never curl_* (they would not link). */
#include <curl/curl.h>
#include <stddef.h>

/* Loads libcurl.so.4 (else libcurl.so) with RTLD_NOW|RTLD_LOCAL, resolves its functions and
   runs curl_global_init, once per process (thread-safe). SSLKEYLOGFILE is removed from the
   environment first, so that no TLS key log is written. Returns 0 when libcurl is usable;
   otherwise -1, with the reason (NUL-terminated, truncated to `len`) in `error`. */
int kc_curl_load(char *error, size_t len);

/* The libcurl functions kc uses. Call them only after kc_curl_load returned 0. */
CURL *kc_curl_easy_init(void);
void kc_curl_easy_cleanup(CURL *h);
CURLcode kc_curl_easy_perform(CURL *h);
const char *kc_curl_easy_strerror(CURLcode code);
CURLcode kc_curl_easy_recv(CURL *h, void *buffer, size_t length, size_t *received);
CURLcode kc_curl_easy_send(CURL *h, const void *buffer, size_t length, size_t *sent);

/* curl_easy_setopt / curl_easy_getinfo are variadic, which Swift cannot call: typed wrappers. */
typedef size_t (*kc_curl_write_cb)(char *ptr, size_t size, size_t nmemb, void *userdata);
CURLcode kc_curl_setopt_string(CURL *h, CURLoption o, const char *v);
CURLcode kc_curl_setopt_long(CURL *h, CURLoption o, long v);
CURLcode kc_curl_setopt_pointer(CURL *h, CURLoption o, void *v);
CURLcode kc_curl_setopt_header_function(CURL *h, kc_curl_write_cb f);
CURLcode kc_curl_getinfo_long(CURL *h, CURLINFO i, long *v);
CURLcode kc_curl_getinfo_socket(CURL *h, curl_socket_t *v);

/* Hands libcurl a socket that is already connected (a duplicate of `fd`), so that it can
   start TLS on a connection where plain-text commands (AUTH TLS) were already exchanged. */
CURLcode kc_curl_use_connected_socket(CURL *h, int fd);
#endif
