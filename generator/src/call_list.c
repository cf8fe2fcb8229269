/*
 * call_list.c - the kernel-call list of a graph function (call_list.h).
 */
#include <talloc.h>

#include "call_list.h"

cg_call *cg_call_list_add(cg_call_list *list, const cg_call *call)
{
    if (list->n == list->cap) {
        size_t cap = list->cap ? 2 * list->cap : 8;
        cg_call *bigger = talloc_realloc(list, list->calls, cg_call, cap);
        if (bigger == NULL)
            return NULL;
        list->calls = bigger;
        list->cap = cap;
    }
    list->calls[list->n] = *call;
    return &list->calls[list->n++];
}

bool cg_call_list_reads_consts(const cg_call_list *list)
{
    for (size_t i = 0; i < list->n; i++) {
        if (list->calls[i].n_consts > 0)
            return true;
    }
    return false;
}

bool cg_call_list_calls_graphs(const cg_call_list *list)
{
    for (size_t i = 0; i < list->n; i++) {
        if (list->calls[i].graph_call)
            return true;
    }
    return false;
}
