/*
 * npy.h - a strict reader for the .npy files of this example: format
 * version 1.0, dtype '<f4', C order. Anything else is rejected with a message.
 */
#ifndef FEEDFORWARD_NPY_H
#define FEEDFORWARD_NPY_H

#include <stddef.h>
#include <stdint.h>

#define NPY_MAX_RANK 8

typedef struct npy_f32 {
    int rank;
    int64_t shape[NPY_MAX_RANK];
    size_t count; /* number of elements (1 for rank 0) */
    float *data;  /* malloc'ed, host byte order */
} npy_f32;

/* Returns 0 on success; otherwise -1 with a message in err. */
int npy_read_f32(const char *path, npy_f32 *out, char *err, size_t err_size);
void npy_free(npy_f32 *array);

#endif /* FEEDFORWARD_NPY_H */
