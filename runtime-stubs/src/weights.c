/*
 * weights.c - external weights (coreai-gen --weights-format external): the
 * check an application runs once on the blob it loaded or mapped, and the
 * SHA-256 (FIPS 180-4) it needs. No allocation; the state is on the stack.
 */
#include "coreai/runtime.h"

#include <string.h>

typedef struct sha256_state {
    uint32_t h[8];
    uint8_t block[64];
    size_t used;    /* bytes in block */
    uint64_t total; /* bytes hashed so far */
} sha256_state;

static const uint32_t k256[64] = {
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u, 0xab1c5ed5u,
    0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu, 0x9bdc06a7u, 0xc19bf174u,
    0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu, 0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau,
    0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u, 0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u,
    0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu, 0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u,
    0xa2bfe8a1u, 0xa81a664bu, 0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u,
    0x19a4c116u, 0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
    0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u, 0xc67178f2u,
};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void compress(uint32_t h[8], const uint8_t *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
               (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; i++) {
        const uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k256[i] + w[i];
        const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        hh = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
}

static void sha256_update(sha256_state *s, const uint8_t *p, size_t n)
{
    s->total += n;
    if (s->used > 0) {
        const size_t take = n < 64 - s->used ? n : 64 - s->used;
        memcpy(s->block + s->used, p, take);
        s->used += take;
        p += take;
        n -= take;
        if (s->used < 64)
            return;
        compress(s->h, s->block);
        s->used = 0;
    }
    for (; n >= 64; p += 64, n -= 64)
        compress(s->h, p);
    memcpy(s->block, p, n);
    s->used = n;
}

void coreai_sha256(const void *data, size_t size, uint8_t digest[32])
{
    sha256_state s = {{0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au, 0x510e527fu, 0x9b05688cu, 0x1f83d9abu,
                       0x5be0cd19u},
                      {0},
                      0,
                      0};
    sha256_update(&s, (const uint8_t *)data, size);
    /* padding: 0x80, zeros up to 56 bytes mod 64, the bit length big-endian */
    const uint64_t bits = s.total * 8u;
    uint8_t pad[72] = {0x80};
    const size_t n_pad = (s.used < 56 ? 56 : 120) - s.used;
    for (int i = 0; i < 8; i++)
        pad[n_pad + i] = (uint8_t)(bits >> (56 - 8 * i));
    sha256_update(&s, pad, n_pad + 8);
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (uint8_t)(s.h[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(s.h[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(s.h[i] >> 8);
        digest[4 * i + 3] = (uint8_t)s.h[i];
    }
}

coreai_status coreai_weights_check(const coreai_weights_desc *desc, const void *weights, size_t size)
{
    if (desc == NULL || weights == NULL || desc->alignment == 0 ||
        (uintptr_t)weights % (uintptr_t)desc->alignment != 0)
        return COREAI_STATUS_INVALID_ARGUMENT;
    if ((uint64_t)size != desc->size)
        return COREAI_STATUS_BAD_WEIGHTS;
    uint8_t digest[32];
    coreai_sha256(weights, size, digest);
    return memcmp(digest, desc->sha256, sizeof digest) == 0 ? COREAI_STATUS_OK : COREAI_STATUS_BAD_WEIGHTS;
}
