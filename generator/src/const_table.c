/*
 * const_table.c - the final constant table (const_table.h).
 */
#include <string.h>

#include <talloc.h>

#include "const_table.h"
#include "pack.h"
#include "qlinear.h"

static uint64_t load_le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void store_le(uint8_t *p, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static char *symbol(void *mem, const char *prefix, size_t graph, size_t index, cg_const_layout layout)
{
    static const char *const suffix[] = {"", "_packed_kn", "_packed_nk", "_q8a", "_q8a_scale", "_wino2", "_wino4", "_packed_conv"};
    return talloc_asprintf(mem, "%s_g%zu_c%zu%s", prefix, graph, index, suffix[layout]);
}

/* The packing of a packed layout. */
static cg_pack_kind pack_kind_of(cg_const_layout layout)
{
    return layout == CG_CONST_PACKED_KN ? CG_PACK_KN : layout == CG_CONST_PACKED_CONV ? CG_PACK_CONV : CG_PACK_NK;
}

/* Elements of a constant's array: its bytes when packed (sub-byte dtypes
 * are arrays of the bytes of their bit stream). */
static int64_t elements(const cg_type *type)
{
    return cg_dtype_is_subbyte(type->dtype) ? (int64_t)cg_type_bytes(type) : cg_type_numel(type);
}

/* A new entry at the end of t (zeroed), or NULL when out of memory. */
static cg_const_entry *append(cg_const_table *t, size_t *cap)
{
    if (t->n == *cap) {
        *cap *= 2;
        cg_const_entry *bigger = talloc_realloc(t, t->entries, cg_const_entry, *cap);
        if (bigger == NULL)
            return NULL;
        t->entries = bigger;
    }
    cg_const_entry *e = &t->entries[t->n];
    *e = (cg_const_entry){0};
    return e;
}

/* Places e (bytes set) after *end at a multiple of t->align; false on overflow. */
static bool place(cg_const_table *t, cg_const_entry *e, uint64_t *end)
{
    uint64_t at = (*end + t->align - 1) / t->align * t->align;
    if (e->symbol == NULL || at < *end || at + e->bytes < at)
        return false;
    e->offset = at;
    *end = at + e->bytes;
    return true;
}

cg_const_table *cg_const_table_build(void *mem_ctx, const cg_program_plan *plan, const char *prefix,
                                     uint64_t align)
{
    cg_const_table *t = talloc_zero(mem_ctx, cg_const_table);
    if (t == NULL)
        return NULL;
    t->align = align;
    t->first = talloc_zero_array(t, size_t *, plan->n_graphs + 1);
    size_t cap = 16;
    t->entries = talloc_array(t, cg_const_entry, cap);
    if (t->first == NULL || t->entries == NULL)
        goto fail;
    uint64_t end = 0;
    for (size_t g = 0; g < plan->n_graphs; g++) {
        const cg_graph_plan *gp = plan->graphs[g];
        const size_t n_consts = gp->graph->n_consts;
        t->first[g] = talloc_array(t, size_t, n_consts + 1);
        if (t->first[g] == NULL)
            goto fail;
        for (size_t c = 0; c < n_consts; c++) {
            t->first[g][c] = SIZE_MAX;
            if (gp->use_kernel)
                continue; /* the kernel call reads no constant of its body */
            const cg_value *v = gp->graph->consts[c];
            const unsigned forms = cg_plan_const_form_bits(gp, c); /* 0 for a duplicate */
            t->data_bytes += cg_plan_const_bytes(gp, c);
            static const unsigned want[] = {CG_CONST_FORM_KN,          CG_CONST_FORM_NK,    CG_CONST_FORM_Q8A_WEIGHT,
                                            CG_CONST_FORM_Q8A_SCALE,   CG_CONST_FORM_WINO2, CG_CONST_FORM_WINO4,
                                            CG_CONST_FORM_CONV,        CG_CONST_FORM_PLAIN};
            static const cg_const_layout layouts[] = {CG_CONST_PACKED_KN, CG_CONST_PACKED_NK, CG_CONST_Q8A_WEIGHT,
                                                      CG_CONST_Q8A_SCALE, CG_CONST_WINO2,     CG_CONST_WINO4,
                                                      CG_CONST_PACKED_CONV, CG_CONST_PLAIN};
            _Static_assert(sizeof want / sizeof want[0] == sizeof layouts / sizeof layouts[0], "a layout per form");
            for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
                if (!(forms & want[k]))
                    continue;
                cg_const_entry *e = append(t, &cap);
                if (e == NULL)
                    goto fail;
                *e = (cg_const_entry){.gp = gp, .const_index = c, .value = v, .layout = layouts[k]};
                e->symbol = symbol(t, prefix, gp->index, c, layouts[k]);
                if (layouts[k] == CG_CONST_PLAIN) {
                    e->dtype = v->type.dtype;
                    e->count = elements(&v->type);
                } else if (layouts[k] == CG_CONST_Q8A_WEIGHT || layouts[k] == CG_CONST_Q8A_SCALE) {
                    /* bytes whatever the format (the kernel takes uint8_t; a 4-bit
                     * panel holds two integers a byte) */
                    const bool scale = layouts[k] == CG_CONST_Q8A_SCALE;
                    coreai_linear_q_params p;
                    cg_qlinear_panel_const_params(v, scale, &p);
                    e->dtype = scale ? CG_DTYPE_F32 : CG_DTYPE_U8;
                    e->count = scale ? coreai_linear_q8a_scale_count(&p) : coreai_linear_q8a_weight_bytes(&p);
                    e->pack_matrices = 1;
                    e->pack_k = scale ? p.in_features / p.block : p.in_features;
                    e->pack_n = p.out_features;
                } else if (layouts[k] == CG_CONST_WINO2 || layouts[k] == CG_CONST_WINO4) {
                    const int m = layouts[k] == CG_CONST_WINO4 ? 4 : 2;
                    e->dtype = CG_DTYPE_F32;
                    e->count = cg_pack_winograd_floats(v, m);
                    e->pack_matrices = (m + 2) * (m + 2);
                    e->pack_k = v->type.dims[1];
                    e->pack_n = v->type.dims[0];
                } else {
                    const cg_pack_kind kind = pack_kind_of(layouts[k]);
                    e->dtype = CG_DTYPE_F32;
                    e->count = cg_pack_floats(v, kind);
                    cg_pack_dims(v, kind, &e->pack_k, &e->pack_n, &e->pack_matrices);
                }
                if (e->count < 1) {
                    e->count = 1;
                    e->empty = true;
                }
                e->bytes = (uint64_t)e->count * cg_dtype_size(e->dtype);
                if (!place(t, e, &end))
                    goto fail;
                if (t->first[g][c] == SIZE_MAX)
                    t->first[g][c] = t->n;
                t->n++;
            }
        }
    }
    t->blob_size = end;
    t->cap = cap;
    t->n_graph_entries = t->n;
    return t;
fail:
    talloc_free(t);
    return NULL;
}

const cg_const_entry *cg_const_table_find(const cg_const_table *t, const cg_graph_plan *gp, size_t const_index,
                                          cg_const_layout layout)
{
    size_t g = gp->index, c = const_index;
    if (gp->const_canon_graph) {
        /* a duplicate's copy (a constant that is its own copy maps to itself) */
        g = gp->const_canon_graph[const_index];
        c = gp->const_canon_index[const_index];
    }
    for (size_t i = t->first[g][c]; i < t->n_graph_entries; i++) {
        const cg_const_entry *e = &t->entries[i];
        if (e->gp->index != g || e->const_index != c)
            break;
        if (e->layout == layout)
            return e;
    }
    return NULL;
}

bool cg_const_table_add_states(cg_const_table *t, const cg_state_list *states, const char *prefix)
{
    uint64_t end = t->blob_size;
    for (size_t i = 0; i < states->n; i++) {
        const cg_state_init *init = states->items[i].init;
        if (init == NULL || init->fill)
            continue;
        cg_const_entry *e = append(t, &t->cap);
        if (e == NULL)
            return false;
        const cg_value *v = init->value;
        *e = (cg_const_entry){.const_index = i, .value = v, .layout = CG_CONST_PLAIN, .dtype = v->type.dtype,
                              .count = elements(&v->type)};
        e->symbol = talloc_asprintf(t, "%s_s%zu_init", prefix, i);
        if (e->count < 1) {
            e->count = 1;
            e->empty = true;
        }
        e->bytes = (uint64_t)e->count * cg_dtype_size(e->dtype);
        if (!place(t, e, &end))
            return false;
        t->data_bytes += cg_type_bytes(&v->type);
        t->n++;
    }
    t->blob_size = end;
    return true;
}

const cg_const_entry *cg_const_table_find_state(const cg_const_table *t, size_t state_index)
{
    for (size_t i = t->n_graph_entries; i < t->n; i++) {
        if (t->entries[i].const_index == state_index)
            return &t->entries[i];
    }
    return NULL;
}

static void element(uint8_t *dst, cg_dtype dtype, const uint8_t *src, size_t es)
{
    if (dtype == CG_DTYPE_F32) {
        uint32_t bits = (uint32_t)load_le(src, 4);
        if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x7fffffu) != 0)
            bits = 0x7fc00000u;
        store_le(dst, bits, 4);
    } else if (dtype == CG_DTYPE_BOOL) {
        dst[0] = src[0] ? 1 : 0;
    } else {
        memcpy(dst, src, es);
    }
}

/* The q8a panels (qlinear.h) of data or scale constant v; dst zeroed, so
 * the padding outputs are zero integers with zero scales. */
static void fill_q8a(const cg_value *v, bool scale, uint8_t *dst)
{
    coreai_linear_q_params p;
    cg_qlinear_panel_const_params(v, scale, &p);
    const int64_t in = p.in_features, blocks = p.in_features / p.block;
    if (scale) {
        for (int64_t o = 0; o < p.out_features; o++)
            for (int64_t b = 0; b < blocks; b++)
                element(dst + (size_t)coreai_linear_q8a_scale_pos(&p, o, b) * 4, CG_DTYPE_F32,
                        v->data + (size_t)(o * blocks + b) * 4, 4);
        return;
    }
    const cg_dtype d = v->type.dtype;
    for (int64_t o = 0; o < p.out_features; o++) {
        for (int64_t i = 0; i < in; i++) {
            const int64_t q = cg_int_element(d, v->data, o * in + i);
            int shift;
            const int64_t at = coreai_linear_q8a_weight_pos(&p, o, i, &shift);
            dst[(size_t)at] |= (uint8_t)(d == CG_DTYPE_I8 ? q & 0xff : (q & 15) << shift);
        }
    }
}

bool cg_const_entry_fill(const cg_const_entry *e, uint8_t *dst)
{
    const cg_value *v = e->value;
    memset(dst, 0, (size_t)e->bytes);
    if (e->layout == CG_CONST_PLAIN) {
        const int64_t n = elements(&v->type);
        const size_t es = cg_dtype_size(v->type.dtype);
        for (int64_t i = 0; i < n; i++)
            element(dst + (size_t)i * es, v->type.dtype, v->data + (size_t)i * es, es);
        return true;
    }
    if (e->layout == CG_CONST_Q8A_WEIGHT || e->layout == CG_CONST_Q8A_SCALE) {
        fill_q8a(v, e->layout == CG_CONST_Q8A_SCALE, dst);
        return true;
    }
    if (e->layout == CG_CONST_WINO2 || e->layout == CG_CONST_WINO4) {
        if (!cg_pack_winograd_fill(v, e->layout == CG_CONST_WINO4 ? 4 : 2, dst))
            return false;
        for (int64_t i = 0; i < e->count; i++) /* one NaN, as the other forms' */
            element(dst + (size_t)i * 4, CG_DTYPE_F32, dst + (size_t)i * 4, 4);
        return true;
    }
    const cg_pack_kind kind = pack_kind_of(e->layout);
    const int64_t total = cg_pack_floats(v, kind);
    for (int64_t i = 0; i < total; i++) {
        const int64_t src = cg_pack_source_index(v, kind, i);
        if (src >= 0)
            element(dst + (size_t)i * 4, CG_DTYPE_F32, v->data + (size_t)src * 4, 4);
    }
    return true;
}
