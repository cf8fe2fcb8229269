/*
 * npy.h - read and write NumPy .npy files (host-side; uses malloc and stdio).
 *
 * Reads format versions 1.0, 2.0 and 3.0; writes 1.0 (2.0 only if the header
 * would not fit a 16-bit length, which cannot happen for rank <= COREAI_MAX_RANK).
 * The header written is byte-for-byte the one numpy.save writes.
 *
 * Supported descr strings and the coreai dtype each maps to:
 *   '<f4' f32   '<f2' f16   '<i8' i64   '<i4' i32   '|b1' bool
 *   '<u2' bf16  (numpy has no bfloat16: bf16 tensors travel as raw uint16 bits)
 * Anything else (big-endian, structured, object, other kinds) is rejected with a
 * message, as are fortran_order=True and malformed headers. Files must hold
 * exactly the data the header announces: truncated data and trailing bytes are
 * both errors.
 */
#ifndef COREAI_NPY_H
#define COREAI_NPY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "coreai/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Alignment of coreai_npy.data (the same as the planned buffers of a model). */
#define COREAI_NPY_DATA_ALIGNMENT COREAI_ALIGNMENT

typedef struct coreai_npy {
    coreai_dtype dtype;
    int32_t rank;
    int64_t shape[COREAI_MAX_RANK]; /* rank entries used, the rest 0 */
    void *data;   /* COREAI_NPY_DATA_ALIGNMENT-aligned, never NULL after a successful read */
    size_t nbytes; /* numel * element size; may be 0 */
    int version_major; /* format version of the file read (1, 2 or 3) */
    int version_minor;
} coreai_npy;

/*
 * Reads PATH into OUT (little-endian data converted to host order). Returns 0 on
 * success; -1 on failure with a message "PATH: ..." in ERR (when ERR is not NULL)
 * and OUT zeroed, so coreai_npy_free(OUT) is always safe.
 */
int coreai_npy_read(const char *path, coreai_npy *out, char *err, size_t err_len);

/*
 * Writes a C-order array to PATH through a temporary file in the same directory
 * that is renamed over PATH, so PATH is never left half written. SHAPE may be
 * NULL when RANK is 0; DATA may be NULL when the array has no element.
 * Returns 0 or -1 with a message in ERR.
 */
int coreai_npy_write(const char *path, coreai_dtype dtype, int32_t rank, const int64_t *shape,
                     const void *data, char *err, size_t err_len);

/*
 * Writes the same bytes as coreai_npy_write to an open stream (does not close
 * it). NAME is used only in error messages.
 */
int coreai_npy_fwrite(FILE *fp, const char *name, coreai_dtype dtype, int32_t rank,
                      const int64_t *shape, const void *data, char *err, size_t err_len);

/* Releases OUT's data and zeroes it; NULL or an already-freed value is fine. */
void coreai_npy_free(coreai_npy *npy);

/* The descr string written for DTYPE ("<f4", ...); NULL for an unknown value. */
const char *coreai_npy_descr(coreai_dtype dtype);

#ifdef __cplusplus
}
#endif

#endif /* COREAI_NPY_H */
