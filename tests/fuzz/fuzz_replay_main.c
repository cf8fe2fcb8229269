/*
 * fuzz_replay_main.c - runs the libFuzzer harness over files named on the
 * command line (each a file or a folder of inputs), for the ctest that
 * replays tests/fuzz/regressions with an ordinary compiler, and for the
 * coverage build of scripts/fuzz-check.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: cannot open\n", path);
        return 1;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf)
        return 1;
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int failed = 0, count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            DIR *d = opendir(argv[i]);
            struct dirent *e;
            while (d && (e = readdir(d)) != NULL) {
                if (e->d_name[0] == '.')
                    continue;
                size_t len = strlen(argv[i]) + strlen(e->d_name) + 2;
                char *p = malloc(len);
                if (!p)
                    return 1;
                snprintf(p, len, "%s/%s", argv[i], e->d_name);
                failed |= run_file(p);
                count++;
                free(p);
            }
            if (d)
                closedir(d);
        } else {
            failed |= run_file(argv[i]);
            count++;
        }
    }
    printf("replayed %d inputs\n", count);
    return failed;
}
