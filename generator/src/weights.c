/*
 * weights.c - the weights file: where it is, and whether it is the one the
 * model was written for (size and SHA-256, checked on every load, because a
 * stale weights file would otherwise generate a silently wrong model).
 */
#include <string.h>

#include <nettle/sha2.h>
#include <talloc.h>

#include "load_internal.h"
#include "weights.h"

#ifdef COREAI_FUZZ_ANY_SHA256
bool cg_weights_accept_any_sha256 = false;
#else
#define cg_weights_accept_any_sha256 false /* coreai-gen: always checked */
#endif

const char *cg_weights_href_problem(const char *href)
{
    if (href[0] == '\0')
        return "is empty";
    if (href[0] == '/')
        return "is an absolute path";
    if (strchr(href, ':') != NULL)
        return "contains ':' (URLs are not allowed)";
    if (strchr(href, '\\') != NULL)
        return "contains a backslash";
    for (const char *seg = href; seg != NULL;) {
        const char *slash = strchr(seg, '/');
        size_t len = slash != NULL ? (size_t)(slash - seg) : strlen(seg);
        if (len == 2 && seg[0] == '.' && seg[1] == '.')
            return "has a '..' segment";
        seg = slash != NULL ? slash + 1 : NULL;
    }
    return NULL;
}

char *cg_weights_resolve(void *mem_ctx, const char *model_path, const char *href)
{
    const char *slash = strrchr(model_path, '/');
    if (slash == NULL)
        return talloc_strdup(mem_ctx, href);
    /* keep the directory with its trailing '/' */
    return talloc_asprintf(mem_ctx, "%.*s%s", (int)(slash - model_path + 1), model_path, href);
}

static void cg_sha256_hex(const uint8_t *data, size_t size, char out[SHA256_DIGEST_SIZE * 2 + 1])
{
    static const char digits[] = "0123456789abcdef";
    struct sha256_ctx ctx;
    uint8_t digest[SHA256_DIGEST_SIZE];

    sha256_init(&ctx);
    /* nettle takes size_t lengths; feed large buffers in pieces anyway to
     * stay independent of its length type across versions */
    while (size > 0) {
        size_t chunk = size > (1u << 30) ? (1u << 30) : size;
        sha256_update(&ctx, chunk, data);
        data += chunk;
        size -= chunk;
    }
    sha256_digest(&ctx, SHA256_DIGEST_SIZE, digest);
    for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++) {
        out[2 * i] = digits[digest[i] >> 4];
        out[2 * i + 1] = digits[digest[i] & 15];
    }
    out[SHA256_DIGEST_SIZE * 2] = '\0';
}

const uint8_t *cg_weights_read(void *mem_ctx, const char *path, uint64_t size,
                               const char *sha256_hex, cg_diag *diag)
{
    /* own the bytes through a context of our own, so a rejected file is
     * freed at once rather than with mem_ctx */
    void *holder = talloc_new(mem_ctx);
    if (holder == NULL) {
        cg_diag_error_in(diag, path, 0, "out of memory");
        return NULL;
    }
    size_t got = 0;
    int error = 0;
    uint64_t file_size = 0;
    /* never more than the declared size: a device or a huge file is
     * refused before it is read */
    uint8_t *data = cg_load_file_read(holder, path, size, &got, &error, &file_size);
    char actual[SHA256_DIGEST_SIZE * 2 + 1];
    if (data == NULL && error == CG_FILE_TOO_LARGE) {
        cg_diag_error_in(diag, path, 0, "weights file is %llu bytes, but the model says %llu",
                         (unsigned long long)file_size, (unsigned long long)size);
    } else if (data == NULL) {
        cg_diag_error_in(diag, path, 0, "cannot read weights file: %s", cg_load_file_problem(error));
    } else if ((uint64_t)got != size) {
        cg_diag_error_in(diag, path, 0, "weights file is %zu bytes, but the model says %llu",
                         got, (unsigned long long)size);
    } else {
        cg_sha256_hex(data, got, actual);
        if (strcmp(actual, sha256_hex) == 0 || cg_weights_accept_any_sha256)
            return data;
        cg_diag_error_in(diag, path, 0,
                         "SHA-256 mismatch: the file has %s, but the model says %s", actual,
                         sha256_hex);
    }
    talloc_free(holder);
    return NULL;
}
