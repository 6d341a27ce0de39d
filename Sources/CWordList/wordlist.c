#include "cwordlist.h"

#pragma clang diagnostic ignored "-Wc23-extensions"  // #embed: standard C23, clang takes it in every mode

// The EFF large word list, (c) Electronic Frontier Foundation, CC BY 3.0 US
// (see Data/eff_large_wordlist.LICENSE.md): the data file itself, so the binary carries no copy to keep in step.
static const unsigned char list[] = {
#embed "../../Data/eff_large_wordlist.txt"
};

const unsigned char *kc_eff_large_wordlist(unsigned long *size) {
    *size = sizeof list;
    return list;
}
