/*
 * block_tree.h - disjoint blocks [offset, end) of a frame, ordered by offset,
 * answering "the lowest offset where a block of n bytes fits" in time bounded
 * by the key width, for the placement sweeps of plan.c (the blocks live at
 * one step of the program are pairwise disjoint).
 *
 * A crit-bit tree on the 64-bit offsets: its depth is at most 65 whatever
 * the offsets, so every operation is a loop over one root-to-leaf path (no
 * balancing, no recursion). Each node keeps the lowest offset, the highest
 * end and the widest gap between consecutive blocks of its subtree.
 */
#ifndef CG_BLOCK_TREE_H
#define CG_BLOCK_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cg_block_tree cg_block_tree;

/* Room for `capacity` blocks at once. NULL when out of memory. */
cg_block_tree *cg_block_tree_new(void *mem_ctx, size_t capacity);
void cg_block_tree_clear(cg_block_tree *t);

/* Adds [offset, offset + size), size > 0, disjoint from every block held
 * and offset + size <= UINT64_MAX. False when beyond the capacity. */
bool cg_block_tree_insert(cg_block_tree *t, uint64_t offset, uint64_t size);
/* Removes the block at `offset` (one that was inserted). */
void cg_block_tree_remove(cg_block_tree *t, uint64_t offset);

/* The lowest offset o >= 0 where [o, o + size) meets no block held. */
uint64_t cg_block_tree_first_fit(const cg_block_tree *t, uint64_t size);

#endif /* CG_BLOCK_TREE_H */
