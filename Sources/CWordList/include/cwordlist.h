#ifndef KC_CWORDLIST_H
#define KC_CWORDLIST_H

/// The EFF large word list file (Data/eff_large_wordlist.txt) as it is, embedded at build time:
/// 7,776 lines of a dice number, a tab and a word. Sets `*size` to its length in bytes.
const unsigned char *kc_eff_large_wordlist(unsigned long *size);

#endif
