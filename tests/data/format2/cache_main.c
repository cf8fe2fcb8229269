/*
 * Drives the C generated from cache.xml (prefix m) at several values of its
 * symbols against a naive reference written here from the model's meaning,
 * and checks that a call outside the ranges (or whose window leaves the
 * cache) fails with COREAI_STATUS_INVALID_ARGUMENT and writes nothing: the
 * outputs and the state are filled with a canary beforehand and compared
 * byte for byte afterwards, and the outputs sit inside larger guarded
 * arrays. Prints one line per call; exit status 0 when all checks hold.
 */
#include <stdio.h>
#include <string.h>

#include "m.h"

#define GUARD 16
static COREAI_ALIGNED(COREAI_ALIGNMENT) unsigned char ws[M_WORKSPACE_SIZE + 64];

typedef struct io {
    float upd[4 * 2], past[6], bias[4];
    float seen[GUARD + 8 * 2 + GUARD], tot[GUARD + 4 + GUARD];
    int32_t len[GUARD + 1 + GUARD];
} io;

static int failures;

static void check(int ok, const char *what, long n, long off)
{
    if (!ok) {
        printf("FAIL n=%ld off=%ld: %s\n", n, off, what);
        failures++;
    }
}

static void fill_canary(io *b, m_state *st)
{
    memset(b->seen, 0xA5, sizeof b->seen);
    memset(b->tot, 0xA5, sizeof b->tot);
    memset(b->len, 0xA5, sizeof b->len);
    for (int i = 0; i < 16; i++)
        st->cache[i] = (float)(100 + i); /* rows 0..7, 2 columns */
}

/* Bytes of a guarded array from `from` on still hold the canary. */
static int canary_from(const void *base, size_t from, size_t size)
{
    const unsigned char *p = base;
    for (size_t i = from; i < size; i++)
        if (p[i] != 0xA5)
            return 0;
    return 1;
}

static void run(long n, long off, int expect_ok)
{
    static io b;
    static m_state st, before;
    for (int i = 0; i < 8; i++)
        b.upd[i] = (float)(i + 1) * 0.5f;
    for (int i = 0; i < 4; i++)
        b.bias[i] = (float)(10 * i);
    fill_canary(&b, &st);
    before = st;
    coreai_status s = m_step(ws, n, off, b.upd, b.past, b.bias, &st, b.seen + GUARD, b.tot + GUARD, b.len + GUARD);
    printf("n=%ld off=%ld status=%d\n", n, off, (int)s);
    if (!expect_ok) {
        check(s == COREAI_STATUS_INVALID_ARGUMENT, "status", n, off);
        check(memcmp(&st, &before, sizeof st) == 0, "state untouched", n, off);
        check(canary_from(b.seen, 0, sizeof b.seen) && canary_from(b.tot, 0, sizeof b.tot) &&
                  canary_from(b.len, 0, sizeof b.len), "outputs untouched", n, off);
        return;
    }
    check(s == COREAI_STATUS_OK, "status", n, off);
    /* reference: cache rows off..off+n-1 replaced by upd's rows */
    float ref[16];
    for (int i = 0; i < 16; i++)
        ref[i] = (float)(100 + i);
    for (long r = 0; r < n; r++)
        for (int c = 0; c < 2; c++)
            ref[(off + r) * 2 + c] = b.upd[r * 2 + c];
    check(memcmp(st.cache, ref, sizeof ref) == 0, "new cache", n, off);
    check(memcmp(b.seen + GUARD, ref, (size_t)(off + n) * 2 * sizeof(float)) == 0, "seen", n, off);
    for (long r = 0; r < n; r++)
        check(b.tot[GUARD + r] == b.upd[r * 2] + b.upd[r * 2 + 1] + b.bias[r], "tot", n, off);
    check(b.len[GUARD] == (int32_t)(off + n), "len", n, off);
    /* nothing past the actual sizes (nor before them) was written */
    check(canary_from(b.seen, 0, GUARD * sizeof(float)) &&
              canary_from(b.seen, (GUARD + (size_t)(off + n) * 2) * sizeof(float), sizeof b.seen),
          "seen guards", n, off);
    check(canary_from(b.tot, 0, GUARD * sizeof(float)) &&
              canary_from(b.tot, (GUARD + (size_t)n) * sizeof(float), sizeof b.tot), "tot guards", n, off);
    check(canary_from(b.len, 0, GUARD * sizeof(int32_t)) &&
              canary_from(b.len, (GUARD + 1) * sizeof(int32_t), sizeof b.len), "len guards", n, off);
}

int main(void)
{
    /* inside the ranges: smallest, largest that fits the cache, odd ones */
    run(1, 0, 1);
    run(4, 4, 1);
    run(3, 1, 1);
    run(2, 6, 1);
    run(1, 5, 1);
    /* outside: each symbol at min - 1 and max + 1, and a window past the cache */
    run(0, 0, 0);
    run(5, 0, 0);
    run(1, -1, 0);
    run(1, 7, 0);
    run(4, 6, 0);
    run(3, 6, 0);
    printf("%s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
