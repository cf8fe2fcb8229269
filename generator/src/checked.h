/*
 * checked.h - integer arithmetic that reports overflow instead of wrapping
 * (or, for signed types, being undefined). Every size, offset, stride,
 * window extent and workspace total the generator computes from a model's
 * numbers goes through these; each returns false on overflow and then leaves
 * *r unspecified.
 */
#ifndef CG_CHECKED_H
#define CG_CHECKED_H

#include <stdbool.h>
#include <stdint.h>

static inline bool cg_add_i64(int64_t a, int64_t b, int64_t *r) { return !__builtin_add_overflow(a, b, r); }
static inline bool cg_sub_i64(int64_t a, int64_t b, int64_t *r) { return !__builtin_sub_overflow(a, b, r); }
static inline bool cg_mul_i64(int64_t a, int64_t b, int64_t *r) { return !__builtin_mul_overflow(a, b, r); }
static inline bool cg_add_u64(uint64_t a, uint64_t b, uint64_t *r) { return !__builtin_add_overflow(a, b, r); }
static inline bool cg_mul_u64(uint64_t a, uint64_t b, uint64_t *r) { return !__builtin_mul_overflow(a, b, r); }

/* a rounded up to a multiple of align (a power of two). */
static inline bool cg_align_up_u64(uint64_t a, uint64_t align, uint64_t *r)
{
    if (!cg_add_u64(a, align - 1, r))
        return false;
    *r &= ~(align - 1);
    return true;
}

/* Elements of a strided range [0, n) with step s >= 1: ceil(n / s) without
 * computing n + s - 1, which overflows for s near INT64_MAX. */
static inline int64_t cg_ceil_div_i64(int64_t n, int64_t s) { return n <= 0 ? 0 : (n - 1) / s + 1; }

#endif /* CG_CHECKED_H */
