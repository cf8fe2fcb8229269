/*
 * state_init.c - the program's states and their initial values (state_init.h).
 */
#include <string.h>

#include <talloc.h>

#include "state_init.h"
#include "symtab.h"

/* Element i of an initial value (a fill value has only element 0). */
static const uint8_t *element(const cg_state_init *s, size_t i, size_t es)
{
    return s->fill ? s->value->data : s->value->data + i * es;
}

bool cg_state_init_equal(const cg_state_init *a, const cg_state_init *b)
{
    const size_t es = cg_dtype_size(a->value->type.dtype);
    if (a->fill && b->fill)
        return memcmp(a->value->data, b->value->data, es) == 0;
    const int64_t n = cg_type_numel(&a->value->type);
    for (int64_t i = 0; i < n; i++) {
        if (memcmp(element(a, (size_t)i, es), element(b, (size_t)i, es), es) != 0)
            return false;
    }
    return true;
}

cg_state_list *cg_state_list_build(void *mem_ctx, const cg_module *m, cg_diag *diag)
{
    size_t total = 0;
    for (size_t ei = 0; ei < m->n_entrypoints; ei++)
        total += m->entrypoints[ei]->n_states;
    cg_state_list *list = talloc_zero(mem_ctx, cg_state_list);
    cg_symtab *by_name = cg_symtab_new(list);
    if (list)
        list->items = talloc_zero_array(list, cg_program_state, total + 1);
    if (!list || !by_name || !list->items) {
        cg_diag_error(diag, 0, "out of memory");
        talloc_free(list);
        return NULL;
    }
    for (size_t ei = 0; ei < m->n_entrypoints; ei++) {
        const cg_entrypoint *e = m->entrypoints[ei];
        for (size_t i = 0; i < e->n_states; i++) {
            const cg_type *t = &e->graph->args[i]->type;
            const cg_state_init *init = e->state_inits ? e->state_inits[i] : NULL;
            cg_program_state *known = cg_symtab_get(by_name, e->states[i], NULL);
            if (known == NULL) {
                known = &list->items[list->n++];
                *known = (cg_program_state){e->states[i], t, init};
                if (!cg_symtab_put(by_name, e->states[i], known, 0)) {
                    cg_diag_error(diag, e->line, "out of memory");
                    talloc_free(list);
                    return NULL;
                }
                continue;
            }
            if (!cg_type_equal(known->type, t)) {
                cg_diag_error(diag, e->line, "state '%s' is %s in entrypoint '%s' but %s in another entrypoint",
                              e->states[i], cg_type_to_string(list, t), e->name,
                              cg_type_to_string(list, known->type));
                talloc_free(list);
                return NULL;
            }
            if (init == NULL)
                continue;
            if (known->init != NULL && !cg_state_init_equal(known->init, init)) {
                cg_diag_error(diag, init->line, "state '%s': the initial value in entrypoint '%s' differs from "
                              "the one an earlier entrypoint gives (a state has one initial value)",
                              e->states[i], e->name);
                talloc_free(list);
                return NULL;
            }
            known->init = init;
        }
    }
    list->all_init = list->n > 0;
    for (size_t i = 0; i < list->n; i++)
        list->all_init = list->all_init && list->items[i].init != NULL;
    talloc_free(by_name);
    return list;
}
