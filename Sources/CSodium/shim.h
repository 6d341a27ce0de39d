#ifndef KC_CSODIUM_SHIM_H
#define KC_CSODIUM_SHIM_H
#include <sodium.h>
#endif
