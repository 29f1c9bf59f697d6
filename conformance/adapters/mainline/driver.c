/* Mainline GGUF driver for the conformance adapter (conformance/PROTOCOL.md §6.1).
 *
 * Usage: gguf-mainline NO_ALLOC FILE   (NO_ALLOC: 1 = metadata only, as llama.cpp's model
 * loader calls gguf_init_from_file; 0 = gguf.cpp also reads the tensor data).
 *
 * Calls gguf_init_from_file and, when it succeeds, prints what it returned, one record a line:
 *   gguf <version> <alignment> <data_offset> <n_kv> <n_tensors>
 *   kv <hex: the KV serialized as in the file: u64 key length, key, u32 type, value>
 *   tensor <hex name> <type> <ne0> <ne1> <ne2> <ne3> <offset> <nbytes> <data> <values>
 * <data> is the hex of the tensor's bytes (no_alloc=0: the buffer gguf.cpp filled; no_alloc=1:
 * read from the file at data_offset + offset) or "-" when those bytes are not in the file;
 * <values> is the hex of ggml's type_traits to_float output (f32 little-endian) or "-" when the
 * type has no to_float or there is no data. When gguf_init_from_file fails it prints
 * "reject" and exits 1; gguf.cpp's own message is on stderr. No validation of its own: every
 * verdict is gguf.cpp's. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "gguf.h"

static void hex(const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) printf("%02x", b[i]);
}

static void hex_u32(uint32_t x) { hex(&x, 4); }
static void hex_u64(uint64_t x) { hex(&x, 8); }

static void hex_str(const char *s) {
    uint64_t n = strlen(s);
    hex_u64(n);
    hex(s, n);
}

/* Byte size of a fixed-size GGUF value type (gguf.h enum gguf_type); 0 for STRING/ARRAY. */
static size_t fixed_size(enum gguf_type t) {
    switch (t) {
    case GGUF_TYPE_UINT8: case GGUF_TYPE_INT8: case GGUF_TYPE_BOOL: return 1;
    case GGUF_TYPE_UINT16: case GGUF_TYPE_INT16: return 2;
    case GGUF_TYPE_UINT32: case GGUF_TYPE_INT32: case GGUF_TYPE_FLOAT32: return 4;
    case GGUF_TYPE_UINT64: case GGUF_TYPE_INT64: case GGUF_TYPE_FLOAT64: return 8;
    default: return 0;
    }
}

static void print_kv(const struct gguf_context *ctx, int64_t i) {
    enum gguf_type t = gguf_get_kv_type(ctx, i);
    printf("kv ");
    hex_str(gguf_get_key(ctx, i));
    hex_u32((uint32_t)t);
    if (t == GGUF_TYPE_STRING) {
        hex_str(gguf_get_val_str(ctx, i));
    } else if (t == GGUF_TYPE_ARRAY) {
        enum gguf_type at = gguf_get_arr_type(ctx, i);
        size_t n = gguf_get_arr_n(ctx, i);
        hex_u32((uint32_t)at);
        hex_u64((uint64_t)n);
        if (at == GGUF_TYPE_STRING) {
            for (size_t k = 0; k < n; k++) hex_str(gguf_get_arr_str(ctx, i, k));
        } else if (n > 0) {
            hex(gguf_get_arr_data(ctx, i), n * fixed_size(at));
        }
    } else {
        hex(gguf_get_val_data(ctx, i), fixed_size(t));
    }
    printf("\n");
}

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[1], "0") != 0 && strcmp(argv[1], "1") != 0)) {
        fprintf(stderr, "usage: %s NO_ALLOC(0|1) FILE\n", argv[0]);
        return 2;
    }
    int no_alloc = argv[1][0] == '1';
    const char *path = argv[2];
    struct ggml_context *meta = NULL;
    struct gguf_init_params params = {.no_alloc = no_alloc != 0, .ctx = &meta};
    struct gguf_context *ctx = gguf_init_from_file(path, params);
    if (ctx == NULL) {
        printf("reject\n");
        return 1;
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return 2;
    }
    fseek(f, 0, SEEK_END);
    long flen = ftell(f);
    int64_t n_kv = gguf_get_n_kv(ctx), n_t = gguf_get_n_tensors(ctx);
    size_t data_offset = gguf_get_data_offset(ctx);
    printf("gguf %u %zu %zu %lld %lld\n", gguf_get_version(ctx), gguf_get_alignment(ctx),
           data_offset, (long long)n_kv, (long long)n_t);
    for (int64_t i = 0; i < n_kv; i++) print_kv(ctx, i);
    for (int64_t i = 0; i < n_t; i++) {
        const char *name = gguf_get_tensor_name(ctx, i);
        const int64_t *ne = gguf_get_tensor_ne(ctx, i);
        enum ggml_type type = gguf_get_tensor_type(ctx, i);
        size_t off = gguf_get_tensor_offset(ctx, i), nbytes = gguf_get_tensor_size(ctx, i);
        printf("tensor ");
        hex(name, strlen(name));
        printf(" %d %lld %lld %lld %lld %zu %zu ", (int)type, (long long)ne[0], (long long)ne[1],
               (long long)ne[2], (long long)ne[3], off, nbytes);
        void *buf = NULL;
        int have = 0;
        if (!no_alloc) {
            struct ggml_tensor *t = ggml_get_tensor(meta, name);
            buf = t != NULL ? t->data : NULL;
            have = buf != NULL;
        } else if (data_offset + off <= (size_t)flen && nbytes <= (size_t)flen - data_offset - off) {
            buf = malloc(nbytes ? nbytes : 1);
            have = buf != NULL && fseek(f, (long)(data_offset + off), SEEK_SET) == 0 &&
                   fread(buf, 1, nbytes, f) == nbytes;
        }
        if (have) hex(buf, nbytes); else printf("-");
        printf(" ");
        const struct ggml_type_traits *tr = ggml_get_type_traits(type);
        int64_t n_el = ne[0] * ne[1] * ne[2] * ne[3];
        if (have && tr->to_float != NULL && n_el > 0) {
            float *out = malloc((size_t)n_el * sizeof(float));
            if (out == NULL) { printf("-"); } else {
                tr->to_float(buf, out, n_el);
                hex(out, (size_t)n_el * sizeof(float));
                free(out);
            }
        } else {
            printf("-");
        }
        printf("\n");
        if (no_alloc) free(buf);
    }
    fclose(f);
    gguf_free(ctx);
    if (meta != NULL) ggml_free(meta);
    return 0;
}
