/*
 * The placement sweeps' tree of live blocks (generator/src/block_tree.c)
 * against a naive oracle written here: the blocks kept in a plain array,
 * sorted and scanned from offset 0 for the first gap of the size asked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>
#include <talloc.h>

#include "block_tree.h"

typedef struct naive_block {
    uint64_t offset, size;
} naive_block;

static int cmp_offset(const void *a, const void *b)
{
    const naive_block *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static uint64_t naive_first_fit(naive_block *blocks, size_t n, uint64_t size)
{
    qsort(blocks, n, sizeof blocks[0], cmp_offset);
    uint64_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (blocks[i].offset >= at + size)
            break;
        if (blocks[i].offset + blocks[i].size > at)
            at = blocks[i].offset + blocks[i].size;
    }
    return at;
}

static bool naive_free(const naive_block *blocks, size_t n, uint64_t offset, uint64_t size)
{
    for (size_t i = 0; i < n; i++) {
        if (offset < blocks[i].offset + blocks[i].size && blocks[i].offset < offset + size)
            return false;
    }
    return true;
}

/* xorshift64: the same sequence on every run */
static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_empty_and_small(void **state)
{
    (void)state;
    cg_block_tree *t = cg_block_tree_new(NULL, 4);
    assert_non_null(t);
    assert_int_equal(cg_block_tree_first_fit(t, 64), 0);
    assert_true(cg_block_tree_insert(t, 64, 64));  /* [64, 128) */
    assert_int_equal(cg_block_tree_first_fit(t, 64), 0);  /* the gap before it */
    assert_int_equal(cg_block_tree_first_fit(t, 65), 128);
    assert_true(cg_block_tree_insert(t, 0, 64));   /* [0, 64) */
    assert_true(cg_block_tree_insert(t, 192, 64)); /* [192, 256): a gap of 64 at 128 */
    assert_int_equal(cg_block_tree_first_fit(t, 64), 128);
    assert_int_equal(cg_block_tree_first_fit(t, 65), 256);
    assert_true(cg_block_tree_insert(t, 1000, 8));
    assert_false(cg_block_tree_insert(t, 2000, 8)); /* beyond the capacity of 4 */
    cg_block_tree_remove(t, 64);
    cg_block_tree_remove(t, 12345); /* not held: nothing happens */
    assert_int_equal(cg_block_tree_first_fit(t, 128), 64);  /* [64, 192) */
    assert_int_equal(cg_block_tree_first_fit(t, 129), 256);
    cg_block_tree_remove(t, 0);
    cg_block_tree_remove(t, 192);
    cg_block_tree_remove(t, 1000);
    assert_int_equal(cg_block_tree_first_fit(t, 1), 0);
    talloc_free(t);
}

/* Offsets in the top bits: the crit-bit tree splits on bit 63 too. */
static void test_high_offsets(void **state)
{
    (void)state;
    cg_block_tree *t = cg_block_tree_new(NULL, 8);
    uint64_t top = UINT64_C(1) << 63;
    assert_true(cg_block_tree_insert(t, top, 16));
    assert_true(cg_block_tree_insert(t, 0, top - 8)); /* a gap of 8 below top */
    assert_int_equal(cg_block_tree_first_fit(t, 8), top - 8);
    assert_int_equal(cg_block_tree_first_fit(t, 9), top + 16);
    assert_true(cg_block_tree_insert(t, UINT64_MAX - 4, 4));
    assert_int_equal(cg_block_tree_first_fit(t, 16), top + 16);
    talloc_free(t);
}

/* Random inserts (at random free places or at the first fit, as the sweeps
 * do), removals and queries, checked against the naive scan. */
static void test_random_against_naive(void **state)
{
    (void)state;
    enum { CAP = 300, ROUNDS = 20000 };
    for (int run = 0; run < 4; run++) {
        uint64_t seed = 0x9e3779b97f4a7c15u + (uint64_t)run;
        /* small offsets (dense, many adjacent blocks) or spread over 2^40 */
        uint64_t span = run % 2 ? UINT64_C(1) << 40 : 4096;
        cg_block_tree *t = cg_block_tree_new(NULL, CAP);
        naive_block blocks[CAP];
        size_t n = 0;
        for (int r = 0; r < ROUNDS; r++) {
            uint64_t op = next(&seed) % 8;
            uint64_t size = 1 + next(&seed) % (span / 64);
            if (op < 3 && n < CAP) {
                uint64_t at = naive_first_fit(blocks, n, size);
                assert_int_equal(cg_block_tree_first_fit(t, size), at);
                assert_true(cg_block_tree_insert(t, at, size));
                blocks[n++] = (naive_block){at, size};
            } else if (op < 5 && n < CAP) {
                uint64_t at = next(&seed) % span;
                if (naive_free(blocks, n, at, size)) {
                    assert_true(cg_block_tree_insert(t, at, size));
                    blocks[n++] = (naive_block){at, size};
                }
            } else if (op < 7 && n > 0) {
                size_t i = (size_t)(next(&seed) % n);
                cg_block_tree_remove(t, blocks[i].offset);
                blocks[i] = blocks[--n];
            } else {
                assert_int_equal(cg_block_tree_first_fit(t, size), naive_first_fit(blocks, n, size));
            }
        }
        while (n > 0) {
            cg_block_tree_remove(t, blocks[--n].offset);
            assert_int_equal(cg_block_tree_first_fit(t, 7), naive_first_fit(blocks, n, 7));
        }
        cg_block_tree_clear(t);
        assert_int_equal(cg_block_tree_first_fit(t, 1), 0);
        talloc_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_and_small),
        cmocka_unit_test(test_high_offsets),
        cmocka_unit_test(test_random_against_naive),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
