#ifndef KC_LIBCRYPTO_H
#define KC_LIBCRYPTO_H
/* OpenSSL's libcrypto, loaded on first use, for what libsodium lacks (HMAC-SHA-1/256/512 and
   SHA-1 today; X.509, PKCS#12, RSA/ECDSA and the Secret Service's DH later). kc does not link
   libcrypto: linking it costs every command about a millisecond of dynamic loading, and most
   commands never need it. `kc_libcrypto_load` dlopens libcrypto.so.3 and resolves the functions
   below; the OpenSSL headers are included only for types. Call the kc_* functions, never the
   OpenSSL ones (they would not link). */
#include <stddef.h>
#include <stdint.h>

/* Loads libcrypto.so.3 (else libcrypto.so) with RTLD_NOW|RTLD_LOCAL and resolves its functions,
   once per process (thread-safe). Returns 0 when libcrypto is usable; otherwise -1, with the
   reason (NUL-terminated, truncated to `len`) in `error`. */
int kc_libcrypto_load(char *error, size_t len);

/* The digests kc computes with libcrypto. */
typedef enum { KC_DIGEST_SHA1 = 1, KC_DIGEST_SHA256 = 2, KC_DIGEST_SHA512 = 3 } kc_digest;

/* The length in bytes of `digest`'s output (20, 32 or 64), or 0 for an unknown one. */
size_t kc_digest_length(kc_digest digest);

/* HMAC of `message` under `key` with `digest`, written to `out` (at least kc_digest_length
   bytes). Returns 0, or -1 when libcrypto refused. Call only after kc_libcrypto_load returned 0.
   libcrypto copies the key into its own context and cleanses it when the call ends. */
int kc_hmac(kc_digest digest, const void *key, size_t key_length, const void *message,
            size_t message_length, uint8_t *out);

/* The plain digest of `message`, written to `out`. Returns 0, or -1 when libcrypto refused. */
int kc_digest_of(kc_digest digest, const void *message, size_t message_length, uint8_t *out);
#endif
