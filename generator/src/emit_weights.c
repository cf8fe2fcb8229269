#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <talloc.h>

#include "coreai/runtime.h"
#include "emit_internal.h"
#include "pack.h"

static uint64_t load_le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* The weights file is most of the output: a growing buffer with doubling
 * capacity (talloc'd, so the result is an ordinary talloc string), not one
 * talloc_asprintf_append per number, which reallocates and copies the whole
 * text every time under ASan and valgrind. NULL after running out of memory. */
typedef struct wbuf {
    char *s;
    size_t len, cap;
} wbuf;

static void wb_reserve(wbuf *b, size_t more)
{
    if (b->s == NULL || b->len + more + 1 <= b->cap)
        return;
    size_t cap = b->cap;
    while (cap < b->len + more + 1)
        cap = cap <= SIZE_MAX / 2 ? cap * 2 : SIZE_MAX;
    char *bigger = talloc_realloc(NULL, b->s, char, cap);
    if (bigger == NULL) {
        talloc_free(b->s);
        b->s = NULL;
        return;
    }
    b->s = bigger;
    b->cap = cap;
}

static void wb_puts(wbuf *b, const char *text)
{
    size_t n = strlen(text);
    wb_reserve(b, n);
    if (b->s == NULL)
        return;
    memcpy(b->s + b->len, text, n + 1);
    b->len += n;
}

static void wb_printf(wbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wb_printf(wbuf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        talloc_free(b->s);
        b->s = NULL;
        return;
    }
    if ((size_t)n < sizeof small) {
        wb_puts(b, small);
        return;
    }
    wb_reserve(b, (size_t)n);
    if (b->s == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* One element of a constant as a C literal. */
static void element_literal(char buf[32], cg_dtype dtype, const uint8_t *p)
{
    switch (dtype) {
    case CG_DTYPE_F32:
        cg_c_literal_f32(buf, (uint32_t)load_le(p, 4));
        break;
    case CG_DTYPE_F16:
    case CG_DTYPE_BF16:
        snprintf(buf, 32, "0x%04" PRIx64 "u", load_le(p, 2));
        break;
    case CG_DTYPE_I64: {
        int64_t v = (int64_t)load_le(p, 8);
        if (v == INT64_MIN)
            snprintf(buf, 32, "INT64_MIN");
        else
            snprintf(buf, 32, "INT64_C(%" PRId64 ")", v);
        break;
    }
    case CG_DTYPE_I32: {
        int32_t v = (int32_t)(uint32_t)load_le(p, 4);
        if (v == INT32_MIN)
            snprintf(buf, 32, "INT32_MIN");
        else
            snprintf(buf, 32, "%" PRId32, v);
        break;
    }
    default:
        snprintf(buf, 32, "%u", p[0] ? 1u : 0u);
        break;
    }
}

/* Symbol of the packed form of a constant (pack.h): SYMBOL_packed_kn / _nk. */
char *cg_emit_packed_symbol(void *mem_ctx, const char *const_symbol, int kind)
{
    return talloc_asprintf(mem_ctx, "%s_packed_%s", const_symbol, kind == CG_PACK_KN ? "kn" : "nk");
}

char *cg_emit_weight_decls(cg_emit_ctx *ec)
{
    char *s = talloc_strdup(ec->mem_ctx, "");
    for (size_t g = 0; g < ec->plan->n_graphs; g++) {
        const cg_graph_plan *gp = ec->plan->graphs[g];
        if (gp->use_kernel)
            continue;
        for (size_t c = 0; c < gp->graph->n_consts; c++) {
            const cg_value *v = gp->graph->consts[c];
            char *sym = cg_emit_const_symbol(ec->mem_ctx, ec->prefix, gp, c);
            bool plain, kn, nk;
            cg_plan_const_forms(gp, c, &plain, &kn, &nk); /* all false for a duplicate */
            if (plain)
                s = talloc_asprintf_append_buffer(s, "extern const %s %s[%" PRId64 "];\n", cg_c_type(v->type.dtype),
                                                  sym, cg_type_numel(&v->type) > 0 ? cg_type_numel(&v->type) : 1);
            for (int kind = CG_PACK_KN; kind <= CG_PACK_NK; kind++) {
                if (!(kind == CG_PACK_KN ? kn : nk))
                    continue;
                int64_t n = cg_pack_floats(v, (cg_pack_kind)kind);
                s = talloc_asprintf_append_buffer(s, "extern const float %s[%" PRId64 "];\n",
                                                  cg_emit_packed_symbol(ec->mem_ctx, sym, kind), n > 0 ? n : 1);
            }
        }
    }
    return s;
}

/* The packed form of an f32 constant: its k x n matrices (B as the GEMM
 * reads it) in the runtime's 16-column panels, zero-padded. */
static void packed_def(cg_emit_ctx *ec, wbuf *s, const cg_graph_plan *gp, const cg_value *v, const char *sym,
                       cg_pack_kind kind)
{
    int64_t k, n, count;
    cg_pack_dims(v, kind, &k, &n, &count);
    const int64_t total = cg_pack_floats(v, kind);
    char *type = cg_type_to_string(ec->mem_ctx, &v->type);
    wb_printf(s, "/* %%%s of @%s: %s, packed for the GEMM: %" PRId64 " matri%s B of %"
                                      PRId64 " x %" PRId64 "%s in panels of %d columns */\n"
                                      "COREAI_ALIGNED(COREAI_ALIGNMENT) const float %s[%" PRId64 "] = {",
                                      v->id, gp->graph->name, type, count, count == 1 ? "x" : "ces", k, n,
                                      kind == CG_PACK_NK ? " (stored transposed)" : "", CG_PACK_NR,
                                      cg_emit_packed_symbol(ec->mem_ctx, sym, kind), total > 0 ? total : 1);
    for (int64_t i = 0; i < total; i++) {
        char lit[32];
        const int64_t src = cg_pack_source_index(v, kind, i);
        if (src < 0)
            snprintf(lit, sizeof lit, "0.0f");
        else
            element_literal(lit, CG_DTYPE_F32, v->data + (size_t)src * 4);
        wb_puts(s, i % 8 == 0 ? "\n    " : " ");
        wb_puts(s, lit);
        if (i + 1 < total)
            wb_puts(s, ",");
    }
    if (total == 0)
        wb_puts(s, "0");
    wb_puts(s, "\n};\n\n");
}

char *cg_emit_weight_defs(cg_emit_ctx *ec, uint64_t *total)
{
    wbuf b = {.s = talloc_array(ec->mem_ctx, char, 4096), .cap = 4096};
    wbuf *s = &b;
    if (b.s != NULL)
        b.s[0] = '\0';
    *total = 0;
    for (size_t g = 0; g < ec->plan->n_graphs; g++) {
        const cg_graph_plan *gp = ec->plan->graphs[g];
        if (gp->use_kernel)
            continue;
        for (size_t c = 0; c < gp->graph->n_consts; c++) {
            const cg_value *v = gp->graph->consts[c];
            bool plain, kn, nk;
            cg_plan_const_forms(gp, c, &plain, &kn, &nk);
            char *sym = cg_emit_const_symbol(ec->mem_ctx, ec->prefix, gp, c);
            if (kn)
                packed_def(ec, s, gp, v, sym, CG_PACK_KN);
            if (nk)
                packed_def(ec, s, gp, v, sym, CG_PACK_NK);
            *total += cg_plan_const_bytes(gp, c);
            if (!plain)
                continue;
            int64_t n = cg_type_numel(&v->type);
            size_t es = cg_dtype_size(v->type.dtype);
            char *type = cg_type_to_string(ec->mem_ctx, &v->type);
            wb_printf(s, "/* %%%s of @%s: %s */\nCOREAI_ALIGNED(COREAI_ALIGNMENT) const %s %s[%" PRId64 "] = {",
                                              v->id, gp->graph->name, type, cg_c_type(v->type.dtype),
                                              cg_emit_const_symbol(ec->mem_ctx, ec->prefix, gp, c), n > 0 ? n : 1);
            for (int64_t i = 0; i < n; i++) {
                char lit[32];
                element_literal(lit, v->type.dtype, v->data + (size_t)i * es);
                wb_puts(s, i % 8 == 0 ? "\n    " : " ");
                wb_puts(s, lit);
                if (i + 1 < n)
                    wb_puts(s, ",");
            }
            if (n == 0)
                wb_puts(s, "0");
            wb_puts(s, "\n};\n\n");
        }
    }
    return b.s;
}

/* ---- --weights-format incbin: the constants as one binary blob ---- */

/* The bytes the C initializer of one element describes: f32 as its bits
 * (every NaN is the NAN the initializer writes, 0x7fc00000), bool as 0/1,
 * the rest as stored (little-endian, like the model's weights file). */
static void element_bytes(uint8_t *dst, cg_dtype dtype, const uint8_t *p, size_t es)
{
    if (dtype == CG_DTYPE_F32) {
        uint32_t bits = (uint32_t)load_le(p, 4);
        if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x7fffffu) != 0)
            bits = 0x7fc00000u;
        for (int i = 0; i < 4; i++)
            dst[i] = (uint8_t)(bits >> (8 * i));
    } else if (dtype == CG_DTYPE_BOOL) {
        dst[0] = p[0] ? 1 : 0;
    } else {
        memcpy(dst, p, es);
    }
}

/* One symbol of the blob: its bytes (written by fill) at offset. */
typedef struct blob_sym {
    const cg_graph_plan *gp;
    const cg_value *v;
    int kind; /* -1: plain, else cg_pack_kind */
    char *sym;
    uint64_t offset, size;
} blob_sym;

static void fill(uint8_t *dst, const blob_sym *b)
{
    const cg_value *v = b->v;
    if (b->kind < 0) {
        const int64_t n = cg_type_numel(&v->type);
        const size_t es = cg_dtype_size(v->type.dtype);
        for (int64_t i = 0; i < n; i++)
            element_bytes(dst + (size_t)i * es, v->type.dtype, v->data + (size_t)i * es, es);
        return; /* an empty constant is one zero element, as {0} */
    }
    const int64_t total = cg_pack_floats(v, (cg_pack_kind)b->kind);
    for (int64_t i = 0; i < total; i++) {
        const int64_t src = cg_pack_source_index(v, (cg_pack_kind)b->kind, i);
        if (src >= 0)
            element_bytes(dst + (size_t)i * 4, CG_DTYPE_F32, v->data + (size_t)src * 4, 4);
    }
}

char *cg_emit_weight_incbin(cg_emit_ctx *ec, const cg_emit_options *opt, const char *banner,
                            unsigned char **blob, size_t *blob_size, uint64_t *total)
{
    *blob = NULL;
    *blob_size = 0;
    *total = 0;
    const uint16_t probe = 1;
    uint8_t first;
    memcpy(&first, &probe, 1);
    if (first != 1) {
        cg_diag_error(ec->diag, 0, "--weights-format incbin writes the weights in the host's byte order and "
                                   "needs a little-endian host (use --weights-format c)");
        return NULL;
    }
    const char *section = opt->weights_section ? opt->weights_section : ".rodata.coreai_weights";
    const uint64_t align = opt->weights_align ? opt->weights_align : COREAI_ALIGNMENT;
    const char *bin_name = talloc_asprintf(ec->mem_ctx, "%s_weights.bin", ec->prefix);

    /* 1. layout: every symbol NAME.c declares, in the same order */
    size_t n_syms = 0, cap = 16;
    blob_sym *syms = talloc_array(ec->mem_ctx, blob_sym, cap);
    uint64_t offset = 0;
    for (size_t g = 0; syms && g < ec->plan->n_graphs; g++) {
        const cg_graph_plan *gp = ec->plan->graphs[g];
        if (gp->use_kernel)
            continue;
        for (size_t c = 0; syms && c < gp->graph->n_consts; c++) {
            const cg_value *v = gp->graph->consts[c];
            bool forms[3];
            cg_plan_const_forms(gp, c, &forms[0], &forms[1], &forms[2]);
            char *sym = cg_emit_const_symbol(ec->mem_ctx, ec->prefix, gp, c);
            *total += cg_plan_const_bytes(gp, c);
            /* the C path's order: packed kn, packed nk, plain */
            const int kinds[3] = {CG_PACK_KN, CG_PACK_NK, -1};
            const bool want[3] = {forms[1], forms[2], forms[0]};
            for (int k = 0; k < 3; k++) {
                if (!want[k])
                    continue;
                if (n_syms == cap) {
                    cap *= 2;
                    syms = talloc_realloc(ec->mem_ctx, syms, blob_sym, cap);
                    if (!syms)
                        break;
                }
                blob_sym *b = &syms[n_syms++];
                b->gp = gp;
                b->v = v;
                b->kind = kinds[k];
                if (kinds[k] < 0) {
                    const int64_t n = cg_type_numel(&v->type);
                    b->sym = sym;
                    b->size = (uint64_t)(n > 0 ? n : 1) * cg_dtype_size(v->type.dtype);
                } else {
                    const int64_t n = cg_pack_floats(v, (cg_pack_kind)kinds[k]);
                    b->sym = cg_emit_packed_symbol(ec->mem_ctx, sym, kinds[k]);
                    b->size = (uint64_t)(n > 0 ? n : 1) * sizeof(float);
                }
                offset = (offset + align - 1) / align * align;
                b->offset = offset;
                offset += b->size;
            }
        }
    }
    if (!syms || offset > SIZE_MAX) {
        cg_diag_error(ec->diag, 0, "out of memory laying out the weights");
        return NULL;
    }

    /* 2. the blob: zero padding between the symbols */
    uint8_t *bytes = calloc(offset > 0 ? (size_t)offset : 1, 1);
    if (bytes == NULL) {
        cg_diag_error(ec->diag, 0, "out of memory: the weights blob needs %" PRIu64 " bytes", offset);
        return NULL;
    }
    for (size_t i = 0; i < n_syms; i++)
        fill(bytes + syms[i].offset, &syms[i]);

    /* 3. the source that links it */
    wbuf b = {.s = talloc_array(ec->mem_ctx, char, 4096), .cap = 4096};
    if (b.s != NULL)
        b.s[0] = '\0';
    wb_puts(&b, banner);
    wb_printf(&b,
              "/*\n"
              " * The constants are the bytes of %s (%" PRIu64 " bytes, each at a multiple of %" PRIu64
              "),\n"
              " * linked into section %s by the assembler's .incbin: the assembler must\n"
              " * find the file (-Wa,-I,<this directory>; coreai_add_model(... WEIGHTS_FORMAT incbin)\n"
              " * adds it). GNU as syntax for ELF targets (GCC, Clang); generate with\n"
              " * --weights-format c for other compilers and object formats.\n"
              " */\n"
              "#if defined(__APPLE__)\n"
              "#error \"%s_weights.c: --weights-format incbin emits ELF assembler directives; Mach-O is not "
              "supported (generate with --weights-format c)\"\n"
              "#elif !defined(__ELF__)\n"
              "#error \"%s_weights.c: --weights-format incbin needs an ELF target (generate with "
              "--weights-format c)\"\n"
              "#endif\n"
              "#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__\n"
              "#error \"%s_weights.c: %s is little-endian; this target is not (generate with "
              "--weights-format c)\"\n"
              "#endif\n\n",
              bin_name, offset, align, section, ec->prefix, ec->prefix, ec->prefix, bin_name);
    if (n_syms == 0) {
        wb_puts(&b, "/* the model has no constants */\n");
        wb_printf(&b, "typedef int %s_no_weights;\n", ec->prefix);
    } else {
        /* One .incbin of the whole blob, the symbols equated to offsets in
         * it: an assembler reads the file once per .incbin (Clang 14 keeps
         * every copy), so one directive per constant would cost the blob's
         * size times the number of constants. */
        wb_printf(&b,
                  "__asm__(\n"
                  "    \".pushsection %s,\\\"a\\\",%%progbits\\n\"\n"
                  "    \".balign %" PRIu64 "\\n\"\n"
                  "    \".Lcoreai_%s_weights:\\n\"\n",
                  section, align, ec->prefix);
        for (size_t i = 0; i < n_syms; i++) {
            const blob_sym *s = &syms[i];
            char *type = cg_type_to_string(ec->mem_ctx, &s->v->type);
            if (s->kind < 0)
                wb_printf(&b, "    /* %%%s of @%s: %s */\n", s->v->id, s->gp->graph->name, type);
            else
                wb_printf(&b, "    /* %%%s of @%s: %s, packed for the GEMM (%s) */\n", s->v->id,
                          s->gp->graph->name, type, s->kind == CG_PACK_NK ? "stored transposed" : "k x n");
            wb_printf(&b,
                      "    \".globl %s\\n\"\n"
                      "    \".type %s, %%object\\n\"\n"
                      "    \".set %s, .Lcoreai_%s_weights + %" PRIu64 "\\n\"\n"
                      "    \".size %s, %" PRIu64 "\\n\"\n",
                      s->sym, s->sym, s->sym, ec->prefix, s->offset, s->sym, s->size);
        }
        wb_printf(&b,
                  "    \".incbin \\\"%s\\\", 0, %" PRIu64 "\\n\"\n"
                  "    \".popsection\\n\");\n",
                  bin_name, offset);
    }
    if (b.s == NULL) {
        free(bytes);
        cg_diag_error(ec->diag, 0, "out of memory writing the weights source");
        return NULL;
    }
    *blob = bytes;
    *blob_size = (size_t)offset;
    return b.s;
}
