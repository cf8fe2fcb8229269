#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <talloc.h>

#include "coreai/kernels/linear_q.h"
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

void cg_emit_element_literal(char buf[32], cg_dtype dtype, const uint8_t *p)
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
    case CG_DTYPE_I8:
        snprintf(buf, 32, "%d", p[0] < 128 ? (int)p[0] : (int)p[0] - 256);
        break;
    case CG_DTYPE_BOOL:
        snprintf(buf, 32, "%u", p[0] ? 1u : 0u);
        break;
    case CG_DTYPE_U8:
    case CG_DTYPE_I4:
    case CG_DTYPE_U4:
    case CG_DTYPE_U1:
    case CG_DTYPE_U2:
    case CG_DTYPE_U6: /* u8, or a byte of a packed sub-byte constant */
        snprintf(buf, 32, "0x%02xu", (unsigned)p[0]);
        break;
    default:
        snprintf(buf, 32, "%u", p[0] ? 1u : 0u);
        break;
    }
}

/* The entries of one constant: [*i, end). */
static size_t group_end(const cg_const_table *t, size_t i)
{
    size_t j = i + 1;
    while (j < t->n && t->entries[j].gp == t->entries[i].gp && t->entries[j].const_index == t->entries[i].const_index)
        j++;
    return j;
}

char *cg_emit_weight_decls(cg_emit_ctx *ec)
{
    const cg_const_table *t = ec->low->consts;
    const bool external = ec->format == CG_WEIGHTS_EXTERNAL;
    char *s = external ? talloc_strdup(ec->mem_ctx,
                                       "/* Constants: offsets in the weights the entrypoints take, which every graph\n"
                                       " * function gets as coreai_w. */\n")
                       : talloc_asprintf(ec->mem_ctx, "/* Constants, defined in %s_weights.c. */\n", ec->prefix);
    for (size_t i = 0; i < t->n;) {
        const size_t end = group_end(t, i);
        /* a constant as stored first, then its packed forms */
        for (int pass = 0; pass < 2; pass++) {
            for (size_t k = i; k < end; k++) {
                const cg_const_entry *e = &t->entries[k];
                if ((e->layout == CG_CONST_PLAIN) != (pass == 0))
                    continue;
                if (external)
                    s = talloc_asprintf_append_buffer(s, "#define %s ((const %s *)(coreai_w + %" PRIu64 "))\n", e->symbol,
                                                      cg_c_type(e->dtype), e->offset);
                else
                    s = talloc_asprintf_append_buffer(s, "extern const %s %s[%" PRId64 "];\n", cg_c_type(e->dtype),
                                                      e->symbol, e->count);
            }
        }
        i = end;
    }
    return s;
}

/* The hex of a SHA-256. */
static char *hex_digest(void *mem, const unsigned char sha256[32])
{
    char *s = talloc_array(mem, char, 65);
    for (int i = 0; s && i < 32; i++)
        snprintf(s + 2 * i, 3, "%02x", sha256[i]);
    return s;
}

char *cg_emit_external_header(cg_emit_ctx *ec, const char *upper, const unsigned char sha256[32])
{
    const cg_const_table *t = ec->low->consts;
    return talloc_asprintf(
        ec->mem_ctx,
        "/* The weights are not linked in: every entrypoint takes them as `weights`,\n"
        " * the bytes of %s_weights.bin (%s_WEIGHTS_SIZE bytes, SHA-256\n"
        " * %s_WEIGHTS_SHA256) at an address aligned to %s_WEIGHTS_ALIGNMENT: a\n"
        " * mapped file, an XIP flash address, a buffer the application filled. Check\n"
        " * them once with %s_weights_check() before the first call; an entrypoint\n"
        " * only checks that the pointer is aligned. */\n"
        "#define %s_WEIGHTS_SIZE %" PRIu64 "u\n"
        "#define %s_WEIGHTS_ALIGNMENT %" PRIu64 "u\n"
        "#define %s_WEIGHTS_SHA256 \"%s\"\n\n"
        "/* COREAI_STATUS_OK when `weights` (`size` bytes) are that blob;\n"
        " * COREAI_STATUS_BAD_WEIGHTS when their size or SHA-256 differ (other weights,\n"
        " * a damaged copy); COREAI_STATUS_INVALID_ARGUMENT for NULL or a misaligned\n"
        " * address. It reads every byte. */\n"
        "coreai_status %s_weights_check(const void *weights, size_t size);\n",
        ec->prefix, upper, upper, upper, ec->prefix, upper, t->blob_size, upper, t->align, upper,
        hex_digest(ec->mem_ctx, sha256), ec->prefix);
}

char *cg_emit_external_defs(cg_emit_ctx *ec, const unsigned char sha256[32])
{
    const cg_const_table *t = ec->low->consts;
    char *bytes = talloc_strdup(ec->mem_ctx, "");
    for (int i = 0; i < 32; i++)
        bytes = talloc_asprintf_append_buffer(bytes, "%s0x%02x", i == 0 ? "" : i % 8 == 0 ? ",\n     " : ", ",
                                              sha256[i]);
    return talloc_asprintf(ec->mem_ctx,
                           "\nstatic const coreai_weights_desc %s_weights_desc = {\n"
                           "    %" PRIu64 "u,\n    %" PRIu64 "u,\n    {%s},\n};\n\n"
                           "coreai_status %s_weights_check(const void *weights, size_t size)\n{\n"
                           "    return coreai_weights_check(&%s_weights_desc, weights, size);\n}\n",
                           ec->prefix, t->blob_size, t->align, bytes, ec->prefix, ec->prefix);
}

/* The comment above an entry's definition. */
static void entry_comment(cg_emit_ctx *ec, wbuf *s, const cg_const_entry *e)
{
    char *type = cg_type_to_string(ec->mem_ctx, &e->value->type);
    if (e->gp == NULL) {
        wb_printf(s, "/* the initial value of state \"%s\": %s */\n", ec->low->states->items[e->const_index].name,
                  type);
        return;
    }
    if (e->layout == CG_CONST_PLAIN) {
        wb_printf(s, "/* %%%s of @%s: %s */\n", e->value->id, e->gp->graph->name, type);
        return;
    }
    if (e->layout == CG_CONST_Q8A_WEIGHT || e->layout == CG_CONST_Q8A_SCALE) {
        const bool scale = e->layout == CG_CONST_Q8A_SCALE;
        wb_printf(s,
                  "/* %%%s of @%s: %s, its %s in the kernels' panels (coreai/kernels/linear_q.h): %" PRId64
                  " outputs in panels of %d, %" PRId64 " %s each */\n",
                  e->value->id, e->gp->graph->name, type, scale ? "scales" : "integers", e->pack_n,
                  COREAI_LINEAR_Q8A_NR, e->pack_k, scale ? "blocks" : "inputs");
        return;
    }
    if (e->layout == CG_CONST_WINO2 || e->layout == CG_CONST_WINO4) {
        wb_printf(s,
                  "/* %%%s of @%s: %s, transformed for Winograd F(%dx%d, 3x3) (coreai/kernels/conv.h): %" PRId64
                  " patch positions of %" PRId64 " x %" PRId64 " */\n",
                  e->value->id, e->gp->graph->name, type, e->layout == CG_CONST_WINO4 ? 4 : 2,
                  e->layout == CG_CONST_WINO4 ? 4 : 2, e->pack_matrices, e->pack_n, e->pack_k);
        return;
    }
    wb_printf(s, "/* %%%s of @%s: %s, packed for the GEMM: %" PRId64 " matri%s B of %" PRId64 " x %" PRId64
                 "%s in panels of %d columns */\n",
              e->value->id, e->gp->graph->name, type, e->pack_matrices, e->pack_matrices == 1 ? "x" : "ces", e->pack_k,
              e->pack_n, e->layout == CG_CONST_PACKED_NK ? " (stored transposed)" : "", CG_PACK_NR);
}

char *cg_emit_weight_defs(cg_emit_ctx *ec)
{
    const cg_const_table *t = ec->low->consts;
    wbuf b = {.s = talloc_array(ec->mem_ctx, char, 4096), .cap = 4096};
    wbuf *s = &b;
    if (b.s != NULL)
        b.s[0] = '\0';
    for (size_t i = 0; i < t->n && b.s != NULL; i++) {
        const cg_const_entry *e = &t->entries[i];
        uint8_t *bytes = malloc((size_t)e->bytes);
        if (bytes == NULL) {
            talloc_free(b.s);
            return NULL;
        }
        if (!cg_const_entry_fill(e, bytes)) {
            free(bytes);
            talloc_free(b.s);
            return NULL;
        }
        entry_comment(ec, s, e);
        wb_printf(s, "COREAI_ALIGNED(COREAI_ALIGNMENT) const %s %s[%" PRId64 "] = {", cg_c_type(e->dtype), e->symbol,
                  e->count);
        const size_t es = cg_dtype_size(e->dtype);
        for (int64_t k = 0; k < e->count && !e->empty; k++) {
            char lit[32];
            cg_emit_element_literal(lit, e->dtype, bytes + (size_t)k * es);
            wb_puts(s, k % 8 == 0 ? "\n    " : " ");
            wb_puts(s, lit);
            if (k + 1 < e->count)
                wb_puts(s, ",");
        }
        free(bytes);
        if (e->empty)
            wb_puts(s, "0");
        wb_puts(s, "\n};\n\n");
    }
    return b.s;
}

/* ---- --weights-format incbin: the constants as one binary blob ---- */

unsigned char *cg_emit_weight_blob(cg_emit_ctx *ec)
{
    const cg_const_table *t = ec->low->consts;
    if (t->blob_size > SIZE_MAX) {
        cg_diag_error(ec->diag, 0, "the weights blob (%" PRIu64 " bytes) does not fit in this host's memory",
                      t->blob_size);
        return NULL;
    }
    /* zero padding between the entries */
    unsigned char *bytes = calloc(t->blob_size > 0 ? (size_t)t->blob_size : 1, 1);
    if (bytes == NULL) {
        cg_diag_error(ec->diag, 0, "out of memory: the weights blob needs %" PRIu64 " bytes", t->blob_size);
        return NULL;
    }
    for (size_t i = 0; i < t->n; i++) {
        if (!cg_const_entry_fill(&t->entries[i], bytes + t->entries[i].offset)) {
            cg_diag_error(ec->diag, 0, "out of memory: the Winograd weights of %s", t->entries[i].symbol);
            free(bytes);
            return NULL;
        }
    }
    return bytes;
}

/* Splits the blob at entry boundaries into chunks of at most limit bytes
 * (an entry larger than limit is a chunk of its own): the number of chunks,
 * and their entries and byte ranges into out (when not NULL). A chunk ends
 * where the next begins, so the chunks' bytes are the blob's, padding
 * included. */
static size_t split_chunks(const cg_const_table *t, uint64_t limit, cg_weight_chunk *out)
{
    size_t n = 0, first = 0;
    for (size_t i = 1; i <= t->n; i++) {
        const bool last = i == t->n;
        if (!last && t->entries[i].offset + t->entries[i].bytes - t->entries[first].offset <= limit)
            continue;
        if (out)
            out[n] = (cg_weight_chunk){first, i, t->entries[first].offset, last ? t->blob_size : t->entries[i].offset};
        n++;
        first = i;
    }
    return n;
}

cg_weight_chunk *cg_emit_weight_chunks(cg_emit_ctx *ec, const cg_emit_options *opt, size_t *n_chunks)
{
    const cg_const_table *t = ec->low->consts;
    uint64_t limit = opt->weights_chunk_size ? opt->weights_chunk_size : CG_WEIGHTS_CHUNK_SIZE;
    size_t n = t->n > 0 ? split_chunks(t, limit, NULL) : 1;
    if (opt->weights_chunks > 0 && n > opt->weights_chunks) {
        /* fewer files than chunks of that size: the smallest limit that
         * fits them (the count only falls as the limit grows) */
        uint64_t lo = limit, hi = t->blob_size;
        while (lo < hi) {
            const uint64_t mid = lo + (hi - lo) / 2;
            if (split_chunks(t, mid, NULL) <= opt->weights_chunks)
                hi = mid;
            else
                lo = mid + 1;
        }
        limit = lo;
        n = split_chunks(t, limit, NULL);
    }
    const size_t files = opt->weights_chunks > n ? opt->weights_chunks : n;
    cg_weight_chunk *c = talloc_zero_array(ec->mem_ctx, cg_weight_chunk, files);
    if (c == NULL) {
        cg_diag_error(ec->diag, 0, "out of memory");
        return NULL;
    }
    if (t->n > 0)
        split_chunks(t, limit, c);
    /* the files beyond the chunks are empty: no entry, no byte */
    for (size_t k = n; k < files; k++)
        c[k] = (cg_weight_chunk){t->n, t->n, t->blob_size, t->blob_size};
    *n_chunks = files;
    return c;
}

char *cg_emit_weight_chunk_name(void *ctx, const char *prefix, size_t k, const char *ext)
{
    return k == 0 ? talloc_asprintf(ctx, "%s_weights.%s", prefix, ext)
                  : talloc_asprintf(ctx, "%s_weights_%zu.%s", prefix, k, ext);
}

char *cg_emit_weight_incbin(cg_emit_ctx *ec, const cg_emit_options *opt, const char *banner,
                            const cg_weight_chunk *chunk, size_t k, size_t n_chunks)
{
    const cg_const_table *t = ec->low->consts;
    const char *section = opt->weights_section ? opt->weights_section : ".rodata.coreai_weights";
    const uint64_t align = t->align, offset = chunk->stop - chunk->start;
    const char *bin_name = cg_emit_weight_chunk_name(ec->mem_ctx, ec->prefix, k, "bin");
    const char *src_name = cg_emit_weight_chunk_name(ec->mem_ctx, ec->prefix, k, "c");
    /* chunk 0 of one keeps the names of an unsplit blob */
    const char *label = k == 0 ? talloc_asprintf(ec->mem_ctx, ".Lcoreai_%s_weights", ec->prefix)
                               : talloc_asprintf(ec->mem_ctx, ".Lcoreai_%s_weights_%zu", ec->prefix, k);

    wbuf b = {.s = talloc_array(ec->mem_ctx, char, 4096), .cap = 4096};
    if (b.s != NULL)
        b.s[0] = '\0';
    wb_puts(&b, banner);
    if (n_chunks > 1)
        wb_printf(&b,
                  "/* Chunk %zu of %zu: the weights are split at constant boundaries into files of\n"
                  " * at most %" PRIu64 " bytes (a larger constant is a chunk of its own), each\n"
                  " * linked by its own source, so that one assembler holds one chunk. */\n",
                  k, n_chunks, opt->weights_chunk_size ? opt->weights_chunk_size : (uint64_t)CG_WEIGHTS_CHUNK_SIZE);
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
              "#error \"%s: --weights-format incbin emits ELF assembler directives; Mach-O is not "
              "supported (generate with --weights-format c)\"\n"
              "#elif !defined(__ELF__)\n"
              "#error \"%s: --weights-format incbin needs an ELF target (generate with "
              "--weights-format c)\"\n"
              "#endif\n"
              "#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__\n"
              "#error \"%s: %s is little-endian; this target is not (generate with "
              "--weights-format c)\"\n"
              "#endif\n\n",
              bin_name, offset, align, section, src_name, src_name, src_name, bin_name);
    if (t->n == 0) {
        wb_puts(&b, "/* the model has no constants */\n");
        wb_printf(&b, "typedef int %s_no_weights;\n", ec->prefix);
    } else if (chunk->first == chunk->end) {
        wb_puts(&b, "/* no constant: the build was configured for more chunk files than the weights need */\n");
        wb_printf(&b, "typedef int %s_no_weights_%zu;\n", ec->prefix, k);
    } else {
        /* One .incbin of the whole chunk, the symbols equated to offsets in
         * it: an assembler reads the file once per .incbin (Clang 14 keeps
         * every copy), so one directive per constant would cost the chunk's
         * size times the number of its constants. */
        wb_printf(&b,
                  "__asm__(\n"
                  "    \".pushsection %s,\\\"a\\\",%%progbits\\n\"\n"
                  "    \".balign %" PRIu64 "\\n\"\n"
                  "    \"%s:\\n\"\n",
                  section, align, label);
        for (size_t i = chunk->first; i < chunk->end; i++) {
            const cg_const_entry *e = &t->entries[i];
            char *type = cg_type_to_string(ec->mem_ctx, &e->value->type);
            if (e->gp == NULL)
                wb_printf(&b, "    /* the initial value of state %s: %s */\n",
                          cg_emit_comment_text(ec->mem_ctx, ec->low->states->items[e->const_index].name), type);
            else if (e->layout == CG_CONST_PLAIN)
                wb_printf(&b, "    /* %%%s of @%s: %s */\n", e->value->id, e->gp->graph->name, type);
            else if (e->layout == CG_CONST_Q8A_WEIGHT || e->layout == CG_CONST_Q8A_SCALE)
                wb_printf(&b, "    /* %%%s of @%s: %s, in the kernels' panels (coreai/kernels/linear_q.h) */\n", e->value->id,
                          e->gp->graph->name, type);
            else if (e->layout == CG_CONST_WINO2 || e->layout == CG_CONST_WINO4)
                wb_printf(&b, "    /* %%%s of @%s: %s, transformed for Winograd F(%dx%d, 3x3) */\n", e->value->id,
                          e->gp->graph->name, type, e->layout == CG_CONST_WINO4 ? 4 : 2,
                          e->layout == CG_CONST_WINO4 ? 4 : 2);
            else
                wb_printf(&b, "    /* %%%s of @%s: %s, packed for the GEMM (%s) */\n", e->value->id,
                          e->gp->graph->name, type, e->layout == CG_CONST_PACKED_NK ? "stored transposed" : "k x n");
            wb_printf(&b,
                      "    \".globl %s\\n\"\n"
                      "    \".type %s, %%object\\n\"\n"
                      "    \".set %s, %s + %" PRIu64 "\\n\"\n"
                      "    \".size %s, %" PRIu64 "\\n\"\n",
                      e->symbol, e->symbol, e->symbol, label, e->offset - chunk->start, e->symbol, e->bytes);
        }
        wb_printf(&b,
                  "    \".incbin \\\"%s\\\", 0, %" PRIu64 "\\n\"\n"
                  "    \".popsection\\n\");\n",
                  bin_name, offset);
    }
    if (b.s == NULL)
        cg_diag_error(ec->diag, 0, "out of memory writing the weights source");
    return b.s;
}
