/* Unit tests for the runner's .npy reader/writer (runtime-stubs/runner/npy.c). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "npy.h"

#ifndef COREAI_TEST_TMP
#define COREAI_TEST_TMP "/tmp"
#endif

static char *tmp_path(const char *name) {
    static char buf[1024];
    mkdir(COREAI_TEST_TMP, 0777);
    snprintf(buf, sizeof buf, "%s/test_runner_npy_%ld_%s", COREAI_TEST_TMP, (long)getpid(), name);
    return buf;
}

static void write_bytes(const char *path, const void *data, size_t n) {
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    if (n > 0) {
        assert_int_equal(fwrite(data, 1, n, fp), n);
    }
    assert_int_equal(fclose(fp), 0);
}

static unsigned char *read_bytes(const char *path, size_t *n) {
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    size_t cap = 4096, len = 0;
    unsigned char *buf = malloc(cap);
    assert_non_null(buf);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len, fp)) > 0) {
        len += got;
        if (len == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
    }
    fclose(fp);
    /* NUL-terminated for the strstr on the header below (ASan: it read past
     * the buffer); the loop always leaves len < cap */
    buf[len] = 0;
    *n = len;
    return buf;
}

/* A .npy file with the given version and header text (padded like numpy) and data. */
static size_t make_npy(unsigned char *out, size_t cap, int major, int minor, const char *header,
                       const void *data, size_t nbytes) {
    size_t prefix = major == 1 ? 10 : 12;
    size_t hlen = strlen(header);
    size_t total = prefix + hlen;
    assert_true(total + nbytes <= cap);
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = (unsigned char)minor;
    if (major == 1) {
        out[8] = (unsigned char)(hlen & 0xff);
        out[9] = (unsigned char)(hlen >> 8);
    } else {
        out[8] = (unsigned char)(hlen & 0xff);
        out[9] = (unsigned char)((hlen >> 8) & 0xff);
        out[10] = (unsigned char)((hlen >> 16) & 0xff);
        out[11] = (unsigned char)((hlen >> 24) & 0xff);
    }
    memcpy(out + prefix, header, hlen);
    if (nbytes > 0) {
        memcpy(out + total, data, nbytes);
    }
    return total + nbytes;
}

/* ---- round trips ---- */

typedef struct shape_case {
    int32_t rank;
    int64_t shape[COREAI_MAX_RANK];
} shape_case;

static const shape_case shape_cases[] = {
    {0, {0}},
    {1, {1}},
    {1, {7}},
    {1, {0}},
    {2, {2, 3}},
    {2, {0, 3}},
    {3, {2, 1, 5}},
    {4, {1, 2, 3, 4}},
    {COREAI_MAX_RANK, {1, 2, 1, 3, 1, 2, 1, 2}},
    {2, {12345678901LL, 0}},
};

static const coreai_dtype all_dtypes[] = {COREAI_DTYPE_F32, COREAI_DTYPE_F16, COREAI_DTYPE_BF16,
                                          COREAI_DTYPE_I64, COREAI_DTYPE_I32, COREAI_DTYPE_BOOL};

static void test_roundtrip_all_dtypes_and_shapes(void **state) {
    (void)state;
    const char *path = tmp_path("rt.npy");
    for (size_t d = 0; d < sizeof all_dtypes / sizeof all_dtypes[0]; ++d) {
        coreai_dtype dt = all_dtypes[d];
        size_t elem = coreai_dtype_size(dt);
        for (size_t s = 0; s < sizeof shape_cases / sizeof shape_cases[0]; ++s) {
            const shape_case *sc = &shape_cases[s];
            size_t numel = 1;
            for (int32_t i = 0; i < sc->rank; ++i) {
                numel *= (size_t)sc->shape[i];
            }
            size_t nbytes = numel * elem;
            unsigned char *data = malloc(nbytes + 1);
            assert_non_null(data);
            for (size_t i = 0; i < nbytes; ++i) {
                data[i] = dt == COREAI_DTYPE_BOOL ? (unsigned char)(i % 3 == 0)
                                                  : (unsigned char)(i * 37u + 11u);
            }
            char err[512] = "";
            assert_int_equal(coreai_npy_write(path, dt, sc->rank, sc->rank ? sc->shape : NULL,
                                              data, err, sizeof err),
                             0);

            /* numpy's layout: v1.0, header padded to a multiple of 64, ending in '\n'. */
            size_t flen;
            unsigned char *file = read_bytes(path, &flen);
            assert_true(flen >= 10);
            assert_memory_equal(file, "\x93NUMPY\x01\x00", 8);
            size_t hlen = (size_t)file[8] | (size_t)file[9] << 8;
            assert_int_equal((10 + hlen) % 64, 0);
            assert_int_equal(file[10 + hlen - 1], '\n');
            assert_int_equal(flen, 10 + hlen + nbytes);
            assert_non_null(strstr((const char *)file + 10, coreai_npy_descr(dt)));
            free(file);

            coreai_npy arr;
            assert_int_equal(coreai_npy_read(path, &arr, err, sizeof err), 0);
            assert_int_equal(arr.dtype, dt);
            assert_int_equal(arr.rank, sc->rank);
            for (int32_t i = 0; i < sc->rank; ++i) {
                assert_int_equal(arr.shape[i], sc->shape[i]);
            }
            assert_int_equal(arr.nbytes, nbytes);
            assert_non_null(arr.data);
            assert_int_equal((uintptr_t)arr.data % COREAI_NPY_DATA_ALIGNMENT, 0);
            assert_int_equal(arr.version_major, 1);
            assert_int_equal(arr.version_minor, 0);
            if (nbytes > 0) {
                assert_memory_equal(arr.data, data, nbytes);
            }
            coreai_npy_free(&arr);
            assert_null(arr.data);
            free(data);
        }
    }
    remove(path);
}

/* The exact bytes numpy 1.24 writes for np.save(f, np.zeros((2, 3), np.float32)). */
static void test_header_matches_numpy(void **state) {
    (void)state;
    const char *path = tmp_path("exact.npy");
    static const char want_2x3[] =
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
        "                                                          \n";
    static const char want_scalar[] =
        "{'descr': '<f4', 'fortran_order': False, 'shape': (), }"
        "                                                              \n";
    static const char want_bool5[] =
        "{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }"
        "                                                            \n";
    struct {
        coreai_dtype dt;
        int32_t rank;
        int64_t shape[2];
        const char *want;
    } cases[] = {
        {COREAI_DTYPE_F32, 2, {2, 3}, want_2x3},
        {COREAI_DTYPE_F32, 0, {0, 0}, want_scalar},
        {COREAI_DTYPE_BOOL, 1, {5, 0}, want_bool5},
    };
    unsigned char zeros[64] = {0};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        char err[256];
        assert_int_equal(
            coreai_npy_write(path, cases[c].dt, cases[c].rank, cases[c].shape, zeros, err, sizeof err), 0);
        size_t flen;
        unsigned char *file = read_bytes(path, &flen);
        size_t hlen = strlen(cases[c].want);
        assert_int_equal(file[8] | file[9] << 8, hlen);
        assert_memory_equal(file + 10, cases[c].want, hlen);
        free(file);
    }
    remove(path);
}

/* ---- versions 2.0 and 3.0, and valid header spellings ---- */

static void expect_read_ok(const unsigned char *bytes, size_t n, coreai_npy *arr) {
    const char *path = tmp_path("ok.npy");
    write_bytes(path, bytes, n);
    char err[512] = "";
    int rc = coreai_npy_read(path, arr, err, sizeof err);
    if (rc != 0) {
        print_error("unexpected error: %s\n", err);
    }
    assert_int_equal(rc, 0);
    remove(path);
}

static void test_read_version_2_and_3(void **state) {
    (void)state;
    const float values[6] = {1.0f, -2.5f, 3.25f, 0.0f, 1e-3f, 42.0f};
    unsigned char buf[1024];
    for (int major = 2; major <= 3; ++major) {
        size_t n = make_npy(buf, sizeof buf, major, 0,
                            "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }     \n",
                            values, sizeof values);
        coreai_npy arr;
        expect_read_ok(buf, n, &arr);
        assert_int_equal(arr.version_major, major);
        assert_int_equal(arr.dtype, COREAI_DTYPE_F32);
        assert_int_equal(arr.rank, 2);
        assert_int_equal(arr.shape[0], 3);
        assert_int_equal(arr.shape[1], 2);
        assert_memory_equal(arr.data, values, sizeof values);
        coreai_npy_free(&arr);
    }
}

static void test_read_accepts_valid_spellings(void **state) {
    (void)state;
    static const char *const headers[] = {
        "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2,)}\n",
        "{'shape': (2,), 'fortran_order': False, 'descr': '<i4'}",
        "{ 'descr' : '<i4' , 'fortran_order' : False , 'shape' : ( 2 , ) , }  \n",
        "{'descr': '<i4', 'fortran_order': False, 'shape': (1, 2,), }\n",
    };
    const int32_t values[2] = {-7, 123456};
    unsigned char buf[512];
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; ++i) {
        size_t n = make_npy(buf, sizeof buf, 1, 0, headers[i], values, sizeof values);
        coreai_npy arr;
        expect_read_ok(buf, n, &arr);
        assert_int_equal(arr.dtype, COREAI_DTYPE_I32);
        assert_int_equal(arr.nbytes, sizeof values);
        assert_memory_equal(arr.data, values, sizeof values);
        coreai_npy_free(&arr);
    }
}

static void test_read_dtype_mapping(void **state) {
    (void)state;
    static const struct {
        const char *descr;
        coreai_dtype dt;
    } cases[] = {
        {"<f4", COREAI_DTYPE_F32}, {"<f2", COREAI_DTYPE_F16}, {"<u2", COREAI_DTYPE_BF16},
        {"<i8", COREAI_DTYPE_I64}, {"<i4", COREAI_DTYPE_I32}, {"|b1", COREAI_DTYPE_BOOL},
    };
    unsigned char buf[512];
    const unsigned char data[8] = {1, 0, 1, 0, 1, 0, 1, 0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char header[128];
        snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (), }\n",
                 cases[i].descr);
        size_t n = make_npy(buf, sizeof buf, 1, 0, header, data, coreai_dtype_size(cases[i].dt));
        coreai_npy arr;
        expect_read_ok(buf, n, &arr);
        assert_int_equal(arr.dtype, cases[i].dt);
        assert_int_equal(arr.rank, 0);
        assert_string_equal(coreai_npy_descr(cases[i].dt), cases[i].descr);
        coreai_npy_free(&arr);
    }
}

/* ---- rejected files ---- */

static void expect_read_error(const unsigned char *bytes, size_t n, const char *needle) {
    const char *path = tmp_path("bad.npy");
    write_bytes(path, bytes, n);
    char err[512] = "";
    coreai_npy arr;
    memset(&arr, 0x5a, sizeof arr);
    int rc = coreai_npy_read(path, &arr, err, sizeof err);
    if (rc == 0 || strstr(err, needle) == NULL) {
        print_error("expected an error containing '%s', got rc=%d err='%s'\n", needle, rc, err);
        fail();
    }
    assert_null(arr.data);
    assert_non_null(strstr(err, path)); /* messages name the file */
    coreai_npy_free(&arr);
    remove(path);
}

static void expect_header_error(const char *header, size_t nbytes, const char *needle) {
    unsigned char buf[512];
    unsigned char data[64] = {0};
    assert_true(nbytes <= sizeof data);
    size_t n = make_npy(buf, sizeof buf, 1, 0, header, data, nbytes);
    expect_read_error(buf, n, needle);
}

static void test_reject_malformed_headers(void **state) {
    (void)state;
    static const struct {
        const char *header;
        size_t nbytes;
        const char *needle;
    } cases[] = {
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }\n", 8, "fortran_order=True"},
        {"{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n", 8, "big-endian"},
        {"{'descr': '>i8', 'fortran_order': False, 'shape': (), }\n", 8, "big-endian"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }\n", 16, "unsupported dtype '<f8'"},
        {"{'descr': '<u4', 'fortran_order': False, 'shape': (2,), }\n", 8, "unsupported dtype"},
        {"{'descr': 'f4', 'fortran_order': False, 'shape': (2,), }\n", 8, "unsupported dtype"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }\n", 8, "structured"},
        {"{'descr': '<f4', 'fortran_order': False, }\n", 4, "missing key 'shape'"},
        {"{'fortran_order': False, 'shape': (2,), }\n", 8, "missing key 'descr'"},
        {"{'descr': '<f4', 'shape': (2,), }\n", 8, "missing key 'fortran_order'"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 8, "duplicate key"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1, }\n", 8, "unexpected key 'x'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2), }\n", 8, "tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': 2, }\n", 8, "expected '('"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': [2], }\n", 8, "expected '('"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }\n", 8, "non-negative"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,,), }\n", 8, "non-negative"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (,), }\n", 4, "non-negative"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3), }\n", 24, "expected ',' or ')'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2L,), }\n", 8, "non-negative"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (02,), }\n", 8, "leading zero"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2.0,), }\n", 8, "expected ',' or ')'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }\n", 8, "too large"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }\n", 4, "rank"},
        {"{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }\n", 8, "True or False"},
        {"{'descr': '<f4', 'fortran_order': Falsey, 'shape': (2,), }\n", 8, "True or False"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } x\n", 8, "after the dict"},
        {"{'descr': '<f4', 'fortran_order': False 'shape': (2,), }\n", 8, "expected ',' or '}'"},
        {"{'descr': '<f4, 'fortran_order': False, 'shape': (2,), }\n", 8, "unsupported dtype '<f4, '"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)\n", 8, "malformed"},
        {"{'descr': '<f\\x34', 'fortran_order': False, 'shape': (2,), }\n", 8, "unsupported character"},
        {"['descr', '<f4']\n", 8, "expected '{'"},
        {"{descr: '<f4', 'fortran_order': False, 'shape': (2,), }\n", 8, "expected a string"},
        {"\n", 0, "expected '{'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        expect_header_error(cases[i].header, cases[i].nbytes, cases[i].needle);
    }
}

static void test_reject_bad_files(void **state) {
    (void)state;
    unsigned char buf[512];
    unsigned char data[64] = {0};
    const char *ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";
    size_t n;

    expect_read_error((const unsigned char *)"", 0, "bad magic");
    static const char zip[] = "PK\x03\x04 not npy at all";
    expect_read_error((const unsigned char *)zip, sizeof zip - 1, "bad magic");

    n = make_npy(buf, sizeof buf, 1, 0, ok, data, 8);
    buf[6] = 4;
    expect_read_error(buf, n, "unsupported .npy format version 4.0");
    buf[6] = 1;
    buf[7] = 1;
    expect_read_error(buf, n, "version 1.1");

    n = make_npy(buf, sizeof buf, 1, 0, ok, data, 8);
    expect_read_error(buf, n - 1, "truncated data: expected 8 bytes, found 7");
    n = make_npy(buf, sizeof buf, 1, 0, ok, data, 9);
    expect_read_error(buf, n, "trailing bytes");
    n = make_npy(buf, sizeof buf, 1, 0, ok, data, 8);
    expect_read_error(buf, 20, "truncated .npy header");
    expect_read_error(buf, 9, "truncated .npy header");

    /* header_len 0 */
    n = make_npy(buf, sizeof buf, 1, 0, "", data, 0);
    expect_read_error(buf, n, "empty");

    /* A v2 header length far past the limit. */
    n = make_npy(buf, sizeof buf, 2, 0, ok, data, 8);
    buf[11] = 0x7f;
    expect_read_error(buf, n, "too large");

    /* NUL inside the header. */
    n = make_npy(buf, sizeof buf, 1, 0, ok, data, 8);
    buf[10 + 20] = '\0';
    expect_read_error(buf, n, "NUL");

    char err[256] = "";
    coreai_npy arr;
    assert_int_equal(coreai_npy_read(tmp_path("does-not-exist.npy"), &arr, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot open"));
    assert_null(arr.data);
    /* NULL err buffer is allowed. */
    assert_int_equal(coreai_npy_read(tmp_path("does-not-exist.npy"), &arr, NULL, 0), -1);
}

static void test_write_errors(void **state) {
    (void)state;
    char err[512] = "";
    const float v[4] = {0};
    const int64_t shape9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    const int64_t neg[1] = {-1};
    const int64_t two[1] = {2};
    const char *path = tmp_path("w.npy");
    remove(path);

    assert_int_equal(coreai_npy_write(path, COREAI_DTYPE_F32, 9, shape9, v, err, sizeof err), -1);
    assert_non_null(strstr(err, "rank"));
    assert_int_equal(coreai_npy_write(path, COREAI_DTYPE_F32, 1, neg, v, err, sizeof err), -1);
    assert_int_equal(coreai_npy_write(path, (coreai_dtype)99, 1, two, v, err, sizeof err), -1);
    assert_non_null(strstr(err, "dtype"));
    assert_int_equal(coreai_npy_write(path, COREAI_DTYPE_F32, 1, two, NULL, err, sizeof err), -1);
    assert_int_equal(coreai_npy_write(path, COREAI_DTYPE_F32, 1, NULL, v, err, sizeof err), -1);
    struct stat st;
    assert_int_equal(stat(path, &st), -1); /* nothing left behind */

    char missing_dir[1100];
    snprintf(missing_dir, sizeof missing_dir, "%s/no/such/dir/x.npy", COREAI_TEST_TMP);
    assert_int_equal(coreai_npy_write(missing_dir, COREAI_DTYPE_F32, 1, two, v, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot create"));

    /* An empty array needs no data pointer. */
    const int64_t zero[1] = {0};
    assert_int_equal(coreai_npy_write(path, COREAI_DTYPE_F32, 1, zero, NULL, err, sizeof err), 0);
    coreai_npy arr;
    assert_int_equal(coreai_npy_read(path, &arr, err, sizeof err), 0);
    assert_int_equal(arr.nbytes, 0);
    assert_non_null(arr.data);
    coreai_npy_free(&arr);
    coreai_npy_free(&arr); /* twice is fine */
    coreai_npy_free(NULL);
    remove(path);

    assert_null(coreai_npy_descr((coreai_dtype)99));
}

/* Writing over an existing file replaces it and leaves no temporary behind. */
static void test_write_replaces_atomically(void **state) {
    (void)state;
    const char *path = tmp_path("replace.npy");
    char err[256];
    const int64_t a[1] = {3}, b[2] = {1, 2};
    const int32_t va[3] = {1, 2, 3}, vb[2] = {9, 8};
    assert_int_equal(coreai_npy_write(path, COREAI_DTYPE_I32, 1, a, va, err, sizeof err), 0);
    assert_int_equal(coreai_npy_write(path, COREAI_DTYPE_I32, 2, b, vb, err, sizeof err), 0);
    coreai_npy arr;
    assert_int_equal(coreai_npy_read(path, &arr, err, sizeof err), 0);
    assert_int_equal(arr.rank, 2);
    assert_memory_equal(arr.data, vb, sizeof vb);
    coreai_npy_free(&arr);
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    struct stat st;
    assert_int_equal(stat(tmp, &st), -1);
    remove(path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_all_dtypes_and_shapes),
        cmocka_unit_test(test_header_matches_numpy),
        cmocka_unit_test(test_read_version_2_and_3),
        cmocka_unit_test(test_read_accepts_valid_spellings),
        cmocka_unit_test(test_read_dtype_mapping),
        cmocka_unit_test(test_reject_malformed_headers),
        cmocka_unit_test(test_reject_bad_files),
        cmocka_unit_test(test_write_errors),
        cmocka_unit_test(test_write_replaces_atomically),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
