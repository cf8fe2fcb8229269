#include <talloc.h>

#include "block_tree.h"

#define NIL SIZE_MAX

typedef struct node {
    uint64_t lo, hi; /* the lowest offset and the highest end of the subtree (a leaf: its block) */
    uint64_t gap;    /* the widest gap between consecutive blocks of the subtree; 0 in a leaf */
    int bit;         /* inner node: the highest bit in which its two subtrees' offsets differ; leaf: -1 */
    size_t child[2]; /* inner node: offsets with that bit 0, 1; a free node links through child[0] */
} node;

struct cg_block_tree {
    node *nodes; /* a fixed pool: n blocks take n leaves and n - 1 inner nodes */
    size_t cap, used, free_list, root;
};

/* Offsets differ in at most 64 bits, and the bits of inner nodes strictly
 * decrease from the root down. */
enum { MAX_PATH = 64 };

cg_block_tree *cg_block_tree_new(void *mem_ctx, size_t capacity)
{
    cg_block_tree *t = talloc_zero(mem_ctx, cg_block_tree);
    if (t == NULL)
        return NULL;
    t->cap = capacity > 0 ? 2 * capacity - 1 : 0;
    t->nodes = talloc_array(t, node, t->cap + 1);
    if (t->nodes == NULL) {
        talloc_free(t);
        return NULL;
    }
    cg_block_tree_clear(t);
    return t;
}

void cg_block_tree_clear(cg_block_tree *t)
{
    t->used = 0;
    t->free_list = NIL;
    t->root = NIL;
}

static size_t node_new(cg_block_tree *t)
{
    if (t->free_list != NIL) {
        size_t n = t->free_list;
        t->free_list = t->nodes[n].child[0];
        return n;
    }
    return t->used < t->cap ? t->used++ : NIL;
}

static void node_free(cg_block_tree *t, size_t n)
{
    t->nodes[n].child[0] = t->free_list;
    t->free_list = n;
}

static void pull(cg_block_tree *t, size_t n)
{
    node *x = &t->nodes[n];
    const node *a = &t->nodes[x->child[0]], *b = &t->nodes[x->child[1]];
    x->lo = a->lo;
    x->hi = b->hi;
    uint64_t between = b->lo - a->hi; /* the blocks are disjoint: b->lo >= a->hi */
    x->gap = a->gap > b->gap ? a->gap : b->gap;
    if (between > x->gap)
        x->gap = between;
}

static unsigned bit_of(uint64_t key, int bit) { return (unsigned)((key >> bit) & 1u); }

bool cg_block_tree_insert(cg_block_tree *t, uint64_t offset, uint64_t size)
{
    size_t leaf = node_new(t);
    if (leaf == NIL)
        return false;
    t->nodes[leaf] = (node){.lo = offset, .hi = offset + size, .gap = 0, .bit = -1, .child = {NIL, NIL}};
    if (t->root == NIL) {
        t->root = leaf;
        return true;
    }
    /* any leaf the search for offset reaches shares its bits above the
     * highest bit in which offset differs from every held offset */
    size_t n = t->root;
    while (t->nodes[n].bit >= 0)
        n = t->nodes[n].child[bit_of(offset, t->nodes[n].bit)];
    uint64_t diff = t->nodes[n].lo ^ offset;
    size_t inner = diff != 0 ? node_new(t) : NIL;
    if (inner == NIL) {
        node_free(t, leaf);
        return false;
    }
    int d = 63 - __builtin_clzll(diff);
    size_t path[MAX_PATH], depth = 0;
    size_t *slot = &t->root;
    while (t->nodes[*slot].bit > d) {
        path[depth++] = *slot;
        slot = &t->nodes[*slot].child[bit_of(offset, t->nodes[*slot].bit)];
    }
    unsigned side = bit_of(offset, d);
    t->nodes[inner].bit = d;
    t->nodes[inner].child[side] = leaf;
    t->nodes[inner].child[1 - side] = *slot;
    *slot = inner;
    pull(t, inner);
    while (depth > 0)
        pull(t, path[--depth]);
    return true;
}

void cg_block_tree_remove(cg_block_tree *t, uint64_t offset)
{
    if (t->root == NIL)
        return;
    size_t path[MAX_PATH + 1], depth = 0;
    size_t n = t->root;
    while (t->nodes[n].bit >= 0) {
        path[depth++] = n;
        n = t->nodes[n].child[bit_of(offset, t->nodes[n].bit)];
    }
    if (t->nodes[n].lo != offset)
        return;
    if (depth == 0) {
        t->root = NIL;
        node_free(t, n);
        return;
    }
    size_t parent = path[--depth];
    size_t sibling = t->nodes[parent].child[t->nodes[parent].child[0] == n ? 1 : 0];
    if (depth == 0) {
        t->root = sibling;
    } else {
        node *up = &t->nodes[path[depth - 1]];
        up->child[up->child[0] == parent ? 0 : 1] = sibling;
    }
    node_free(t, n);
    node_free(t, parent);
    while (depth > 0)
        pull(t, path[--depth]);
}

uint64_t cg_block_tree_first_fit(const cg_block_tree *t, uint64_t size)
{
    if (t->root == NIL || t->nodes[t->root].lo >= size)
        return 0;
    size_t n = t->root;
    if (t->nodes[n].gap < size)
        return t->nodes[n].hi;
    /* n's subtree has a gap of size bytes: the lowest one is in its first
     * child, between the children, or in its second child */
    for (;;) {
        const node *a = &t->nodes[t->nodes[n].child[0]], *b = &t->nodes[t->nodes[n].child[1]];
        if (a->gap >= size)
            n = t->nodes[n].child[0];
        else if (b->lo - a->hi >= size)
            return a->hi;
        else
            n = t->nodes[n].child[1];
    }
}
