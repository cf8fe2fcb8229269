/*
 * load_symtab.c - a small open-addressing hash table from names to objects.
 *
 * Graphs of converted models have thousands of SSA values; a linear scan per
 * operand would make loading quadratic.
 */
#include <string.h>

#include <talloc.h>

#include "load_internal.h"

typedef struct cg_symtab_slot {
    const char *key; /* NULL: empty */
    void *value;
    int line;
} cg_symtab_slot;

struct cg_symtab {
    size_t count;
    size_t cap;      /* power of two */
    cg_symtab_slot *slots;
};

/* FNV-1a: simple, and good enough for identifiers */
static uint64_t cg_symtab_hash(const char *key)
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)key; *p != '\0'; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    return h;
}

cg_symtab *cg_symtab_new(void *mem_ctx)
{
    cg_symtab *t = talloc_zero(mem_ctx, cg_symtab);
    if (t == NULL)
        return NULL;
    t->cap = 64;
    t->slots = talloc_zero_array(t, cg_symtab_slot, t->cap);
    if (t->slots == NULL) {
        talloc_free(t);
        return NULL;
    }
    return t;
}

static cg_symtab_slot *cg_symtab_find(cg_symtab_slot *slots, size_t cap, const char *key)
{
    size_t i = (size_t)cg_symtab_hash(key) & (cap - 1);
    while (slots[i].key != NULL && strcmp(slots[i].key, key) != 0)
        i = (i + 1) & (cap - 1);
    return &slots[i];
}

void *cg_symtab_get(const cg_symtab *table, const char *key, int *line)
{
    cg_symtab_slot *s = cg_symtab_find(table->slots, table->cap, key);
    if (s->key == NULL)
        return NULL;
    if (line != NULL)
        *line = s->line;
    return s->value;
}

static bool cg_symtab_grow(cg_symtab *table)
{
    size_t cap = table->cap * 2;
    cg_symtab_slot *slots = talloc_zero_array(table, cg_symtab_slot, cap);
    if (slots == NULL)
        return false;
    for (size_t i = 0; i < table->cap; i++) {
        if (table->slots[i].key != NULL)
            *cg_symtab_find(slots, cap, table->slots[i].key) = table->slots[i];
    }
    talloc_free(table->slots);
    table->slots = slots;
    table->cap = cap;
    return true;
}

bool cg_symtab_put(cg_symtab *table, const char *key, void *value, int line)
{
    /* keep the load factor at or below one half so probes stay short */
    if ((table->count + 1) * 2 > table->cap && !cg_symtab_grow(table))
        return false;
    cg_symtab_slot *s = cg_symtab_find(table->slots, table->cap, key);
    if (s->key == NULL)
        table->count++;
    s->key = key;
    s->value = value;
    s->line = line;
    return true;
}
