#pragma once

#include <cstdio>
#include <cstdlib>

// A broken property ends the fuzz run as a crash would: libFuzzer keeps the input as an
// artifact. Not assert(): the fuzz build is optimised with NDEBUG.
#define FUZZ_FAIL(what, detail)                                                                                       \
    do {                                                                                                              \
        std::fprintf(stderr, "fuzz property broken at %s:%d: %s (%s)\n", __FILE__, __LINE__, what, detail);           \
        std::abort();                                                                                                 \
    } while (false)

#define FUZZ_CHECK(condition, detail)                                                                                 \
    do {                                                                                                              \
        if (!(condition))                                                                                             \
            FUZZ_FAIL(#condition, detail);                                                                            \
    } while (false)
