/* The format owner's reference quantizers for the mainline ggml types the suite encodes
 * (scripts/encoders-vs-mainline.sh builds it against the pinned ggml-quants.c).
 *
 * Usage: quantize-ref TYPE < IN.f32 > OUT.bin   TYPE: q8_0 | q1_0 | q2_0 | tq1_0 | tq2_0
 * Reads little-endian f32 (a whole number of blocks) from stdin, calls ggml's
 * quantize_row_<TYPE>_ref once over all of it and writes the blocks to stdout. No logic of
 * its own. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-quants.h"

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s TYPE < IN.f32 > OUT.bin\n", argv[0]); return 2; }
    static const struct { const char *name; enum ggml_type t; } types[] = {
        {"q8_0", GGML_TYPE_Q8_0}, {"q1_0", GGML_TYPE_Q1_0}, {"q2_0", GGML_TYPE_Q2_0},
        {"tq1_0", GGML_TYPE_TQ1_0}, {"tq2_0", GGML_TYPE_TQ2_0}};
    int k = -1;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(argv[1], types[i].name) == 0) k = (int)i;
    if (k < 0) { fprintf(stderr, "unknown type %s\n", argv[1]); return 2; }
    size_t cap = 1 << 20, n = 0;
    float *x = malloc(cap * sizeof *x);
    size_t got;
    while (x && (got = fread(x + n, sizeof *x, cap - n, stdin)) > 0) {
        n += got;
        if (n == cap) x = realloc(x, (cap *= 2) * sizeof *x);
    }
    if (x == NULL) return 3;
    enum ggml_type t = types[k].t;
    int64_t be = ggml_blck_size(t);
    if (n == 0 || n % (size_t)be != 0) { fprintf(stderr, "%zu floats: not whole blocks of %lld\n", n, (long long)be); return 2; }
    size_t nbytes = ggml_row_size(t, (int64_t)n);
    void *y = calloc(nbytes, 1);
    if (y == NULL) return 3;
    switch (t) {
    case GGML_TYPE_Q8_0: quantize_row_q8_0_ref(x, y, (int64_t)n); break;
    case GGML_TYPE_Q1_0: quantize_row_q1_0_ref(x, y, (int64_t)n); break;
    case GGML_TYPE_Q2_0: quantize_row_q2_0_ref(x, y, (int64_t)n); break;
    case GGML_TYPE_TQ1_0: quantize_row_tq1_0_ref(x, y, (int64_t)n); break;
    case GGML_TYPE_TQ2_0: quantize_row_tq2_0_ref(x, y, (int64_t)n); break;
    default: return 2;
    }
    fwrite(y, 1, nbytes, stdout);
    free(x); free(y);
    return 0;
}
