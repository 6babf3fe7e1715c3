/* fuzz.h — helpers shared by the libFuzzer targets in tests/fuzz/: an invariant check
 * that aborts (so libFuzzer records the input) whatever NDEBUG says. */
#ifndef INK_FUZZ_H
#define INK_FUZZ_H

#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz invariant failed at %s:%d: %s\n", __FILE__, __LINE__, #cond);   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#endif
