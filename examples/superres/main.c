/*
 * superres: upscales a grayscale image with the generated CNN.
 *
 *   superres-app [options] INPUT.pgm OUTPUT
 *
 * INPUT is an 8-bit binary PGM (P5, maxval 255) of the size the model was
 * exported for (SUPERRES_IN_H x SUPERRES_IN_W, taken from the generated
 * descriptor). OUTPUT is written as PNG when its name ends in ".png",
 * else as PGM (P5). Options:
 *
 *   --side-by-side FILE.png  also write [nearest-neighbour | CNN] next to
 *                            each other, at the output resolution
 *   --reference FILE.npy     compare the float output with PyTorch's
 *                            (f32 [1, 1, rH, rW]); fail above the tolerance
 *   --tolerance T            max abs error allowed with --reference (1e-5)
 *
 * Pixels map to [0, 1] as v / 255; the output is clamped to [0, 1] and
 * rounded to 8 bits only for the image files, never for the comparison.
 * The PNG writer is self-contained: zlib "stored" (uncompressed) deflate
 * blocks, CRC-32 and Adler-32 computed here, no library.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"
#include "superres.h"

/* Built with WEIGHTS_FORMAT external (SUPERRES_WEIGHTS_SIZE is then defined):
 * the blob is read and checked at start-up and every call takes it. */
#ifdef SUPERRES_WEIGHTS_SIZE
#include "weights_file.h"
static void *weights;
#define WEIGHTS_ARG , weights
#define WEIGHTS_LOAD() \
    ((weights = example_weights_load(EXAMPLE_WEIGHTS_FILE, SUPERRES_WEIGHTS_ALIGNMENT, superres_weights_check)) != NULL)
#else
#define WEIGHTS_ARG
#define WEIGHTS_LOAD() 1
#endif

/* The model's scratch memory (4-5 MB for 128x128): static, no allocation. */
static COREAI_ALIGNED(COREAI_ALIGNMENT) unsigned char
    workspace[SUPERRES_WORKSPACE_SIZE > 0 ? SUPERRES_WORKSPACE_SIZE : 1];

/* ---------------------------------------------------------------- PGM ---- */

/* Next header token of a PGM (skips whitespace and # comments). */
static int pgm_token(FILE *f, char *buf, size_t size)
{
    int c;
    size_t n = 0;
    for (;;) {
        c = fgetc(f);
        if (c == '#') {
            while (c != EOF && c != '\n' && c != '\r')
                c = fgetc(f);
        }
        if (c == EOF)
            return -1;
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v')
            break;
    }
    while (c != EOF && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') {
        if (n + 1 >= size)
            return -1;
        buf[n++] = (char)c;
        c = fgetc(f);
    }
    buf[n] = '\0';
    return 0; /* the single whitespace after the last token has been consumed */
}

static int parse_dim(const char *s, long max, long *out)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < 1 || v > max)
        return -1;
    *out = v;
    return 0;
}

/* Reads an 8-bit P5 PGM into a malloc'ed buffer. */
static unsigned char *read_pgm(const char *path, long *width, long *height)
{
    char tok[4][32];
    long maxval = 0;
    unsigned char *pixels = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "error: %s: %s\n", path, strerror(errno));
        return NULL;
    }
    for (int i = 0; i < 4; i++) {
        if (pgm_token(f, tok[i], sizeof tok[i]) != 0)
            goto bad;
    }
    if (strcmp(tok[0], "P5") != 0 || parse_dim(tok[1], 1L << 15, width) != 0 ||
        parse_dim(tok[2], 1L << 15, height) != 0 || parse_dim(tok[3], 65535, &maxval) != 0 ||
        maxval != 255)
        goto bad;
    pixels = malloc((size_t)*width * (size_t)*height);
    if (!pixels) {
        fprintf(stderr, "error: out of memory\n");
        fclose(f);
        return NULL;
    }
    if (fread(pixels, 1, (size_t)*width * (size_t)*height, f) != (size_t)*width * (size_t)*height) {
        fprintf(stderr, "error: %s: truncated pixel data\n", path);
        free(pixels);
        fclose(f);
        return NULL;
    }
    fclose(f);
    return pixels;
bad:
    fprintf(stderr, "error: %s: not an 8-bit binary PGM (P5 with maxval 255)\n", path);
    fclose(f);
    return NULL;
}

static int write_pgm(const char *path, const unsigned char *pixels, long width, long height)
{
    FILE *f = fopen(path, "wb");
    size_t n = (size_t)width * (size_t)height;
    int ok;
    if (!f) {
        fprintf(stderr, "error: %s: %s\n", path, strerror(errno));
        return -1;
    }
    ok = fprintf(f, "P5\n%ld %ld\n255\n", width, height) > 0 && fwrite(pixels, 1, n, f) == n;
    ok = (fclose(f) == 0) && ok;
    if (!ok)
        fprintf(stderr, "error: %s: write failed\n", path);
    return ok ? 0 : -1;
}

/* ---------------------------------------------------------------- PNG ---- */

static uint32_t crc_table[256];

static void crc_init(void)
{
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++)
            c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[n] = c;
    }
}

static uint32_t crc_update(uint32_t crc, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        crc = crc_table[(crc ^ p[i]) & 0xFFu] ^ (crc >> 8);
    return crc;
}

/* A PNG chunk being written: length and CRC are filled in by png_end. */
typedef struct png_writer {
    FILE *f;
    uint32_t crc;
    int ok;
} png_writer;

static void put_be32(unsigned char *b, uint32_t v)
{
    b[0] = (unsigned char)(v >> 24);
    b[1] = (unsigned char)(v >> 16);
    b[2] = (unsigned char)(v >> 8);
    b[3] = (unsigned char)v;
}

static void png_bytes(png_writer *w, const void *data, size_t n)
{
    w->crc = crc_update(w->crc, data, n);
    if (fwrite(data, 1, n, w->f) != n)
        w->ok = 0;
}

static void png_begin(png_writer *w, const char type[4], uint32_t length)
{
    unsigned char len[4];
    put_be32(len, length);
    if (fwrite(len, 1, 4, w->f) != 4)
        w->ok = 0;
    w->crc = 0xFFFFFFFFu;
    png_bytes(w, type, 4);
}

static void png_end(png_writer *w)
{
    unsigned char crc[4];
    put_be32(crc, w->crc ^ 0xFFFFFFFFu);
    if (fwrite(crc, 1, 4, w->f) != 4)
        w->ok = 0;
}

/* 8-bit grayscale PNG; the image data is a zlib stream of stored blocks. */
static int write_png(const char *path, const unsigned char *pixels, long width, long height)
{
    static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    const size_t row = (size_t)width + 1; /* filter byte 0 ("none") + pixels */
    const size_t raw = row * (size_t)height;
    const size_t max_block = 65535;
    const size_t n_blocks = raw == 0 ? 1 : (raw + max_block - 1) / max_block;
    const size_t idat = 2 + n_blocks * 5 + raw + 4;
    unsigned char ihdr[13], b[5];
    uint32_t s1 = 1, s2 = 0; /* Adler-32 */
    size_t pos = 0;          /* position in the raw (filtered) stream */
    png_writer w;

    if (idat > 0x7FFFFFFFu) {
        fprintf(stderr, "error: %s: image too large for this PNG writer\n", path);
        return -1;
    }
    w.f = fopen(path, "wb");
    w.ok = 1;
    if (!w.f) {
        fprintf(stderr, "error: %s: %s\n", path, strerror(errno));
        return -1;
    }
    crc_init();
    if (fwrite(signature, 1, 8, w.f) != 8)
        w.ok = 0;

    put_be32(ihdr, (uint32_t)width);
    put_be32(ihdr + 4, (uint32_t)height);
    ihdr[8] = 8;  /* bit depth */
    ihdr[9] = 0;  /* colour type: grayscale */
    ihdr[10] = 0; /* deflate */
    ihdr[11] = 0; /* adaptive filtering (filter type 0 on every row) */
    ihdr[12] = 0; /* no interlace */
    png_begin(&w, "IHDR", 13);
    png_bytes(&w, ihdr, 13);
    png_end(&w);

    png_begin(&w, "IDAT", (uint32_t)idat);
    b[0] = 0x78; /* zlib: deflate, 32K window */
    b[1] = 0x01; /* no preset dictionary, fastest; (0x78 * 256 + 0x01) % 31 == 0 */
    png_bytes(&w, b, 2);
    for (size_t k = 0; k < n_blocks; k++) {
        size_t len = raw - pos < max_block ? raw - pos : max_block;
        b[0] = (unsigned char)(k + 1 == n_blocks); /* BFINAL, BTYPE 00 = stored */
        b[1] = (unsigned char)(len & 0xFF);
        b[2] = (unsigned char)(len >> 8);
        b[3] = (unsigned char)(~len & 0xFF);
        b[4] = (unsigned char)((~len >> 8) & 0xFF);
        png_bytes(&w, b, 5);
        for (size_t end = pos + len; pos < end;) {
            size_t y = pos / row, x = pos % row;
            size_t run = row - x < end - pos ? row - x : end - pos;
            const unsigned char zero = 0;
            const unsigned char *src = x == 0 ? &zero : pixels + y * (size_t)width + (x - 1);
            if (x == 0)
                run = 1; /* the filter byte */
            png_bytes(&w, src, run);
            for (size_t i = 0; i < run; i++) {
                s1 = (s1 + src[i]) % 65521u;
                s2 = (s2 + s1) % 65521u;
            }
            pos += run;
        }
    }
    put_be32(b, (s2 << 16) | s1);
    png_bytes(&w, b, 4);
    png_end(&w);

    png_begin(&w, "IEND", 0);
    png_end(&w);
    w.ok = (fclose(w.f) == 0) && w.ok;
    if (!w.ok)
        fprintf(stderr, "error: %s: write failed\n", path);
    return w.ok ? 0 : -1;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int write_image(const char *path, const unsigned char *pixels, long width, long height)
{
    if (ends_with(path, ".png") || ends_with(path, ".PNG"))
        return write_png(path, pixels, width, height);
    return write_pgm(path, pixels, width, height);
}

static unsigned char to_u8(float v)
{
    if (!(v > 0.0f)) /* also NaN */
        return 0;
    if (v >= 1.0f)
        return 255;
    return (unsigned char)lrintf(v * 255.0f);
}

/* --------------------------------------------------------------- main ---- */

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--side-by-side FILE.png] [--reference FILE.npy] [--tolerance T] "
            "INPUT.pgm OUTPUT.{pgm,png}\n",
            argv0);
}

int main(int argc, char **argv)
{
    const char *input_path = NULL, *output_path = NULL, *side_path = NULL, *reference_path = NULL;
    double tolerance = 1e-5;
    const coreai_program *program = superres_program();
    const coreai_entrypoint_desc *entry = coreai_program_find_entrypoint(program, "main");
    long in_w, in_h, out_w, out_h, width, height;
    unsigned char *pixels = NULL, *out_pixels = NULL;
    float *input = NULL, *output = NULL;
    int rc = 1;
    coreai_status status;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--side-by-side") == 0 && i + 1 < argc) {
            side_path = argv[++i];
        } else if (strcmp(argv[i], "--reference") == 0 && i + 1 < argc) {
            reference_path = argv[++i];
        } else if (strcmp(argv[i], "--tolerance") == 0 && i + 1 < argc) {
            char *end;
            tolerance = strtod(argv[++i], &end);
            if (*end || !(tolerance >= 0)) {
                usage(argv[0]);
                return 2;
            }
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            usage(argv[0]);
            return 2;
        } else if (!input_path) {
            input_path = argv[i];
        } else if (!output_path) {
            output_path = argv[i];
        } else {
            usage(argv[0]);
            return 2;
        }
    }
    if (!input_path || !output_path) {
        usage(argv[0]);
        return 2;
    }
    if (!WEIGHTS_LOAD())
        return 1;

    /* The image size is fixed when the model is exported: take it from the
     * descriptor (image f32[1, 1, H, W] -> upscaled f32[1, 1, rH, rW]). */
    if (!entry || entry->n_inputs != 1 || entry->n_outputs != 1 || entry->n_states != 0 ||
        entry->inputs[0].rank != 4 || entry->outputs[0].rank != 4) {
        fprintf(stderr, "error: the model has no entrypoint main(image[1,1,H,W]) -> upscaled\n");
        return 1;
    }
    in_h = (long)entry->inputs[0].shape[2];
    in_w = (long)entry->inputs[0].shape[3];
    out_h = (long)entry->outputs[0].shape[2];
    out_w = (long)entry->outputs[0].shape[3];

    pixels = read_pgm(input_path, &width, &height);
    if (!pixels)
        return 1;
    if (width != in_w || height != in_h) {
        fprintf(stderr,
                "error: %s is %ldx%ld but the model was exported for %ldx%ld images "
                "(re-export with export.py --image FILE, see README.md)\n",
                input_path, width, height, in_w, in_h);
        goto done;
    }

    input = malloc((size_t)in_w * (size_t)in_h * sizeof *input);
    output = malloc((size_t)out_w * (size_t)out_h * sizeof *output);
    out_pixels = malloc((size_t)out_w * (size_t)out_h * 2);
    if (!input || !output || !out_pixels) {
        fprintf(stderr, "error: out of memory\n");
        goto done;
    }
    for (long i = 0; i < in_w * in_h; i++)
        input[i] = (float)pixels[i] / 255.0f;

    status = superres_main(workspace WEIGHTS_ARG, input, output);
    if (status != COREAI_STATUS_OK) {
        fprintf(stderr, "error: superres_main: %s\n", coreai_status_string(status));
        goto done;
    }
    printf("%s: %ldx%ld -> %ldx%ld (model %s, workspace %zu bytes, weights %zu bytes",
           input_path, in_w, in_h, out_w, out_h, program->name, program->workspace_size,
           program->weights_size);
    for (int i = 0; i < program->n_composite_ops; i++)
        printf("%s%s", i ? ", " : "; composite ops: ", program->composite_ops[i]);
    printf(")\n");

    for (long i = 0; i < out_w * out_h; i++)
        out_pixels[i] = to_u8(output[i]);
    if (write_image(output_path, out_pixels, out_w, out_h) != 0)
        goto done;
    printf("wrote %s\n", output_path);

    if (side_path) {
        /* [nearest-neighbour upscale of the input | CNN output] */
        unsigned char *side = malloc((size_t)out_w * 2 * (size_t)out_h);
        int ok;
        if (!side) {
            fprintf(stderr, "error: out of memory\n");
            goto done;
        }
        for (long y = 0; y < out_h; y++) {
            for (long x = 0; x < out_w; x++) {
                side[y * 2 * out_w + x] = pixels[(y * in_h / out_h) * in_w + x * in_w / out_w];
                side[y * 2 * out_w + out_w + x] = out_pixels[y * out_w + x];
            }
        }
        ok = write_image(side_path, side, 2 * out_w, out_h) == 0;
        free(side);
        if (!ok)
            goto done;
        printf("wrote %s (left: nearest neighbour, right: CNN)\n", side_path);
    }

    if (reference_path) {
        npy_f32 ref;
        char err[256];
        double max_err = 0.0;
        if (npy_read_f32(reference_path, &ref, err, sizeof err) != 0) {
            fprintf(stderr, "error: %s\n", err);
            goto done;
        }
        if (ref.count != (size_t)(out_w * out_h)) {
            fprintf(stderr, "error: %s has %zu values, the output %ld\n", reference_path, ref.count,
                    out_w * out_h);
            npy_free(&ref);
            goto done;
        }
        for (size_t i = 0; i < ref.count; i++) {
            double d = fabs((double)output[i] - (double)ref.data[i]);
            if (!(d <= max_err)) /* also catches NaN */
                max_err = isnan(d) ? INFINITY : d;
        }
        npy_free(&ref);
        printf("max abs error vs PyTorch (float output): %.3g (tolerance %g)\n", max_err, tolerance);
        if (!(max_err <= tolerance)) {
            fprintf(stderr, "FAIL: error above %g\n", tolerance);
            goto done;
        }
    }
    rc = 0;
done:
    free(pixels);
    free(input);
    free(output);
    free(out_pixels);
    return rc;
}
