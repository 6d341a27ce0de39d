#include "kc_libcrypto.h"
#include "kc_library_loader.h"
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <pthread.h>
#include <stdio.h>

/* The resolved functions. Their types come from OpenSSL's headers (typeof names a function
   without referencing the symbol), so a prototype mismatch is a compile error. */
static struct {
    __typeof__(HMAC) *hmac;
    __typeof__(EVP_Digest) *digest;
    __typeof__(EVP_sha1) *sha1;
    __typeof__(EVP_sha256) *sha256;
    __typeof__(EVP_sha512) *sha512;
} api;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
/* Empty once libcrypto is loaded; otherwise why it could not be. Written only inside load_once. */
static char load_error[512] = "not loaded";

static void load(void) {
    static const char *const libraries[] = {"libcrypto.so.3", "libcrypto.so"};
    const kc_library_symbol symbols[] = {
        {"HMAC", (void **)&api.hmac},
        {"EVP_Digest", (void **)&api.digest},
        {"EVP_sha1", (void **)&api.sha1},
        {"EVP_sha256", (void **)&api.sha256},
        {"EVP_sha512", (void **)&api.sha512},
    };
    if (kc_library_open(libraries, sizeof libraries / sizeof libraries[0], symbols,
                        sizeof symbols / sizeof symbols[0], load_error, sizeof load_error) != 0) return;
    load_error[0] = '\0';
}

int kc_libcrypto_load(char *error, size_t len) {
    pthread_once(&load_once, load);
    if (load_error[0] == '\0') return 0;
    if (error != NULL && len > 0) snprintf(error, len, "%s", load_error);
    return -1;
}

static const EVP_MD *method(kc_digest digest) {
    switch (digest) {
    case KC_DIGEST_SHA1: return api.sha1();
    case KC_DIGEST_SHA256: return api.sha256();
    case KC_DIGEST_SHA512: return api.sha512();
    }
    return NULL;
}

size_t kc_digest_length(kc_digest digest) {
    switch (digest) {
    case KC_DIGEST_SHA1: return 20;
    case KC_DIGEST_SHA256: return 32;
    case KC_DIGEST_SHA512: return 64;
    }
    return 0;
}

int kc_hmac(kc_digest digest, const void *key, size_t key_length, const void *message,
            size_t message_length, uint8_t *out) {
    const EVP_MD *md = method(digest);
    if (md == NULL || key_length > INT32_MAX) return -1;
    unsigned int written = 0;
    /* HMAC wants a non-NULL key pointer even for an empty key. */
    static const uint8_t empty = 0;
    if (api.hmac(md, key_length ? key : &empty, (int)key_length, message_length ? message : &empty,
                 message_length, out, &written) == NULL) return -1;
    return written == kc_digest_length(digest) ? 0 : -1;
}

int kc_digest_of(kc_digest digest, const void *message, size_t message_length, uint8_t *out) {
    const EVP_MD *md = method(digest);
    if (md == NULL) return -1;
    unsigned int written = 0;
    static const uint8_t empty = 0;
    if (api.digest(message_length ? message : &empty, message_length, out, &written, md, NULL) != 1) return -1;
    return written == kc_digest_length(digest) ? 0 : -1;
}
