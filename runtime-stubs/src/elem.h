/*
 * elem.h - private helper of the runtime: moving elements of 1, 2, 4 or 8
 * bytes for the type-agnostic kernels. memcpy of a constant size compiles
 * to a plain load/store and keeps the access free of aliasing questions
 * whatever the element type is.
 */
#ifndef COREAI_SRC_ELEM_H
#define COREAI_SRC_ELEM_H

#include <stdint.h>
#include <string.h>

static inline int coreai_elem_size_ok(int64_t es) { return es == 1 || es == 2 || es == 4 || es == 8; }

#define COREAI_ELEM_SWITCH(es, MACRO) \
    switch (es) {                     \
    case 1: MACRO(1); break;          \
    case 2: MACRO(2); break;          \
    case 4: MACRO(4); break;          \
    default: MACRO(8); break;         \
    }

/* dst[i] = src[i * stride] for n elements (stride in elements, may be 0). */
static inline void coreai_elem_gather_row(unsigned char *dst, const unsigned char *src, int64_t n,
                                          int64_t stride, int es)
{
    if (stride == 1) {
        memcpy(dst, src, (size_t)n * (size_t)es);
        return;
    }
#define COREAI_GATHER_ROW_(ES)                                                   \
    for (int64_t i = 0; i < n; ++i)                                              \
        memcpy(dst + (size_t)i * (ES), src + (size_t)(i * stride) * (ES), (ES));
    COREAI_ELEM_SWITCH(es, COREAI_GATHER_ROW_)
#undef COREAI_GATHER_ROW_
}

/* n copies of the element at value. */
static inline void coreai_elem_fill(unsigned char *dst, const void *value, int64_t n, int es)
{
#define COREAI_FILL_(ES)                                 \
    for (int64_t i = 0; i < n; ++i)                      \
        memcpy(dst + (size_t)i * (ES), value, (ES));
    COREAI_ELEM_SWITCH(es, COREAI_FILL_)
#undef COREAI_FILL_
}

#endif /* COREAI_SRC_ELEM_H */
