/* coreai_rope_f32: rotary position embedding, cos/sin given or from positions. */
#include "isa_names.h" /* first: renames this file's functions per ISA variant */
#include "coreai/kernels/rope.h"

#include <math.h>
#include <string.h>

#include "parallel.h"
#include "vmath.h"

/* Dense strides of the position table over the key axes; returns the number
 * of distinct positions, or -1 on overflow. */
static int64_t key_layout(const coreai_rope_params *p, int64_t *key_strides)
{
    int64_t n = 1;
    for (int a = p->rank - 2; a >= 0; --a) {
        key_strides[a] = 0;
        if (!coreai_rope_key_axis(p, a))
            continue;
        key_strides[a] = n;
        if (n > INT64_MAX / p->shape[a])
            return -1;
        n *= p->shape[a];
    }
    return n;
}

/* The f32 position of the row at idx (last axis ignored). */
static float row_position(const coreai_rope_params *p, const void *positions, const int64_t *idx)
{
    const int64_t t = p->add_seq_index ? idx[p->rank - 2] : 0;
    if (p->pos_dtype < 0)
        return (float)(p->offset + t);
    int64_t off = 0;
    for (int a = 0; a < p->rank - 1; ++a)
        if (p->shape[a] > 1)
            off += idx[a] * p->pos_strides[a];
    switch (p->pos_dtype) {
    case COREAI_DTYPE_I32:
        return (float)((int64_t)((const int32_t *)positions)[off] + t);
    case COREAI_DTYPE_I64:
        return (float)(((const int64_t *)positions)[off] + t);
    default:
        return ((const float *)positions)[off] + (float)t;
    }
}

/* Fills freq_i * scale and then cos / sin for each distinct position. */
static void fill_table(const coreai_rope_params *p, const void *positions, const float *freqs,
                       float *scratch)
{
    const int64_t half = p->rotary_dims / 2;
    float *fs = scratch;
    for (int64_t i = 0; i < half; ++i) {
        float f;
        if (freqs != NULL)
            f = freqs[i];
        else
            f = coreai_rope_inv_freq(p->base, i, half);
        fs[i] = f * p->scale;
    }
    /* Visit each key once: an odometer over the key axes only. */
    int64_t idx[COREAI_MAX_RANK] = {0};
    int64_t ks[COREAI_MAX_RANK];
    key_layout(p, ks);
    float *row = scratch + half;
    for (;;) {
        /* the f32 angles of this position, their cos / sin in double
         * (vm_sincos_d: the f32 nearest to the double cos / sin) */
        const vm_f pos = vm_bcast(row_position(p, positions, idx));
        vm_f c, sn;
        int64_t i = 0;
        for (; i + VM_VL <= half; i += VM_VL) {
            vm_sincos_d(pos * vm_load(fs + i), &c, &sn);
            vm_store(row + i, c);
            vm_store(row + half + i, sn);
        }
        if (i < half) {
            vm_sincos_d(pos * vm_load_n(fs + i, half - i), &c, &sn);
            vm_store_n(row + i, c, half - i);
            vm_store_n(row + half + i, sn, half - i);
        }
        row += 2 * half;
        int a = p->rank - 2;
        for (; a >= 0; --a) {
            if (!coreai_rope_key_axis(p, a))
                continue;
            if (++idx[a] < p->shape[a])
                break;
            idx[a] = 0;
        }
        if (a < 0)
            break;
    }
}

/* y1 = c x1 - s x2, y2 = s x1 + c x2 in f32. Split-half with contiguous
 * cos / sin runs VM_VL pairs at a time (the last partial vector through the
 * same code); every pair is read before it is written, so out may equal x. */
static inline void rotate_row(const float *x, float *out, int64_t dim, int64_t rot, int interleaved,
                       const float *c, int64_t cstep, const float *s, int64_t sstep)
{
    const int64_t half = rot / 2;
    if (!interleaved && cstep == 1 && sstep == 1) {
        int64_t i = 0;
        for (; i + VM_VL <= half; i += VM_VL) {
            const vm_f x1 = vm_load(x + i), x2 = vm_load(x + half + i);
            const vm_f ci = vm_load(c + i), si = vm_load(s + i);
            vm_store(out + i, ci * x1 - si * x2);
            vm_store(out + half + i, si * x1 + ci * x2);
        }
        if (i < half) {
            const int64_t m = half - i;
            const vm_f x1 = vm_load_n(x + i, m), x2 = vm_load_n(x + half + i, m);
            const vm_f ci = vm_load_n(c + i, m), si = vm_load_n(s + i, m);
            vm_store_n(out + i, ci * x1 - si * x2, m);
            vm_store_n(out + half + i, si * x1 + ci * x2, m);
        }
    } else {
        const int64_t step1 = interleaved ? 2 : 1, off2 = interleaved ? 1 : half;
        for (int64_t i = 0; i < half; ++i) {
            const int64_t i1 = i * step1, i2 = i1 + off2;
            const float x1 = x[i1], x2 = x[i2];
            const float ci = c[i * cstep], si = s[i * sstep];
            out[i1] = ci * x1 - si * x2;
            out[i2] = si * x1 + ci * x2;
        }
    }
    if (dim > rot && out != x)
        memcpy(out + rot, x + rot, (size_t)(dim - rot) * sizeof(float));
}

typedef struct rope_job {
    const coreai_rope_params *p;
    const float *x;
    float *out;
    int64_t dim;
    int64_t cst[COREAI_MAX_RANK], sst[COREAI_MAX_RANK]; /* cos / sin offset per step of each axis */
    const float *cbase, *sbase;
    int64_t cstep, sstep;
} rope_job;

/* Rows [lo, hi): the odometer starts at row lo. */
static void rope_range(void *arg, int64_t lo, int64_t hi)
{
    const rope_job *j = arg;
    const coreai_rope_params *p = j->p;
    int64_t idx[COREAI_MAX_RANK] = {0};
    int64_t co = 0, so = 0;
    for (int64_t a = p->rank - 2, r = lo; a >= 0; --a) {
        idx[a] = r % p->shape[a];
        r /= p->shape[a];
        co += idx[a] * j->cst[a];
        so += idx[a] * j->sst[a];
    }
    for (int64_t r = lo; r < hi; ++r) {
        rotate_row(j->x + r * j->dim, j->out + r * j->dim, j->dim, p->rotary_dims, p->interleaved, j->cbase + co,
                   j->cstep, j->sbase + so, j->sstep);
        for (int a = p->rank - 2; a >= 0; --a) {
            if (++idx[a] < p->shape[a]) {
                co += j->cst[a];
                so += j->sst[a];
                break;
            }
            co -= j->cst[a] * (p->shape[a] - 1);
            so -= j->sst[a] * (p->shape[a] - 1);
            idx[a] = 0;
        }
    }
}

coreai_status coreai_rope_f32(const coreai_rope_params *params, const float *x, const float *cos_in,
                              const float *sin_in, const void *positions, const float *freqs,
                              void *scratch, size_t scratch_bytes, float *out)
{
    if (!coreai_rope_params_valid(params) || x == NULL || out == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const coreai_rope_params *p = params;
    const int pos_mode = p->mode == COREAI_ROPE_POSITIONS;
    if (!pos_mode && (cos_in == NULL || sin_in == NULL))
        return COREAI_STATUS_INVALID_ARGUMENT;
    if (pos_mode && p->pos_dtype >= 0 && positions == NULL)
        return COREAI_STATUS_INVALID_ARGUMENT;
    const size_t need = coreai_rope_scratch_size(p);
    if (need == (size_t)-1 || (need > 0 && (scratch == NULL || scratch_bytes < need)))
        return COREAI_STATUS_INVALID_ARGUMENT;
    int64_t rows = 1;
    for (int a = 0; a < p->rank - 1; ++a) {
        if (p->shape[a] == 0)
            return COREAI_STATUS_OK;
        if (rows > INT64_MAX / p->shape[a])
            return COREAI_STATUS_INVALID_ARGUMENT;
        rows *= p->shape[a];
    }
    const int64_t dim = p->shape[p->rank - 1], rot = p->rotary_dims, half = rot / 2;
    int64_t ks[COREAI_MAX_RANK];
    float *table = NULL;
    if (pos_mode) {
        key_layout(p, ks);
        fill_table(p, positions, freqs, (float *)scratch);
        table = (float *)scratch + half;
    }
    /* Per-row offsets (table row, or cos / sin offsets) carried along with
     * the odometer rather than recomputed from every index: a row here is
     * only a few vectors, so the per-row bookkeeping is what costs. */
    int64_t cst[COREAI_MAX_RANK] = {0}, sst[COREAI_MAX_RANK] = {0};
    for (int a = 0; a < p->rank - 1; ++a) {
        if (pos_mode) {
            cst[a] = sst[a] = ks[a] * rot;
        } else if (p->shape[a] > 1) {
            cst[a] = p->cos_strides[a];
            sst[a] = p->sin_strides[a];
        }
    }
    rope_job j = {p, x, out, dim, {0}, {0}, NULL, NULL, 0, 0};
    memcpy(j.cst, cst, sizeof cst);
    memcpy(j.sst, sst, sizeof sst);
    j.cbase = pos_mode ? table : cos_in;
    j.sbase = pos_mode ? table + half : sin_in;
    j.cstep = pos_mode ? 1 : half > 1 ? p->cos_strides[p->rank - 1] : 0;
    j.sstep = pos_mode ? 1 : half > 1 ? p->sin_strides[p->rank - 1] : 0;
    /* rows are independent: split over threads by rows */
    coreai_par_ranges(rope_range, &j, rows, 1, 3.0 * (double)dim);
    return COREAI_STATUS_OK;
}
