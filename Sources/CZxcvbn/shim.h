#ifndef KC_CZXCVBN_SHIM_H
#define KC_CZXCVBN_SHIM_H
// zxcvbn-c (Debian's libzxcvbn-dev), its dictionary built into the library.
// kc links libzxcvbn.so.0 (Debian: libzxcvbn0; the static archive is not position-independent).
#include <zxcvbn.h>
#endif
