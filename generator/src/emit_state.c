/*
 * emit_state.c - NAME_state_init(): the states' initial values, as the model
 * file records them (format 3 <init>), written into the caller's NAME_state.
 *
 * A stored value is copied from its constant-table array (in whichever
 * weights form the others use); a fill value is written by a loop, so a
 * zeroed KV cache costs no bytes of weights. The descriptor's init_state
 * reaches the same code by state name, for generic drivers (the runner, the
 * Python runtime).
 */
#include <inttypes.h>

#include <talloc.h>

#include "cname.h"
#include "emit_internal.h"

bool cg_emit_state_init(cg_emit_ctx *ec, cg_text *decls, cg_text *defs, const char **init_fn)
{
    const cg_state_list *list = ec->low->states;
    *init_fn = "NULL";
    if (!list->all_init)
        return true;
    const char *p = ec->prefix;
    cg_text_printf(decls,
        "/* Writes every state's initial value (the value the model file records:\n"
        " * the buffer or sample input at export) into *state. Call it before the\n"
        " * first call of a sequence; COREAI_STATUS_INVALID_ARGUMENT for NULL. */\n"
        "coreai_status %s_state_init(%s_state *state);\n\n", p, p);

    for (size_t i = 0; i < list->n; i++) {
        const cg_program_state *s = &list->items[i];
        const char *ct = cg_c_type(s->type->dtype);
        const int64_t n = cg_type_numel(s->type);
        cg_text_printf(defs, "/* the initial value of state \"%s\" */\nstatic void %s_init_s%zu(%s *dst)\n{\n",
                       s->name, p, i, ct);
        if (n == 0) {
            cg_text_puts(defs, "    (void)dst;\n");
        } else if (s->init->fill) {
            char lit[32];
            cg_emit_element_literal(lit, s->type->dtype, s->init->value->data);
            cg_text_printf(defs, "    for (size_t i = 0; i < %" PRId64 "u; i++)\n        dst[i] = %s;\n", n, lit);
        } else {
            const cg_const_entry *e = cg_const_table_find_state(ec->low->consts, i);
            if (e == NULL) {
                cg_diag_error(ec->diag, s->init->line, "internal error: state '%s' has no constant-table entry",
                              s->name);
                return false;
            }
            cg_text_printf(defs, "    for (size_t i = 0; i < %" PRId64 "u; i++)\n        dst[i] = %s[i];\n", n,
                           e->symbol);
        }
        cg_text_puts(defs, "}\n\n");
    }

    cg_text_printf(defs, "coreai_status %s_state_init(%s_state *state)\n{\n"
                         "    if (state == NULL)\n        return COREAI_STATUS_INVALID_ARGUMENT;\n", p, p);
    for (size_t i = 0; i < list->n; i++) {
        char *c = cg_cname(ec->mem_ctx, list->items[i].name);
        cg_text_printf(defs, "    %s_init_s%zu(state->%s);\n", p, i, c);
    }
    cg_text_puts(defs, "    return COREAI_STATUS_OK;\n}\n\n");

    /* by name, for the descriptor: no <string.h> needed on a bare-metal target */
    cg_text_printf(defs, "static int %s_name_is(const char *a, const char *b)\n{\n"
                         "    while (*a != '\\0' && *a == *b) {\n        a++;\n        b++;\n    }\n"
                         "    return *a == *b;\n}\n\n", p);
    cg_text_printf(defs, "static coreai_status %s_init_state(const char *name, void *data)\n{\n"
                         "    if (name == NULL || data == NULL)\n        return COREAI_STATUS_INVALID_ARGUMENT;\n", p);
    for (size_t i = 0; i < list->n; i++) {
        const cg_program_state *s = &list->items[i];
        cg_text_printf(defs, "    if (%s_name_is(name, \"%s\")) {\n        %s_init_s%zu((%s *)data);\n"
                             "        return COREAI_STATUS_OK;\n    }\n",
                       p, s->name, p, i, cg_c_type(s->type->dtype));
    }
    cg_text_puts(defs, "    return COREAI_STATUS_INVALID_ARGUMENT;\n}\n\n");
    *init_fn = talloc_asprintf(ec->mem_ctx, "%s_init_state", p);
    return *init_fn != NULL;
}
