/*
 * Drives coreai_runner_main with argv arrays against hand-written program
 * descriptors: outputs, state updates, --repeat, entrypoint choice, and the
 * error messages and exit codes of every failure path.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <dirent.h>
#include <fcntl.h>
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

#include "coreai_runner.h"
#include "npy.h"

#ifndef COREAI_TEST_TMP
#define COREAI_TEST_TMP "/tmp"
#endif

/* ---- the hand-written model ---- */

static int g_calls;
static int32_t g_threads_seen; /* coreai_parallel_threads() in the last main call */

static const int64_t shape_2x3[2] = {2, 3};
static const int64_t shape_3[1] = {3};
static const int64_t shape_2[1] = {2};
static const int64_t shape_4[1] = {4};

/* main: sum = a + b, total = sum of all of sum, acc += 1 (state). */
static coreai_status add_invoke(void *ws, const void *const *in, void *const *st,
                                void *const *out) {
    ++g_calls;
    g_threads_seen = coreai_parallel_threads();
    if (ws == NULL || (uintptr_t)ws % 64 != 0) {
        return COREAI_STATUS_INVALID_ARGUMENT;
    }
    const float *a = in[0], *b = in[1];
    float *acc = st[0];
    float *sum = out[0], *total = out[1];
    *total = 0.0f;
    for (int i = 0; i < 6; ++i) {
        sum[i] = a[i] + b[i];
        *total += sum[i];
    }
    for (int i = 0; i < 3; ++i) {
        acc[i] += 1.0f;
    }
    return COREAI_STATUS_OK;
}

static coreai_status fail_invoke(void *ws, const void *const *in, void *const *st,
                                 void *const *out) {
    (void)ws;
    (void)in;
    (void)st;
    (void)out;
    ++g_calls;
    return COREAI_STATUS_UNSUPPORTED;
}

/* types: n = count(m), h2 = h, f2 = f, i2 = i + 1; uses 200 bytes of 128-aligned workspace. */
static coreai_status types_invoke(void *ws, const void *const *in, void *const *st,
                                  void *const *out) {
    (void)st;
    ++g_calls;
    if (ws == NULL || (uintptr_t)ws % 128 != 0) {
        return COREAI_STATUS_INVALID_ARGUMENT;
    }
    memset(ws, 0xab, 200);
    const unsigned char *m = in[0];
    int32_t *n = out[0];
    *n = 0;
    for (int i = 0; i < 3; ++i) {
        *n += m[i] != 0;
    }
    memcpy(out[1], in[1], 4);
    memcpy(out[2], in[2], 4);
    *(int64_t *)out[3] = *(const int64_t *)in[3] + 1;
    return COREAI_STATUS_OK;
}

static const coreai_tensor_desc main_inputs[] = {
    {"a", COREAI_DTYPE_F32, 2, shape_2x3},
    {"b", COREAI_DTYPE_F32, 2, shape_2x3},
};
static const coreai_tensor_desc main_states[] = {{"acc", COREAI_DTYPE_F32, 1, shape_3}};
static const coreai_tensor_desc main_outputs[] = {
    {"sum", COREAI_DTYPE_F32, 2, shape_2x3},
    {"total", COREAI_DTYPE_F32, 0, NULL},
};
static const coreai_tensor_desc fail_inputs[] = {{"x", COREAI_DTYPE_I32, 1, shape_4}};
static const coreai_tensor_desc fail_outputs[] = {{"y", COREAI_DTYPE_I32, 1, shape_4}};
static const coreai_tensor_desc types_inputs[] = {
    {"m", COREAI_DTYPE_BOOL, 1, shape_3},
    {"h", COREAI_DTYPE_BF16, 1, shape_2},
    {"f", COREAI_DTYPE_F16, 1, shape_2},
    {"i", COREAI_DTYPE_I64, 0, NULL},
};
static const coreai_tensor_desc types_outputs[] = {
    {"n", COREAI_DTYPE_I32, 0, NULL},
    {"h2", COREAI_DTYPE_BF16, 1, shape_2},
    {"f2", COREAI_DTYPE_F16, 1, shape_2},
    {"i2", COREAI_DTYPE_I64, 0, NULL},
};

static const coreai_entrypoint_desc model_entrypoints[] = {
    {"fail", 1, fail_inputs, 0, NULL, 1, fail_outputs, fail_invoke, NULL},
    {"main", 2, main_inputs, 1, main_states, 2, main_outputs, add_invoke, NULL},
    {"types", 4, types_inputs, 0, NULL, 4, types_outputs, types_invoke, NULL},
};
static const coreai_program model = {
    "testmodel", "0.0-test", 200, 128, 0, 3, model_entrypoints, 0, NULL, NULL, NULL,
};

/* One entrypoint, not called main, and no workspace. */
static const coreai_entrypoint_desc single_entrypoints[] = {
    {"step", 2, main_inputs, 1, main_states, 2, main_outputs, add_invoke, NULL},
};
static const coreai_program single = {
    "single", "0.0-test", 0, 64, 0, 1, single_entrypoints, 0, NULL, NULL, NULL,
};

/* Two entrypoints, neither called main. */
static const coreai_entrypoint_desc ambiguous_entrypoints[] = {
    {"first", 2, main_inputs, 1, main_states, 2, main_outputs, add_invoke, NULL},
    {"second", 2, main_inputs, 1, main_states, 2, main_outputs, add_invoke, NULL},
};
static const coreai_program ambiguous = {
    "ambiguous", "0.0-test", 0, 64, 0, 2, ambiguous_entrypoints, 0, NULL, NULL, NULL,
};

/* An output whose name would escape --out. */
static const coreai_tensor_desc evil_outputs[] = {{"../evil", COREAI_DTYPE_I32, 1, shape_4}};
static const coreai_entrypoint_desc evil_entrypoints[] = {
    {"main", 1, fail_inputs, 0, NULL, 1, evil_outputs, fail_invoke, NULL},
};
static const coreai_program evil = {"evil", "0.0-test", 0, 64, 0, 1, evil_entrypoints, 0, NULL, NULL, NULL};

/* ---- files and directories ---- */

static char g_base[512];

static void rm_tree(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) {
        return;
    }
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d != NULL) {
            struct dirent *e;
            while ((e = readdir(d)) != NULL) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
                    continue;
                }
                char child[1024];
                snprintf(child, sizeof child, "%s/%s", path, e->d_name);
                rm_tree(child);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    if (d == NULL) {
        return -1;
    }
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    }
    closedir(d);
    return n;
}

static const char *path_in(const char *name) {
    static char bufs[8][1024];
    static int next;
    char *buf = bufs[next++ % 8];
    snprintf(buf, sizeof bufs[0], "%s/%s", g_base, name);
    return buf;
}

static int setup(void **state) {
    (void)state;
    mkdir(COREAI_TEST_TMP, 0777);
    snprintf(g_base, sizeof g_base, "%s/test_runner_main_%ld", COREAI_TEST_TMP, (long)getpid());
    rm_tree(g_base);
    if (mkdir(g_base, 0777) != 0) {
        return -1;
    }
    if (mkdir(path_in("out"), 0777) != 0) {
        return -1;
    }
    g_calls = 0;
    return 0;
}

static int teardown(void **state) {
    (void)state;
    rm_tree(g_base);
    return 0;
}

static void write_npy(const char *name, coreai_dtype dt, int32_t rank, const int64_t *shape,
                      const void *data) {
    char err[512];
    int rc = coreai_npy_write(path_in(name), dt, rank, shape, data, err, sizeof err);
    if (rc != 0) {
        print_error("%s\n", err);
    }
    assert_int_equal(rc, 0);
}

static const float a_vals[6] = {1, 2, 3, 4, 5, 6};
static const float b_vals[6] = {0.5f, 0.25f, -3, 10, 0, -6};
static const float acc_vals[3] = {10, 20, 30};

static void write_main_inputs(void) {
    write_npy("a.npy", COREAI_DTYPE_F32, 2, shape_2x3, a_vals);
    write_npy("b.npy", COREAI_DTYPE_F32, 2, shape_2x3, b_vals);
    write_npy("acc.npy", COREAI_DTYPE_F32, 1, shape_3, acc_vals);
}

/* The arguments naming main's inputs, "a=<dir>/a.npy" and so on. */
typedef struct main_args {
    char a[1100], b[1100], acc[1100];
} main_args;

/* Writes main's inputs; returns the --in / --state arguments for them. */
static main_args write_main_args(void) {
    main_args m;
    write_main_inputs();
    snprintf(m.a, sizeof m.a, "a=%s", path_in("a.npy"));
    snprintf(m.b, sizeof m.b, "b=%s", path_in("b.npy"));
    snprintf(m.acc, sizeof m.acc, "acc=%s", path_in("acc.npy"));
    return m;
}

static void expect_npy(const char *path, coreai_dtype dt, int32_t rank, const int64_t *shape,
                       const void *data, size_t nbytes) {
    coreai_npy arr;
    char err[512] = "";
    int rc = coreai_npy_read(path, &arr, err, sizeof err);
    if (rc != 0) {
        print_error("%s\n", err);
    }
    assert_int_equal(rc, 0);
    assert_int_equal(arr.dtype, dt);
    assert_int_equal(arr.rank, rank);
    for (int32_t i = 0; i < rank; ++i) {
        assert_int_equal(arr.shape[i], shape[i]);
    }
    assert_int_equal(arr.nbytes, nbytes);
    assert_memory_equal(arr.data, data, nbytes);
    coreai_npy_free(&arr);
}

static void expect_main_outputs(const char *dir) {
    char p[1024];
    const float sum[6] = {1.5f, 2.25f, 0, 14, 5, 0};
    const float total = 22.75f;
    const float acc[3] = {11, 21, 31};
    snprintf(p, sizeof p, "%s/sum.npy", dir);
    expect_npy(p, COREAI_DTYPE_F32, 2, shape_2x3, sum, sizeof sum);
    snprintf(p, sizeof p, "%s/total.npy", dir);
    expect_npy(p, COREAI_DTYPE_F32, 0, NULL, &total, sizeof total);
    snprintf(p, sizeof p, "%s/acc.npy", dir);
    expect_npy(p, COREAI_DTYPE_F32, 1, shape_3, acc, sizeof acc);
    assert_int_equal(count_entries(dir), 3); /* no temporaries left */
}

/* ---- running the CLI with captured stdout/stderr ---- */

typedef struct cli_result {
    int rc;
    char out[8192];
    char err[8192];
} cli_result;

static void slurp(const char *path, char *buf, size_t len) {
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    size_t n = fread(buf, 1, len - 1, fp);
    buf[n] = '\0';
    fclose(fp);
}

/* Runs the runner with argv[0] = "/usr/local/bin/runner" and the NULL-terminated ARGS. */
static void run_cli(const coreai_program *program, cli_result *r, ...) {
    char *argv[64];
    int argc = 0;
    argv[argc++] = strdup("/usr/local/bin/runner");
    va_list ap;
    va_start(ap, r);
    const char *arg;
    while ((arg = va_arg(ap, const char *)) != NULL) {
        assert_true(argc < 63);
        argv[argc++] = strdup(arg);
    }
    va_end(ap);
    argv[argc] = NULL;

    char out_path[1024], err_path[1024];
    snprintf(out_path, sizeof out_path, "%s/captured.stdout", g_base);
    snprintf(err_path, sizeof err_path, "%s/captured.stderr", g_base);
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(saved_out >= 0 && saved_err >= 0 && fo >= 0 && fe >= 0);
    dup2(fo, 1);
    dup2(fe, 2);
    close(fo);
    close(fe);
    r->rc = coreai_runner_main(argc, argv, program);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    slurp(out_path, r->out, sizeof r->out);
    slurp(err_path, r->err, sizeof r->err);
    unlink(out_path);
    unlink(err_path);
    for (int i = 0; i < argc; ++i) {
        free(argv[i]);
    }
}

static void expect_contains(const char *haystack, const char *needle) {
    if (strstr(haystack, needle) == NULL) {
        print_error("expected to find '%s' in:\n%s\n", needle, haystack);
        fail();
    }
}

/* ---- tests ---- */

static void test_success(void **state) {
    (void)state;
    write_main_inputs();
    cli_result r;
    run_cli(&model, &r, "--in", path_in("a.npy"), "--in", path_in("b.npy"), "--state",
            path_in("acc.npy"), "--out", path_in("out"), NULL);
    /* (the bindings above are wrong on purpose: no NAME=) */
    assert_int_equal(r.rc, 2);
    expect_contains(r.err, "runner: error: --in expects NAME=FILE.npy");

    char a[1100], b[1100], acc[1100];
    snprintf(a, sizeof a, "a=%s", path_in("a.npy"));
    snprintf(b, sizeof b, "b=%s", path_in("b.npy"));
    snprintf(acc, sizeof acc, "acc=%s", path_in("acc.npy"));
    run_cli(&model, &r, "--in", a, "--state", acc, "--in", b, "--out", path_in("out"), NULL);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.err, "");
    assert_string_equal(r.out, ""); /* no latency line without --repeat */
    assert_int_equal(g_calls, 1);
    expect_main_outputs(path_in("out"));

    /* Running again overwrites the same files. */
    run_cli(&model, &r, "--in=" "a=x", "--out", path_in("out"), NULL);
    assert_int_equal(r.rc, 2); /* b and acc missing */
    char a_eq[1200];
    snprintf(a_eq, sizeof a_eq, "--in=%s", a);
    char out_eq[1100];
    snprintf(out_eq, sizeof out_eq, "--out=%s", path_in("out"));
    run_cli(&model, &r, a_eq, "--in", b, "--state", acc, out_eq, "--entrypoint=main", NULL);
    assert_int_equal(r.rc, 0);
    assert_int_equal(g_calls, 2);
    expect_main_outputs(path_in("out"));
}

static void test_out_dir_created(void **state) {
    (void)state;
    const main_args m = write_main_args();
    const char *a = m.a, *b = m.b, *acc = m.acc;
    cli_result r;
    run_cli(&model, &r, "--in", a, "--in", b, "--state", acc, "--out", path_in("fresh"), NULL);
    assert_int_equal(r.rc, 0);
    expect_main_outputs(path_in("fresh"));

    /* Only one level is created; a missing parent is an error after the run. */
    run_cli(&model, &r, "--in", a, "--in", b, "--state", acc, "--out", path_in("no/such"), NULL);
    assert_int_equal(r.rc, 1);
    expect_contains(r.err, "runner: error: --out ");
    expect_contains(r.err, "cannot create directory");
    struct stat st;
    assert_int_equal(stat(path_in("no"), &st), -1);

    /* --out naming a regular file fails before running. */
    int calls = g_calls;
    run_cli(&model, &r, "--in", a, "--in", b, "--state", acc, "--out", path_in("a.npy"), NULL);
    assert_int_equal(r.rc, 1);
    expect_contains(r.err, "not a directory");
    assert_int_equal(g_calls, calls);
}

static void test_repeat(void **state) {
    (void)state;
    const main_args m = write_main_args();
    const char *a = m.a, *b = m.b, *acc = m.acc;
    cli_result r;
    run_cli(&model, &r, "--repeat", "4", "--in", a, "--in", b, "--state", acc, "--out",
            path_in("out"), NULL);
    assert_int_equal(r.rc, 0);
    assert_int_equal(g_calls, 5); /* one call plus four timed ones */
    double mn = -1, med = -1;
    char tail = 0;
    assert_int_equal(sscanf(r.out, "latency_us min=%lf median=%lf%c", &mn, &med, &tail), 3);
    assert_int_equal(tail, '\n');
    assert_true(mn >= 0 && med >= mn);
    /* exactly one line, %.3f formatting */
    assert_non_null(strchr(r.out, '\n'));
    assert_int_equal(strchr(r.out, '\n')[1], '\0');
    const char *dot = strchr(r.out, '.');
    assert_non_null(dot);
    assert_true(dot[1] >= '0' && dot[3] >= '0' && dot[4] == ' ');
    /* states restart from the file each run: the result is that of one call */
    expect_main_outputs(path_in("out"));
}

static void test_threads(void **state) {
    (void)state;
    const main_args m = write_main_args();
    const char *a = m.a, *b = m.b, *acc = m.acc;
    cli_result r;
    run_cli(&model, &r, "--threads", "3", "--in", a, "--in", b, "--state", acc, "--out", path_in("out"), NULL);
    assert_int_equal(r.rc, 0);
    assert_int_equal(g_threads_seen, 3); /* the pool was installed for the call */
    assert_int_equal(coreai_parallel_threads(), 1); /* and removed after it */
    expect_main_outputs(path_in("out"));
    run_cli(&model, &r, "--in", a, "--in", b, "--state", acc, "--out", path_in("out"), NULL);
    assert_int_equal(r.rc, 0);
    assert_int_equal(g_threads_seen, 1);
}

/* COREAI_ISA: a variant the build has not is an error naming the ones it has. */
static void test_isa_env(void **state) {
    (void)state;
    const main_args m = write_main_args();
    const char *a = m.a, *b = m.b, *acc = m.acc;
    cli_result r;
    setenv("COREAI_ISA", "no-such-isa", 1);
    const int calls = g_calls;
    run_cli(&model, &r, "--in", a, "--in", b, "--state", acc, "--out", path_in("out"), NULL);
    assert_int_equal(r.rc, 1);
    expect_contains(r.err, "runner: error: COREAI_ISA=no-such-isa: no such ISA variant (variants: ");
    expect_contains(r.err, coreai_runtime_isa_name(0));
    assert_int_equal(g_calls, calls);
    setenv("COREAI_ISA", coreai_runtime_isa_name(0), 1);
    run_cli(&model, &r, "--in", a, "--in", b, "--state", acc, "--out", path_in("out"), NULL);
    assert_int_equal(r.rc, 0);
    assert_string_equal(coreai_runtime_isa(), coreai_runtime_isa_name(0));
    unsetenv("COREAI_ISA");
    (void)coreai_runtime_set_isa(NULL);
}

static void test_help(void **state) {
    (void)state;
    cli_result r;
    run_cli(&model, &r, "--in", "a=x.npy", "--help", NULL);
    assert_int_equal(r.rc, 0);
    expect_contains(r.out, "usage: runner [--entrypoint NAME] --in NAME=FILE.npy");
    expect_contains(r.out, "entrypoints:\n  fail\n");
    expect_contains(r.out, "  main\n    in     a: f32[2,3]\n    in     b: f32[2,3]\n"
                           "    state  acc: f32[3]\n    out    sum: f32[2,3]\n"
                           "    out    total: f32[]\n");
    expect_contains(r.out, "    in     h: bf16[2]\n");
    assert_string_equal(r.err, "");
    assert_int_equal(g_calls, 0);
}

static void test_usage_errors(void **state) {
    (void)state;
    write_main_inputs();
    char a[1100], b[1100], acc[1100], acc_in[1100], a_state[1100];
    snprintf(a, sizeof a, "a=%s", path_in("a.npy"));
    snprintf(b, sizeof b, "b=%s", path_in("b.npy"));
    snprintf(acc, sizeof acc, "acc=%s", path_in("acc.npy"));
    snprintf(acc_in, sizeof acc_in, "acc=%s", path_in("acc.npy"));
    snprintf(a_state, sizeof a_state, "a=%s", path_in("a.npy"));
    const char *out = path_in("out");
    cli_result r;

#define EXPECT_USAGE(needle, ...)                                                                  \
    do {                                                                                           \
        run_cli(&model, &r, __VA_ARGS__, NULL);                                                    \
        assert_int_equal(r.rc, 2);                                                                 \
        expect_contains(r.err, "runner: error: ");                                                 \
        expect_contains(r.err, needle);                                                            \
        expect_contains(r.err, "Try 'runner --help'");                                             \
        assert_string_equal(r.out, "");                                                            \
    } while (0)

    run_cli(&model, &r, NULL);
    assert_int_equal(r.rc, 2);
    expect_contains(r.err, "runner: error: missing --out DIR");

    EXPECT_USAGE("unknown option '--bogus'", "--bogus", "--out", out);
    EXPECT_USAGE("unexpected argument 'stray'", "stray", "--out", out);
    EXPECT_USAGE("--in needs a value", "--out", out, "--in");
    EXPECT_USAGE("--in expects NAME=FILE.npy, got 'a='", "--in", "a=", "--out", out);
    EXPECT_USAGE("--state expects NAME=FILE.npy, got '=x.npy'", "--state", "=x.npy", "--out", out);
    EXPECT_USAGE("--repeat expects an integer from 1 to", "--repeat", "0", "--out", out);
    EXPECT_USAGE("--repeat expects an integer from 1 to", "--repeat", "-3", "--out", out);
    EXPECT_USAGE("--repeat expects an integer from 1 to", "--repeat", "3x", "--out", out);
    EXPECT_USAGE("--repeat expects an integer from 1 to", "--repeat", "", "--out", out);
    EXPECT_USAGE("--repeat expects an integer from 1 to", "--repeat", "99999999999999999999",
                 "--out", out);
    EXPECT_USAGE("--threads expects an integer from 1 to 256", "--threads", "0", "--out", out);
    EXPECT_USAGE("--threads expects an integer from 1 to 256", "--threads", "257", "--out", out);
    EXPECT_USAGE("--threads expects an integer from 1 to 256", "--threads", "2x", "--out", out);
    EXPECT_USAGE("--threads given more than once", "--threads", "2", "--threads", "2", "--out", out);
    EXPECT_USAGE("--out given more than once", "--out", out, "--out", out);
    EXPECT_USAGE("--entrypoint given more than once", "--entrypoint", "main", "--entrypoint",
                 "main", "--out", out);
    EXPECT_USAGE("unknown entrypoint 'nope' (entrypoints: fail, main, types)", "--entrypoint",
                 "nope", "--out", out);

    EXPECT_USAGE("missing input 'b' of entrypoint 'main' (--in b=FILE.npy)", "--in", a, "--state",
                 acc, "--out", out);
    EXPECT_USAGE("missing state 'acc' of entrypoint 'main' (--state acc=FILE.npy)", "--in", a,
                 "--in", b, "--out", out);
    EXPECT_USAGE("unknown input 'c' for entrypoint 'main' (inputs: a, b)", "--in", a, "--in", b,
                 "--in", "c=x.npy", "--state", acc, "--out", out);
    EXPECT_USAGE("unknown state 'zz' for entrypoint 'main' (states: acc)", "--in", a, "--in", b,
                 "--state", "zz=x.npy", "--state", acc, "--out", out);
    EXPECT_USAGE("input 'a' given more than once", "--in", a, "--in", a, "--in", b, "--state", acc,
                 "--out", out);
    EXPECT_USAGE("state 'acc' given more than once", "--in", a, "--in", b, "--state", acc,
                 "--state", acc, "--out", out);
    EXPECT_USAGE("'acc' is a state of entrypoint 'main': pass it with --state", "--in", a, "--in",
                 b, "--in", acc_in, "--out", out);
    EXPECT_USAGE("'a' is an input of entrypoint 'main': pass it with --in", "--in", b, "--state",
                 a_state, "--out", out);
    EXPECT_USAGE("unknown input 'a' for entrypoint 'fail' (inputs: x)", "--entrypoint", "fail",
                 "--in", a, "--out", out);
#undef EXPECT_USAGE

    assert_int_equal(g_calls, 0);
    assert_int_equal(count_entries(out), 0);
}

static void test_file_errors(void **state) {
    (void)state;
    write_main_inputs();
    const float three[3] = {1, 2, 3};
    const int32_t ints[6] = {1, 2, 3, 4, 5, 6};
    write_npy("a_short.npy", COREAI_DTYPE_F32, 1, shape_3, three);
    write_npy("b_int.npy", COREAI_DTYPE_I32, 2, shape_2x3, ints);
    write_npy("acc_scalar.npy", COREAI_DTYPE_F32, 0, NULL, three);
    FILE *fp = fopen(path_in("garbage.npy"), "wb");
    assert_non_null(fp);
    fputs("not a numpy file", fp);
    fclose(fp);

    char a[1100], b[1100], acc[1100], a_short[1100], b_int[1100], acc_scalar[1100];
    char garbage[1100], missing[1100];
    snprintf(a, sizeof a, "a=%s", path_in("a.npy"));
    snprintf(b, sizeof b, "b=%s", path_in("b.npy"));
    snprintf(acc, sizeof acc, "acc=%s", path_in("acc.npy"));
    snprintf(a_short, sizeof a_short, "a=%s", path_in("a_short.npy"));
    snprintf(b_int, sizeof b_int, "b=%s", path_in("b_int.npy"));
    snprintf(acc_scalar, sizeof acc_scalar, "acc=%s", path_in("acc_scalar.npy"));
    snprintf(garbage, sizeof garbage, "b=%s", path_in("garbage.npy"));
    snprintf(missing, sizeof missing, "acc=%s", path_in("missing.npy"));
    const char *out = path_in("out");
    cli_result r;

    run_cli(&model, &r, "--in", a_short, "--in", b, "--state", acc, "--out", out, NULL);
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.err, "runner: error: a: expected f32[2,3], got f32[3]\n");

    run_cli(&model, &r, "--in", a, "--in", b_int, "--state", acc, "--out", out, NULL);
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.err, "runner: error: b: expected f32[2,3], got i32[2,3]\n");

    run_cli(&model, &r, "--in", a, "--in", b, "--state", acc_scalar, "--out", out, NULL);
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.err, "runner: error: acc: expected f32[3], got f32[]\n");

    run_cli(&model, &r, "--in", a, "--in", garbage, "--state", acc, "--out", out, NULL);
    assert_int_equal(r.rc, 1);
    expect_contains(r.err, "runner: error: b: ");
    expect_contains(r.err, "not a .npy file");

    run_cli(&model, &r, "--in", a, "--in", b, "--state", missing, "--out", out, NULL);
    assert_int_equal(r.rc, 1);
    expect_contains(r.err, "runner: error: acc: ");
    expect_contains(r.err, "cannot open");

    assert_int_equal(g_calls, 0);
    assert_int_equal(count_entries(out), 0);
}

static void test_invoke_failure(void **state) {
    (void)state;
    const int32_t x[4] = {1, 2, 3, 4};
    write_npy("x.npy", COREAI_DTYPE_I32, 1, shape_4, x);
    char xb[1100];
    snprintf(xb, sizeof xb, "x=%s", path_in("x.npy"));
    cli_result r;
    run_cli(&model, &r, "--entrypoint", "fail", "--in", xb, "--out", path_in("out"), NULL);
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.err, "runner: error: entrypoint 'fail' failed: unsupported (status 2)\n");
    assert_int_equal(g_calls, 1);
    assert_int_equal(count_entries(path_in("out")), 0); /* nothing written */

    /* A missing --out directory is not created when the run fails. */
    run_cli(&model, &r, "--entrypoint", "fail", "--in", xb, "--out", path_in("never"), NULL);
    assert_int_equal(r.rc, 1);
    struct stat st;
    assert_int_equal(stat(path_in("never"), &st), -1);
}

static void test_other_dtypes(void **state) {
    (void)state;
    const unsigned char m[3] = {1, 0, 1};
    const uint16_t h[2] = {0x3f80, 0xc040}; /* bf16 1.0, -3.0 */
    const uint16_t f[2] = {0x3c00, 0x7bff}; /* f16 1.0, 65504 */
    const int64_t i = -5;
    write_npy("m.npy", COREAI_DTYPE_BOOL, 1, shape_3, m);
    write_npy("h.npy", COREAI_DTYPE_BF16, 1, shape_2, h);
    write_npy("f.npy", COREAI_DTYPE_F16, 1, shape_2, f);
    write_npy("i.npy", COREAI_DTYPE_I64, 0, NULL, &i);
    char mb[1100], hb[1100], fb[1100], ib[1100], fb_wrong[1100];
    snprintf(mb, sizeof mb, "m=%s", path_in("m.npy"));
    snprintf(hb, sizeof hb, "h=%s", path_in("h.npy"));
    snprintf(fb, sizeof fb, "f=%s", path_in("f.npy"));
    snprintf(ib, sizeof ib, "i=%s", path_in("i.npy"));
    snprintf(fb_wrong, sizeof fb_wrong, "f=%s", path_in("h.npy"));
    const char *out = path_in("out");
    cli_result r;

    /* bf16 ('<u2') where f16 ('<f2') is expected */
    run_cli(&model, &r, "--entrypoint", "types", "--in", mb, "--in", hb, "--in", fb_wrong, "--in",
            ib, "--out", out, NULL);
    assert_int_equal(r.rc, 1);
    assert_string_equal(r.err, "runner: error: f: expected f16[2], got bf16[2]\n");

    run_cli(&model, &r, "--entrypoint", "types", "--in", mb, "--in", hb, "--in", fb, "--in", ib,
            "--out", out, NULL);
    assert_int_equal(r.rc, 0);
    const int32_t n = 2;
    const int64_t i2 = -4;
    char p[1100];
    snprintf(p, sizeof p, "%s/n.npy", out);
    expect_npy(p, COREAI_DTYPE_I32, 0, NULL, &n, sizeof n);
    snprintf(p, sizeof p, "%s/h2.npy", out);
    expect_npy(p, COREAI_DTYPE_BF16, 1, shape_2, h, sizeof h);
    snprintf(p, sizeof p, "%s/f2.npy", out);
    expect_npy(p, COREAI_DTYPE_F16, 1, shape_2, f, sizeof f);
    snprintf(p, sizeof p, "%s/i2.npy", out);
    expect_npy(p, COREAI_DTYPE_I64, 0, NULL, &i2, sizeof i2);
    assert_int_equal(count_entries(out), 4);
}

static void test_entrypoint_choice(void **state) {
    (void)state;
    const main_args m = write_main_args();
    const char *a = m.a, *b = m.b, *acc = m.acc;
    cli_result r;

    /* The only entrypoint is the default, whatever its name; workspace size 0 is fine. */
    run_cli(&single, &r, "--in", a, "--in", b, "--state", acc, "--out", path_in("out"), NULL);
    assert_int_equal(r.rc, 0);
    expect_main_outputs(path_in("out"));

    /* Several and none is main: must choose. */
    run_cli(&ambiguous, &r, "--in", a, "--in", b, "--state", acc, "--out", path_in("out2"), NULL);
    assert_int_equal(r.rc, 2);
    expect_contains(r.err, "runner: error: the program has 2 entrypoints and none is 'main'");
    expect_contains(r.err, "(entrypoints: first, second)");
    run_cli(&ambiguous, &r, "--entrypoint", "second", "--in", a, "--in", b, "--state", acc,
            "--out", path_in("out2"), NULL);
    assert_int_equal(r.rc, 0);
    expect_main_outputs(path_in("out2"));
}

static void test_bad_output_name(void **state) {
    (void)state;
    const int32_t x[4] = {1, 2, 3, 4};
    write_npy("x.npy", COREAI_DTYPE_I32, 1, shape_4, x);
    char xb[1100];
    snprintf(xb, sizeof xb, "x=%s", path_in("x.npy"));
    cli_result r;
    run_cli(&evil, &r, "--in", xb, "--out", path_in("out"), NULL);
    assert_int_equal(r.rc, 1);
    expect_contains(r.err, "cannot write '../evil' to --out: not a valid file name");
    assert_int_equal(g_calls, 0);
}

static void test_invalid_program(void **state) {
    (void)state;
    static const int64_t neg[1] = {-1};
    static const coreai_tensor_desc bad_inputs[] = {{"x", COREAI_DTYPE_I32, 1, neg}};
    static const coreai_entrypoint_desc bad_eps[] = {
        {"main", 1, bad_inputs, 0, NULL, 0, NULL, fail_invoke, NULL},
    };
    static const coreai_program bad = {"bad", "0", 0, 64, 0, 1, bad_eps, 0, NULL, NULL, NULL};
    cli_result r;
    run_cli(&bad, &r, "--out", path_in("out"), NULL);
    assert_int_equal(r.rc, 1);
    expect_contains(r.err, "runner: error: invalid program descriptor");
    run_cli(NULL, &r, "--out", path_in("out"), NULL);
    assert_int_equal(r.rc, 1);
    /* argc 0 / argv NULL does not crash */
    assert_int_equal(coreai_runner_main(0, NULL, NULL), 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_success, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_dir_created, setup, teardown),
        cmocka_unit_test_setup_teardown(test_repeat, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_isa_env, setup, teardown),
        cmocka_unit_test_setup_teardown(test_help, setup, teardown),
        cmocka_unit_test_setup_teardown(test_usage_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invoke_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_dtypes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_entrypoint_choice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_output_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_program, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
