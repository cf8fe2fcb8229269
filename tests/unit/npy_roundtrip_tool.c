/*
 * npy_roundtrip_tool IN.npy OUT.npy
 *
 * Reads IN with the runner's .npy reader and writes it back with its writer.
 * Prints "<dtype> <rank> <dims...>" on stdout; on a read or write error prints
 * the message on stderr and exits 1 (usage error: 2). Driven by
 * npy_numpy_check.py to compare against numpy.
 */
#include <stdio.h>

#include "npy.h"

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s IN.npy OUT.npy\n", argc > 0 ? argv[0] : "npy_roundtrip_tool");
        return 2;
    }
    char err[1024];
    coreai_npy arr;
    if (coreai_npy_read(argv[1], &arr, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    printf("%s %d", coreai_dtype_name(arr.dtype), (int)arr.rank);
    for (int32_t i = 0; i < arr.rank; ++i) {
        printf(" %lld", (long long)arr.shape[i]);
    }
    printf("\n");
    int rc = coreai_npy_write(argv[2], arr.dtype, arr.rank, arr.shape, arr.data, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "%s\n", err);
    }
    coreai_npy_free(&arr);
    return rc == 0 ? 0 : 1;
}
