#ifndef COREAI_KERNELS_ROPE_H
#define COREAI_KERNELS_ROPE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * rope composite (docs/composite-ops.md): rotary position embedding over the
 * last axis of a dense tensor x of `shape` (rank >= 2, the sequence axis is
 * rank - 2). The first rotary_dims features (even, 2..D) are rotated, the
 * rest are copied:
 *   split-half:  x1 = x[i], x2 = x[i + R/2]        (i < R/2, R = rotary_dims)
 *   interleaved: x1 = x[2i], x2 = x[2i + 1]
 *   y1 = cos_i * x1 - sin_i * x2,  y2 = sin_i * x1 + cos_i * x2, written back
 *   to the same places.
 *
 * COREAI_ROPE_COS_SIN: cos_i / sin_i are read from the cos and sin operands
 * through cos_strides / sin_strides, element strides over `shape` with the
 * last extent replaced by R/2 (0 on broadcast axes).
 *
 * COREAI_ROPE_POSITIONS: cos_i / sin_i are those of the f32 angle
 * pos * (freq_i * scale), evaluated in f32 in that order like the reference:
 *   freq_i = freqs[i] when freqs is given, else
 *            1 / (float)pow(base, (float)i / (float)(R/2));
 *   pos    = (float)(P + t) where t is the row's sequence index when
 *            add_seq_index is set (0 otherwise) and P is the element of the
 *            positions operand at pos_strides (last axis ignored; dtype
 *            pos_dtype: I32, I64 or F32) or, without that operand
 *            (pos_dtype < 0), the constant `offset`.
 *   Integer P + t is added exactly before the conversion. cos / sin of each
 *   f32 angle are evaluated in double and rounded once (the f32 nearest to
 *   the double cos / sin). They are computed once per distinct position
 *   into the caller's scratch buffer (coreai_rope_scratch_size bytes) and
 *   then applied to every row.
 *
 * The rotation itself is evaluated in f32 (like the reference's
 * x * cos + rotate_half(x) * sin): |error| <= 2^-23 (|c x1| + |s x2|) about.
 *
 * out may equal x.
 */
typedef enum coreai_rope_mode {
    COREAI_ROPE_COS_SIN = 0,
    COREAI_ROPE_POSITIONS = 1
} coreai_rope_mode;

typedef struct coreai_rope_params {
    int32_t rank;
    int64_t shape[COREAI_MAX_RANK];
    int64_t rotary_dims;
    int32_t interleaved;
    int32_t mode;  /* coreai_rope_mode */
    int64_t cos_strides[COREAI_MAX_RANK];
    int64_t sin_strides[COREAI_MAX_RANK];
    int32_t pos_dtype; /* coreai_dtype of the positions operand, -1 when absent */
    int64_t pos_strides[COREAI_MAX_RANK];
    int32_t add_seq_index;
    int64_t offset;
    float scale;
    float base;
    int32_t has_freqs;
} coreai_rope_params;

/* The inverse frequency of rotary pair i of half = rotary_dims / 2 when no
 * freqs are given: 1 / base^(i / half), with the exponent and the result in
 * f32 and the power in double. coreai_rope_f32 and coreai-gen's build-time
 * cos / sin tables both use this one definition, so they agree bit for bit
 * (each then multiplies by scale in f32). */
static inline float coreai_rope_inv_freq(float base, int64_t i, int64_t half)
{
    const float e = (float)i / (float)half;
    const float period = (float)pow((double)base, (double)e);
    return 1.0f / period;
}

/* Whether params describe a call coreai_rope_f32 accepts. */
static inline int coreai_rope_params_valid(const coreai_rope_params *p)
{
    if (p == NULL || p->rank < 2 || p->rank > COREAI_MAX_RANK)
        return 0;
    for (int d = 0; d < p->rank; ++d)
        if (p->shape[d] < 0)
            return 0;
    if (p->rotary_dims < 2 || p->rotary_dims % 2 != 0 || p->rotary_dims > p->shape[p->rank - 1])
        return 0;
    if (p->mode != COREAI_ROPE_COS_SIN && p->mode != COREAI_ROPE_POSITIONS)
        return 0;
    if (p->mode == COREAI_ROPE_POSITIONS && p->pos_dtype >= 0 && p->pos_dtype != COREAI_DTYPE_I32 &&
        p->pos_dtype != COREAI_DTYPE_I64 && p->pos_dtype != COREAI_DTYPE_F32)
        return 0;
    return 1;
}

/* Whether axis a (not the last) is one along which the position of a row
 * changes: extent above 1, and the sequence axis with add_seq_index or an
 * axis the positions operand steps along. */
static inline int coreai_rope_key_axis(const coreai_rope_params *p, int a)
{
    if (p->shape[a] <= 1)
        return 0;
    if (p->add_seq_index && a == p->rank - 2)
        return 1;
    return p->pos_dtype >= 0 && p->pos_strides[a] != 0;
}

/* Bytes of scratch coreai_rope_f32 needs: 0 in COS_SIN mode, else
 * (R/2 + n_positions * R) floats, n_positions the product of the extents of
 * the key axes; (size_t)-1 for invalid params. Inline, so coreai-gen plans
 * the scratch with this very code. */
static inline size_t coreai_rope_scratch_size(const coreai_rope_params *params)
{
    if (!coreai_rope_params_valid(params))
        return (size_t)-1;
    if (params->mode == COREAI_ROPE_COS_SIN)
        return 0;
    const int64_t rot = params->rotary_dims;
    int64_t keys = 1;
    for (int a = params->rank - 2; a >= 0; --a) {
        if (!coreai_rope_key_axis(params, a))
            continue;
        if (keys > INT64_MAX / params->shape[a])
            return (size_t)-1;
        keys *= params->shape[a];
    }
    if (keys > (INT64_MAX / (int64_t)sizeof(float) - rot) / rot)
        return (size_t)-1;
    const uint64_t floats = (uint64_t)(rot / 2 + keys * rot);
    if (floats > SIZE_MAX / sizeof(float))
        return (size_t)-1;
    return (size_t)floats * sizeof(float);
}

/* cos/sin are read in COS_SIN mode only, positions/freqs in POSITIONS mode
 * only (each may be NULL when unused). scratch must hold at least
 * coreai_rope_scratch_size(params) bytes, aligned for float. */
coreai_status coreai_rope_f32(const coreai_rope_params *params, const float *x, const float *cos,
                              const float *sin, const void *positions, const float *freqs,
                              void *scratch, size_t scratch_bytes, float *out);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_KERNELS_ROPE_H */
