/*
 * npy.c - NumPy .npy reader/writer for the host-side runner. See npy.h.
 *
 * Format reference: numpy/lib/format.py. A file is
 *   "\x93NUMPY" <major u8> <minor u8> <header_len: u16 LE (1.0) | u32 LE (2.0, 3.0)>
 *   <header: a Python dict literal, space padded, '\n' terminated> <raw data>
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "npy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__GNUC__) || defined(__clang__)
#define NPY_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define NPY_PRINTF(fmt_index, first_arg)
#endif

/* Headers longer than this are refused (numpy itself refuses > 10000 by default). */
#define NPY_MAX_HEADER_LEN (1u << 20)
/* numpy pads the header so that the data starts on this boundary. */
#define NPY_ARRAY_ALIGN 64
/* numpy leaves room for the first axis to grow to this many digits. */
#define NPY_GROWTH_AXIS_MAX_DIGITS 21

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* ---- small helpers ---- */

static void set_err(char *err, size_t err_len, const char *fmt, ...) NPY_PRINTF(3, 4);
static void set_err(char *err, size_t err_len, const char *fmt, ...) {
    if (err == NULL || err_len == 0) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
}

typedef struct npy_dtype_entry {
    const char *descr;
    coreai_dtype dtype;
} npy_dtype_entry;

static const npy_dtype_entry npy_dtypes[] = {
    {"<f4", COREAI_DTYPE_F32}, {"<f2", COREAI_DTYPE_F16}, {"<u2", COREAI_DTYPE_BF16},
    {"<i8", COREAI_DTYPE_I64}, {"<i4", COREAI_DTYPE_I32}, {"|b1", COREAI_DTYPE_BOOL},
    {"|i1", COREAI_DTYPE_I8}, {"|u1", COREAI_DTYPE_U8},
};

const char *coreai_npy_descr(coreai_dtype dtype) {
    for (size_t i = 0; i < sizeof npy_dtypes / sizeof npy_dtypes[0]; ++i) {
        if (npy_dtypes[i].dtype == dtype) {
            return npy_dtypes[i].descr;
        }
    }
    return NULL;
}

static int host_is_little_endian(void) {
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

static void byteswap_elements(unsigned char *p, size_t nbytes, size_t elem) {
    if (elem < 2) {
        return;
    }
    for (size_t off = 0; off + elem <= nbytes; off += elem) {
        for (size_t i = 0, j = elem - 1; i < j; ++i, --j) {
            unsigned char t = p[off + i];
            p[off + i] = p[off + j];
            p[off + j] = t;
        }
    }
}

/* numel * elem with overflow checks; -1 when the shape is invalid or too big. */
static int checked_nbytes(int32_t rank, const int64_t *shape, size_t elem, size_t *out) {
    for (int32_t i = 0; i < rank; ++i) {
        if (shape[i] < 0) {
            return -1;
        }
        if (shape[i] == 0) {
            *out = 0;
            return 0;
        }
    }
    size_t total = elem;
    for (int32_t i = 0; i < rank; ++i) {
        uint64_t d = (uint64_t)shape[i];
        if (total > SIZE_MAX / d) {
            return -1;
        }
        total *= (size_t)d;
    }
#if SIZE_MAX > INT64_MAX
    /* (with a 32-bit size_t the check above already bounds total) */
    if ((uint64_t)total > (uint64_t)INT64_MAX) {
        return -1;
    }
#endif
    *out = total;
    return 0;
}

static void *alloc_data(size_t nbytes) {
    size_t size = nbytes == 0 ? COREAI_NPY_DATA_ALIGNMENT : nbytes;
    if (size > SIZE_MAX - (COREAI_NPY_DATA_ALIGNMENT - 1)) {
        return NULL;
    }
    size = (size + COREAI_NPY_DATA_ALIGNMENT - 1) / COREAI_NPY_DATA_ALIGNMENT * COREAI_NPY_DATA_ALIGNMENT;
    return aligned_alloc(COREAI_NPY_DATA_ALIGNMENT, size);
}

/* ---- header dict parser (strict subset of Python literal syntax) ---- */

typedef struct hparser {
    const char *p;
    const char *end;
    char *err;
    size_t err_len;
    const char *path;
} hparser;

static int is_ws(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void skip_ws(hparser *h) {
    while (h->p < h->end && is_ws(*h->p)) {
        ++h->p;
    }
}

static int peek(const hparser *h) {
    return h->p < h->end ? (unsigned char)*h->p : -1;
}

static int expect_char(hparser *h, char c, const char *what) {
    skip_ws(h);
    if (peek(h) != (unsigned char)c) {
        set_err(h->err, h->err_len, "%s: malformed .npy header: expected '%c' %s", h->path, c, what);
        return -1;
    }
    ++h->p;
    return 0;
}

/* A quoted string without escapes, copied into BUF (NUL-terminated). */
static int parse_string(hparser *h, char *buf, size_t buf_len, const char *what) {
    skip_ws(h);
    int q = peek(h);
    if (q != '\'' && q != '"') {
        set_err(h->err, h->err_len, "%s: malformed .npy header: expected a string %s", h->path, what);
        return -1;
    }
    ++h->p;
    size_t n = 0;
    for (;;) {
        int c = peek(h);
        if (c < 0 || c == '\n') {
            set_err(h->err, h->err_len, "%s: malformed .npy header: unterminated string %s", h->path,
                    what);
            return -1;
        }
        ++h->p;
        if (c == q) {
            break;
        }
        if (c == '\\' || c < 0x20 || c > 0x7e) {
            set_err(h->err, h->err_len,
                    "%s: malformed .npy header: unsupported character in string %s", h->path, what);
            return -1;
        }
        if (n + 1 >= buf_len) {
            set_err(h->err, h->err_len, "%s: malformed .npy header: string too long %s", h->path,
                    what);
            return -1;
        }
        buf[n++] = (char)c;
    }
    buf[n] = '\0';
    return 0;
}

static int is_ident_char(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static int parse_bool(hparser *h, int *out) {
    skip_ws(h);
    size_t left = (size_t)(h->end - h->p);
    if (left >= 4 && memcmp(h->p, "True", 4) == 0 && (left == 4 || !is_ident_char((unsigned char)h->p[4]))) {
        h->p += 4;
        *out = 1;
        return 0;
    }
    if (left >= 5 && memcmp(h->p, "False", 5) == 0 &&
        (left == 5 || !is_ident_char((unsigned char)h->p[5]))) {
        h->p += 5;
        *out = 0;
        return 0;
    }
    set_err(h->err, h->err_len, "%s: malformed .npy header: fortran_order must be True or False",
            h->path);
    return -1;
}

/* A non-negative Python int literal in decimal (no sign, no leading zeros, no '_'). */
static int parse_dim(hparser *h, int64_t *out) {
    skip_ws(h);
    int c = peek(h);
    if (c < '0' || c > '9') {
        set_err(h->err, h->err_len,
                "%s: malformed .npy header: shape must be a tuple of non-negative integers", h->path);
        return -1;
    }
    const char *start = h->p;
    int64_t v = 0;
    while ((c = peek(h)) >= '0' && c <= '9') {
        int digit = c - '0';
        if (v > (INT64_MAX - digit) / 10) {
            set_err(h->err, h->err_len, "%s: malformed .npy header: shape dimension too large",
                    h->path);
            return -1;
        }
        v = v * 10 + digit;
        ++h->p;
    }
    if (h->p - start > 1 && *start == '0') {
        set_err(h->err, h->err_len, "%s: malformed .npy header: shape dimension with leading zero",
                h->path);
        return -1;
    }
    if (is_ident_char(peek(h))) {
        set_err(h->err, h->err_len,
                "%s: malformed .npy header: shape must be a tuple of non-negative integers", h->path);
        return -1;
    }
    *out = v;
    return 0;
}

/* "()", "(n,)", "(a, b)", "(a, b,)". "(n)" is an int in Python, not a tuple. */
static int parse_shape(hparser *h, int32_t *rank, int64_t *shape) {
    if (expect_char(h, '(', "to open the shape tuple") != 0) {
        return -1;
    }
    int32_t n = 0;
    int trailing_comma = 0;
    skip_ws(h);
    while (peek(h) != ')') {
        int64_t d;
        if (parse_dim(h, &d) != 0) {
            return -1;
        }
        if (n >= COREAI_MAX_RANK) {
            set_err(h->err, h->err_len, "%s: array rank exceeds the maximum of %d", h->path,
                    COREAI_MAX_RANK);
            return -1;
        }
        shape[n++] = d;
        skip_ws(h);
        trailing_comma = 0;
        if (peek(h) == ',') {
            ++h->p;
            trailing_comma = 1;
            skip_ws(h);
        } else if (peek(h) != ')') {
            set_err(h->err, h->err_len, "%s: malformed .npy header: expected ',' or ')' in shape",
                    h->path);
            return -1;
        }
    }
    ++h->p; /* ')' */
    if (n == 1 && !trailing_comma) {
        set_err(h->err, h->err_len,
                "%s: malformed .npy header: shape must be a tuple (a 1-d shape is written (n,))",
                h->path);
        return -1;
    }
    *rank = n;
    return 0;
}

static int parse_descr(hparser *h, coreai_dtype *dtype) {
    skip_ws(h);
    if (peek(h) == '[') {
        set_err(h->err, h->err_len, "%s: structured dtypes are not supported", h->path);
        return -1;
    }
    char descr[32];
    if (parse_string(h, descr, sizeof descr, "for descr") != 0) {
        return -1;
    }
    for (size_t i = 0; i < sizeof npy_dtypes / sizeof npy_dtypes[0]; ++i) {
        if (strcmp(descr, npy_dtypes[i].descr) == 0) {
            *dtype = npy_dtypes[i].dtype;
            return 0;
        }
    }
    if (descr[0] == '>') {
        set_err(h->err, h->err_len,
                "%s: big-endian dtype '%s' is not supported (convert with arr.astype(arr.dtype.newbyteorder('<')))",
                h->path, descr);
    } else {
        set_err(h->err, h->err_len,
                "%s: unsupported dtype '%s' (supported: '<f4', '<f2', '<u2' for bf16, '<i8', '<i4', '|b1', '|i1', '|u1')",
                h->path, descr);
    }
    return -1;
}

static int parse_header(hparser *h, coreai_npy *out) {
    int have_descr = 0, have_fortran = 0, have_shape = 0;
    if (expect_char(h, '{', "at the start of the header dict") != 0) {
        return -1;
    }
    for (;;) {
        skip_ws(h);
        if (peek(h) == '}') {
            ++h->p;
            break;
        }
        char key[32];
        if (parse_string(h, key, sizeof key, "as a header key") != 0) {
            return -1;
        }
        if (expect_char(h, ':', "after a header key") != 0) {
            return -1;
        }
        if (strcmp(key, "descr") == 0) {
            if (have_descr++) {
                goto duplicate;
            }
            if (parse_descr(h, &out->dtype) != 0) {
                return -1;
            }
        } else if (strcmp(key, "fortran_order") == 0) {
            int fortran;
            if (have_fortran++) {
                goto duplicate;
            }
            if (parse_bool(h, &fortran) != 0) {
                return -1;
            }
            if (fortran) {
                set_err(h->err, h->err_len,
                        "%s: fortran_order=True is not supported (save np.ascontiguousarray(arr))",
                        h->path);
                return -1;
            }
        } else if (strcmp(key, "shape") == 0) {
            if (have_shape++) {
                goto duplicate;
            }
            if (parse_shape(h, &out->rank, out->shape) != 0) {
                return -1;
            }
        } else {
            set_err(h->err, h->err_len, "%s: malformed .npy header: unexpected key '%s'", h->path,
                    key);
            return -1;
        }
        skip_ws(h);
        if (peek(h) == ',') {
            ++h->p;
        } else if (peek(h) != '}') {
            set_err(h->err, h->err_len, "%s: malformed .npy header: expected ',' or '}' in dict",
                    h->path);
            return -1;
        }
        continue;
    duplicate:
        set_err(h->err, h->err_len, "%s: malformed .npy header: duplicate key '%s'", h->path, key);
        return -1;
    }
    skip_ws(h);
    if (h->p != h->end) {
        set_err(h->err, h->err_len, "%s: malformed .npy header: unexpected text after the dict",
                h->path);
        return -1;
    }
    if (!have_descr || !have_fortran || !have_shape) {
        set_err(h->err, h->err_len, "%s: malformed .npy header: missing key '%s'", h->path,
                !have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape");
        return -1;
    }
    return 0;
}

/* ---- reading ---- */

static int read_exact(FILE *fp, void *buf, size_t n) {
    return n == 0 || fread(buf, 1, n, fp) == n ? 0 : -1;
}

int coreai_npy_read(const char *path, coreai_npy *out, char *err, size_t err_len) {
    if (out == NULL) {
        set_err(err, err_len, "coreai_npy_read: OUT is NULL");
        return -1;
    }
    memset(out, 0, sizeof *out);
    if (path == NULL) {
        set_err(err, err_len, "coreai_npy_read: PATH is NULL");
        return -1;
    }
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) {
        set_err(err, err_len, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    char *header = NULL;
    coreai_npy tmp;
    memset(&tmp, 0, sizeof tmp);

    unsigned char pre[8];
    if (read_exact(fp, pre, sizeof pre) != 0 || memcmp(pre, npy_magic, sizeof npy_magic) != 0) {
        set_err(err, err_len, "%s: not a .npy file (bad magic)", path);
        goto fail;
    }
    tmp.version_major = pre[6];
    tmp.version_minor = pre[7];
    if (tmp.version_major < 1 || tmp.version_major > 3 || tmp.version_minor != 0) {
        set_err(err, err_len, "%s: unsupported .npy format version %d.%d", path, tmp.version_major,
                tmp.version_minor);
        goto fail;
    }
    size_t header_len;
    if (tmp.version_major == 1) {
        unsigned char l[2];
        if (read_exact(fp, l, 2) != 0) {
            set_err(err, err_len, "%s: truncated .npy header", path);
            goto fail;
        }
        header_len = (size_t)l[0] | (size_t)l[1] << 8;
    } else {
        unsigned char l[4];
        if (read_exact(fp, l, 4) != 0) {
            set_err(err, err_len, "%s: truncated .npy header", path);
            goto fail;
        }
        uint32_t v = (uint32_t)l[0] | (uint32_t)l[1] << 8 | (uint32_t)l[2] << 16 | (uint32_t)l[3] << 24;
        if (v > NPY_MAX_HEADER_LEN) {
            set_err(err, err_len, "%s: .npy header too large (%lu bytes)", path, (unsigned long)v);
            goto fail;
        }
        header_len = v;
    }
    if (header_len == 0) {
        set_err(err, err_len, "%s: malformed .npy header: empty", path);
        goto fail;
    }
    header = malloc(header_len);
    if (header == NULL) {
        set_err(err, err_len, "%s: out of memory", path);
        goto fail;
    }
    if (read_exact(fp, header, header_len) != 0) {
        set_err(err, err_len, "%s: truncated .npy header", path);
        goto fail;
    }
    if (memchr(header, '\0', header_len) != NULL) {
        set_err(err, err_len, "%s: malformed .npy header: contains a NUL byte", path);
        goto fail;
    }
    hparser h = {header, header + header_len, err, err_len, path};
    if (parse_header(&h, &tmp) != 0) {
        goto fail;
    }
    free(header);
    header = NULL;

    size_t elem = coreai_dtype_size(tmp.dtype);
    if (checked_nbytes(tmp.rank, tmp.shape, elem, &tmp.nbytes) != 0) {
        set_err(err, err_len, "%s: array too large", path);
        goto fail;
    }
    tmp.data = alloc_data(tmp.nbytes);
    if (tmp.data == NULL) {
        set_err(err, err_len, "%s: out of memory (%zu bytes of data)", path, tmp.nbytes);
        goto fail;
    }
    if (tmp.nbytes > 0) {
        size_t got = fread(tmp.data, 1, tmp.nbytes, fp);
        if (got != tmp.nbytes) {
            if (ferror(fp)) {
                set_err(err, err_len, "%s: read error: %s", path, strerror(errno));
            } else {
                set_err(err, err_len, "%s: truncated data: expected %zu bytes, found %zu", path,
                        tmp.nbytes, got);
            }
            goto fail;
        }
    }
    if (fgetc(fp) != EOF) {
        set_err(err, err_len, "%s: unexpected trailing bytes after %zu bytes of data", path,
                tmp.nbytes);
        goto fail;
    }
    if (ferror(fp)) {
        set_err(err, err_len, "%s: read error: %s", path, strerror(errno));
        goto fail;
    }
    fclose(fp);
    if (!host_is_little_endian()) {
        byteswap_elements(tmp.data, tmp.nbytes, elem);
    }
    *out = tmp;
    return 0;

fail:
    free(header);
    free(tmp.data);
    fclose(fp);
    return -1;
}

void coreai_npy_free(coreai_npy *npy) {
    if (npy == NULL) {
        return;
    }
    free(npy->data);
    memset(npy, 0, sizeof *npy);
}

/* ---- writing ---- */

/* Appends to BUF at *LEN; the buffer is sized so this cannot overflow for rank <= MAX. */
static void appendf(char *buf, size_t cap, size_t *len, const char *fmt, ...) NPY_PRINTF(4, 5);
static void appendf(char *buf, size_t cap, size_t *len, const char *fmt, ...) {
    if (*len >= cap) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (n > 0) {
        *len += (size_t)n;
    }
}

int coreai_npy_fwrite(FILE *fp, const char *name, coreai_dtype dtype, int32_t rank,
                      const int64_t *shape, const void *data, char *err, size_t err_len) {
    if (name == NULL) {
        name = "<stream>";
    }
    const char *descr = coreai_npy_descr(dtype);
    if (fp == NULL || descr == NULL) {
        set_err(err, err_len, "%s: %s", name, fp == NULL ? "no stream" : "unknown dtype");
        return -1;
    }
    if (rank < 0 || rank > COREAI_MAX_RANK || (rank > 0 && shape == NULL)) {
        set_err(err, err_len, "%s: invalid rank %d", name, (int)rank);
        return -1;
    }
    size_t elem = coreai_dtype_size(dtype);
    size_t nbytes;
    if (checked_nbytes(rank, shape, elem, &nbytes) != 0) {
        set_err(err, err_len, "%s: invalid or too large shape", name);
        return -1;
    }
    if (nbytes > 0 && data == NULL) {
        set_err(err, err_len, "%s: no data", name);
        return -1;
    }

    /* The dict exactly as numpy.lib.format._write_array_header spells it. */
    char dict[512];
    size_t len = 0;
    appendf(dict, sizeof dict, &len, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int32_t i = 0; i < rank; ++i) {
        appendf(dict, sizeof dict, &len, i == 0 ? "%lld" : ", %lld", (long long)shape[i]);
    }
    appendf(dict, sizeof dict, &len, "%s), }", rank == 1 ? "," : "");
    if (rank > 0) {
        char digits[32];
        int nd = snprintf(digits, sizeof digits, "%lld", (long long)shape[0]);
        for (int i = nd; i < NPY_GROWTH_AXIS_MAX_DIGITS; ++i) {
            appendf(dict, sizeof dict, &len, " ");
        }
    }
    if (len >= sizeof dict) {
        set_err(err, err_len, "%s: header too long", name);
        return -1;
    }

    /* Version 1.0 unless the padded header does not fit its 16-bit length. */
    int major = 1;
    size_t prefix = sizeof npy_magic + 2 + 2;
    size_t hlen = len + 1; /* + '\n' */
    size_t padlen = NPY_ARRAY_ALIGN - (prefix + hlen) % NPY_ARRAY_ALIGN;
    if (hlen + padlen > 0xffff) {
        major = 2;
        prefix = sizeof npy_magic + 2 + 4;
        padlen = NPY_ARRAY_ALIGN - (prefix + hlen) % NPY_ARRAY_ALIGN;
    }
    size_t total_header = hlen + padlen;

    unsigned char pre[12];
    memcpy(pre, npy_magic, sizeof npy_magic);
    pre[6] = (unsigned char)major;
    pre[7] = 0;
    if (major == 1) {
        pre[8] = (unsigned char)(total_header & 0xff);
        pre[9] = (unsigned char)(total_header >> 8);
    } else {
        pre[8] = (unsigned char)(total_header & 0xff);
        pre[9] = (unsigned char)((total_header >> 8) & 0xff);
        pre[10] = (unsigned char)((total_header >> 16) & 0xff);
        pre[11] = (unsigned char)((total_header >> 24) & 0xff);
    }
    int ok = fwrite(pre, 1, prefix, fp) == prefix && fwrite(dict, 1, len, fp) == len;
    for (size_t i = 0; ok && i < padlen; ++i) {
        ok = fputc(' ', fp) != EOF;
    }
    ok = ok && fputc('\n', fp) != EOF;

    if (ok && nbytes > 0) {
        if (host_is_little_endian() || elem == 1) {
            ok = fwrite(data, 1, nbytes, fp) == nbytes;
        } else {
            unsigned char chunk[4096];
            const unsigned char *src = data;
            for (size_t off = 0; ok && off < nbytes; off += sizeof chunk) {
                size_t n = nbytes - off < sizeof chunk ? nbytes - off : sizeof chunk;
                memcpy(chunk, src + off, n);
                byteswap_elements(chunk, n, elem);
                ok = fwrite(chunk, 1, n, fp) == n;
            }
        }
    }
    if (!ok || fflush(fp) != 0 || ferror(fp)) {
        set_err(err, err_len, "%s: write error: %s", name, strerror(errno));
        return -1;
    }
    return 0;
}

int coreai_npy_write(const char *path, coreai_dtype dtype, int32_t rank, const int64_t *shape,
                     const void *data, char *err, size_t err_len) {
    if (path == NULL) {
        set_err(err, err_len, "coreai_npy_write: PATH is NULL");
        return -1;
    }
    size_t tmp_len = strlen(path) + 32;
    char *tmp = malloc(tmp_len);
    if (tmp == NULL) {
        set_err(err, err_len, "%s: out of memory", path);
        return -1;
    }
    snprintf(tmp, tmp_len, "%s.tmp.%ld", path, (long)getpid());
    FILE *fp = fopen(tmp, "wb");
    if (fp == NULL) {
        set_err(err, err_len, "%s: cannot create: %s", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    int rc = coreai_npy_fwrite(fp, path, dtype, rank, shape, data, err, err_len);
    if (fclose(fp) != 0 && rc == 0) {
        set_err(err, err_len, "%s: write error: %s", path, strerror(errno));
        rc = -1;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        set_err(err, err_len, "%s: cannot rename %s into place: %s", path, tmp, strerror(errno));
        rc = -1;
    }
    if (rc != 0) {
        remove(tmp);
    }
    free(tmp);
    return rc;
}
