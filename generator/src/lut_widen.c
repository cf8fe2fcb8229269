/*
 * lut_widen.c - half-precision palettes widened to f32 (lut_widen.h).
 */
#include <string.h>

#include <talloc.h>

#include "dce.h"
#include "ir_half.h"
#include "lut_widen.h"

static bool kind_is(const cg_op *op, const char *k) { return strcmp(op->kind, k) == 0; }

static bool half_dtype(cg_dtype d) { return d == CG_DTYPE_F16 || d == CG_DTYPE_BF16; }

/* The cast to f32 that alone reads op's result, or NULL when op is not a
 * lookup this pass rewrites. */
static cg_op *widenable(const cg_op *op)
{
    if (!kind_is(op, "coreai.lut_to_dense") || op->n_operands != 2 || op->n_results != 1)
        return NULL;
    const cg_value *lut = op->operands[1], *r = op->results[0];
    if (lut->kind != CG_VALUE_CONST || !half_dtype(lut->type.dtype) || lut->n_uses != 1 || lut->is_output ||
        r->type.dtype != lut->type.dtype || r->n_uses != 1 || r->is_output || r->last_user == NULL)
        return NULL;
    cg_op *cast = r->last_user;
    if (!kind_is(cast, "coreai.cast") || cast->n_operands != 1 || cast->n_results != 1 ||
        cast->results[0]->type.dtype != CG_DTYPE_F32 || cast->results[0]->is_output)
        return NULL;
    return cast;
}

/* lut's elements as f32 (little-endian, as the weights file holds them). */
static uint8_t *widened(void *mem, const cg_value *lut, size_t n)
{
    uint8_t *out = talloc_array(mem, uint8_t, n * 4 + 1);
    if (out == NULL)
        return NULL;
    const bool bf16 = lut->type.dtype == CG_DTYPE_BF16;
    for (size_t i = 0; i < n; i++) {
        const uint16_t h = (uint16_t)(lut->data[2 * i] | lut->data[2 * i + 1] << 8);
        const float f = (float)(bf16 ? cg_bf16_to_double(h) : cg_half_to_double(h));
        uint32_t bits;
        memcpy(&bits, &f, 4);
        for (int b = 0; b < 4; b++)
            out[4 * i + (size_t)b] = (uint8_t)(bits >> (8 * b));
    }
    return out;
}

static size_t graph_widen_luts(cg_module *m, cg_graph *g)
{
    size_t done = 0;
    for (size_t i = 0; i < g->n_ops; i++) {
        cg_op *op = g->ops[i], *cast = widenable(op);
        if (cast == NULL)
            continue;
        cg_value *lut = op->operands[1], *r = op->results[0], *c = cast->results[0];
        const size_t n = (size_t)cg_type_numel(&lut->type);
        if (lut->data_size != 2 * n)
            continue; /* not loaded as stored: leave it to the general path */
        uint8_t *data = widened(m, lut, n);
        if (data == NULL)
            return (size_t)-1;
        lut->data = data;
        lut->data_size = 4 * n;
        lut->type.dtype = CG_DTYPE_F32;
        r->type.dtype = CG_DTYPE_F32;
        /* the cast's readers read the lookup (the cast still does: dce.h
         * removes it and recounts the last readers) */
        cg_graph_replace_uses(g, c, r);
        done++;
    }
    return done;
}

size_t cg_module_widen_luts(cg_module *m)
{
    size_t done = 0;
    for (size_t i = 0; i < m->n_graphs; i++) {
        const size_t n = graph_widen_luts(m, m->graphs[i]);
        if (n == (size_t)-1)
            return n;
        done += n;
    }
    return done;
}
