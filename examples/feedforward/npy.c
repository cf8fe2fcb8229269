/*
 * npy.c - strict reader for float32 .npy files (format version 1.0).
 *
 * Accepts exactly what numpy.save writes for a C-ordered little-endian f32
 * array: the magic, version 1.0, a header dict with the keys 'descr' ('<f4'),
 * 'fortran_order' (False) and 'shape', space padding, a newline, and then
 * exactly rank-product * 4 bytes of data.
 */
#include "npy.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPY_MAX_FILE ((long)1 << 30) /* plenty for an example; refuses absurd files */

static int fail(char *err, size_t err_size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && err_size > 0)
        vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
    return -1;
}

static const char *skip_spaces(const char *p, const char *end)
{
    while (p < end && *p == ' ')
        p++;
    return p;
}

/* Parses a single-quoted Python string literal without escapes into buf. */
static const char *parse_quoted(const char *p, const char *end, char *buf, size_t buf_size)
{
    size_t n = 0;
    if (p >= end || *p != '\'')
        return NULL;
    p++;
    while (p < end && *p != '\'') {
        if (*p == '\\' || n + 1 >= buf_size)
            return NULL;
        buf[n++] = *p++;
    }
    if (p >= end)
        return NULL;
    buf[n] = '\0';
    return p + 1;
}

/* Parses "(d0, d1, ...)" with Python's tuple spelling: "()", "(n,)", "(a, b)". */
static const char *parse_shape(const char *p, const char *end, npy_f32 *out)
{
    if (p >= end || *p != '(')
        return NULL;
    p = skip_spaces(p + 1, end);
    out->rank = 0;
    while (p < end && *p != ')') {
        int64_t v = 0;
        int digits = 0;
        if (out->rank == NPY_MAX_RANK)
            return NULL;
        while (p < end && *p >= '0' && *p <= '9') {
            if (v > ((int64_t)1 << 40))
                return NULL;
            v = v * 10 + (*p - '0');
            p++;
            digits++;
        }
        if (digits == 0)
            return NULL;
        out->shape[out->rank++] = v;
        p = skip_spaces(p, end);
        if (p < end && *p == ',') {
            p = skip_spaces(p + 1, end);
        } else if (p < end && *p != ')') {
            return NULL;
        }
    }
    if (p >= end)
        return NULL;
    return p + 1;
}

static int parse_header(const char *p, const char *end, npy_f32 *out, char *err, size_t err_size)
{
    int have_descr = 0, have_order = 0, have_shape = 0;
    char key[32], value[32];

    if (end == p || end[-1] != '\n')
        return fail(err, err_size, "header does not end with a newline");
    end--; /* the newline */
    p = skip_spaces(p, end);
    if (p >= end || *p != '{')
        return fail(err, err_size, "header is not a dict");
    p = skip_spaces(p + 1, end);
    while (p < end && *p != '}') {
        p = parse_quoted(p, end, key, sizeof key);
        if (!p)
            return fail(err, err_size, "malformed header key");
        p = skip_spaces(p, end);
        if (p >= end || *p != ':')
            return fail(err, err_size, "expected ':' after '%s'", key);
        p = skip_spaces(p + 1, end);
        if (strcmp(key, "descr") == 0 && !have_descr) {
            p = parse_quoted(p, end, value, sizeof value);
            if (!p)
                return fail(err, err_size, "malformed 'descr'");
            if (strcmp(value, "<f4") != 0)
                return fail(err, err_size, "dtype '%s' is not '<f4' (little-endian float32)", value);
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0 && !have_order) {
            if ((size_t)(end - p) >= 5 && memcmp(p, "False", 5) == 0) {
                p += 5;
            } else if ((size_t)(end - p) >= 4 && memcmp(p, "True", 4) == 0) {
                return fail(err, err_size, "Fortran-ordered arrays are not supported");
            } else {
                return fail(err, err_size, "malformed 'fortran_order'");
            }
            have_order = 1;
        } else if (strcmp(key, "shape") == 0 && !have_shape) {
            p = parse_shape(p, end, out);
            if (!p)
                return fail(err, err_size, "malformed or unsupported 'shape' (rank <= %d)", NPY_MAX_RANK);
            have_shape = 1;
        } else {
            return fail(err, err_size, "unexpected or repeated header key '%s'", key);
        }
        p = skip_spaces(p, end);
        if (p < end && *p == ',')
            p = skip_spaces(p + 1, end);
        else if (p < end && *p != '}')
            return fail(err, err_size, "expected ',' or '}' in header");
    }
    if (p >= end)
        return fail(err, err_size, "unterminated header dict");
    p = skip_spaces(p + 1, end);
    if (p != end)
        return fail(err, err_size, "trailing characters after the header dict");
    if (!have_descr || !have_order || !have_shape)
        return fail(err, err_size, "header lacks 'descr', 'fortran_order' or 'shape'");
    return 0;
}

static int host_is_little_endian(void)
{
    const uint32_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

int npy_read_f32(const char *path, npy_f32 *out, char *err, size_t err_size)
{
    FILE *f;
    long size;
    unsigned char *bytes = NULL;
    size_t header_len, data_len;
    char msg[160];
    int little = host_is_little_endian();

    memset(out, 0, sizeof *out);
    f = fopen(path, "rb");
    if (!f)
        return fail(err, err_size, "%s: cannot open", path);
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fail(msg, sizeof msg, "cannot determine the file size");
        goto error;
    }
    if (size < 10 || size > NPY_MAX_FILE) {
        fail(msg, sizeof msg, "not a .npy file (size %ld)", size);
        goto error;
    }
    bytes = malloc((size_t)size);
    if (!bytes) {
        fail(msg, sizeof msg, "out of memory");
        goto error;
    }
    if (fread(bytes, 1, (size_t)size, f) != (size_t)size) {
        fail(msg, sizeof msg, "read error");
        goto error;
    }

    if (memcmp(bytes, "\x93NUMPY", 6) != 0) {
        fail(msg, sizeof msg, "bad magic, not a .npy file");
        goto error;
    }
    if (bytes[6] != 1 || bytes[7] != 0) {
        fail(msg, sizeof msg, ".npy format version %u.%u, only 1.0 is supported",
             (unsigned)bytes[6], (unsigned)bytes[7]);
        goto error;
    }
    header_len = (size_t)bytes[8] | ((size_t)bytes[9] << 8);
    if (10 + header_len > (size_t)size) {
        fail(msg, sizeof msg, "truncated header");
        goto error;
    }
    if (parse_header((const char *)bytes + 10, (const char *)bytes + 10 + header_len, out, msg,
                     sizeof msg) != 0)
        goto error;

    out->count = 1;
    for (int i = 0; i < out->rank; i++) {
        if (out->shape[i] != 0 && out->count > (size_t)NPY_MAX_FILE / (size_t)out->shape[i]) {
            fail(msg, sizeof msg, "shape too large");
            goto error;
        }
        out->count *= (size_t)out->shape[i];
    }
    data_len = (size_t)size - 10 - header_len;
    if (data_len != out->count * sizeof(float)) {
        fail(msg, sizeof msg, "%zu data bytes for %zu float32 elements", data_len, out->count);
        goto error;
    }

    out->data = malloc(out->count ? out->count * sizeof(float) : 1);
    if (!out->data) {
        fail(msg, sizeof msg, "out of memory");
        goto error;
    }
    for (size_t i = 0; i < out->count; i++) {
        unsigned char b[4];
        memcpy(b, bytes + 10 + header_len + 4 * i, 4);
        if (!little) {
            unsigned char t = b[0];
            b[0] = b[3];
            b[3] = t;
            t = b[1];
            b[1] = b[2];
            b[2] = t;
        }
        memcpy(&out->data[i], b, 4);
    }
    free(bytes);
    fclose(f);
    return 0;

error:
    free(bytes);
    fclose(f);
    memset(out, 0, sizeof *out);
    return fail(err, err_size, "%s: %s", path, msg);
}

void npy_free(npy_f32 *array)
{
    if (array) {
        free(array->data);
        array->data = NULL;
        array->count = 0;
    }
}
