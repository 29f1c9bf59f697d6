/* Worked example of a conformance adapter (conformance/README.md): a PTQ1_0 / PQ2_0 block
 * decoder in plain C99 that answers `kind: codec` requests (conformance/PROTOCOL.md §4.0, §4.1)
 * and declares everything else unsupported (capabilities.json).
 *
 * Build:  cc -O2 -std=c99 -o reader reader.c
 * Run:    ninfer-ternary check-reader --adapter ./reader --capabilities capabilities.json
 * -DWRONG_ORDER reads PTQ1_0 trits sequentially instead of in the staged order of
 * spec/codecs.md#ptq1-0-digit-order: the negative control that check-reader must catch. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- SHA-256 (FIPS 180-4), enough for the values digest of PROTOCOL.md §4.1 ---- */
typedef struct { uint32_t h[8]; uint8_t buf[64]; uint64_t len; size_t n; } sha256;
static const uint32_t K[64] = {
    0x428a2f98,0x71374491,0xb5c0fbcf,0xe9b5dba5,0x3956c25b,0x59f111f1,0x923f82a4,0xab1c5ed5,
    0xd807aa98,0x12835b01,0x243185be,0x550c7dc3,0x72be5d74,0x80deb1fe,0x9bdc06a7,0xc19bf174,
    0xe49b69c1,0xefbe4786,0x0fc19dc6,0x240ca1cc,0x2de92c6f,0x4a7484aa,0x5cb0a9dc,0x76f988da,
    0x983e5152,0xa831c66d,0xb00327c8,0xbf597fc7,0xc6e00bf3,0xd5a79147,0x06ca6351,0x14292967,
    0x27b70a85,0x2e1b2138,0x4d2c6dfc,0x53380d13,0x650a7354,0x766a0abb,0x81c2c92e,0x92722c85,
    0xa2bfe8a1,0xa81a664b,0xc24b8b70,0xc76c51a3,0xd192e819,0xd6990624,0xf40e3585,0x106aa070,
    0x19a4c116,0x1e376c08,0x2748774c,0x34b0bcb5,0x391c0cb3,0x4ed8aa4a,0x5b9cca4f,0x682e6ff3,
    0x748f82ee,0x78a5636f,0x84c87814,0x8cc70208,0x90befffa,0xa4506ceb,0xbef9a3f7,0xc67178f2};
#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))
static void sha_block(sha256 *s, const uint8_t *p) {
    uint32_t w[64], a, b, c, d, e, f, g, h, i;
    for (i = 0; i < 16; i++) w[i] = (uint32_t)p[4*i] << 24 | p[4*i+1] << 16 | p[4*i+2] << 8 | p[4*i+3];
    for (i = 16; i < 64; i++)
        w[i] = w[i-16] + (ROR(w[i-15], 7) ^ ROR(w[i-15], 18) ^ (w[i-15] >> 3)) + w[i-7]
             + (ROR(w[i-2], 17) ^ ROR(w[i-2], 19) ^ (w[i-2] >> 10));
    a = s->h[0]; b = s->h[1]; c = s->h[2]; d = s->h[3]; e = s->h[4]; f = s->h[5]; g = s->h[6]; h = s->h[7];
    for (i = 0; i < 64; i++) {
        uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    s->h[0] += a; s->h[1] += b; s->h[2] += c; s->h[3] += d; s->h[4] += e; s->h[5] += f; s->h[6] += g; s->h[7] += h;
}
static void sha_init(sha256 *s) {
    static const uint32_t iv[8] = {0x6a09e667,0xbb67ae85,0x3c6ef372,0xa54ff53a,0x510e527f,0x9b05688c,0x1f83d9ab,0x5be0cd19};
    memcpy(s->h, iv, sizeof iv); s->len = 0; s->n = 0;
}
static void sha_put(sha256 *s, const uint8_t *p, size_t n) {
    for (; n; n--) { s->buf[s->n++] = *p++; s->len++; if (s->n == 64) { sha_block(s, s->buf); s->n = 0; } }
}
static void sha_hex(sha256 *s, char out[65]) {
    uint64_t bits = s->len * 8; uint8_t one = 0x80, zero = 0, l[8]; int i;
    sha_put(s, &one, 1);
    while (s->n != 56) sha_put(s, &zero, 1);
    for (i = 0; i < 8; i++) l[i] = (uint8_t)(bits >> (56 - 8 * i));
    sha_put(s, l, 8);
    for (i = 0; i < 32; i++) sprintf(out + 2 * i, "%02x", (s->h[i / 4] >> (24 - 8 * (i % 4))) & 0xff);
}

/* ---- f16 -> f32 bits, exact for every input (subnormal, inf, NaN) ---- */
static float f16(const uint8_t *p) {
    uint32_t h = p[0] | p[1] << 8, sign = (h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, bits;
    float f;
    if (e == 0x1f) bits = sign | 0x7f800000 | m << 13;
    else if (e) bits = sign | (e + 112) << 23 | m << 13;
    else if (!m) bits = sign;
    else { e = 113; while (!(m & 0x400)) { m <<= 1; e--; } bits = sign | e << 23 | (m & 0x3ff) << 13; }
    memcpy(&f, &bits, 4);
    return f;
}

/* ---- the two codecs (spec/codecs.md#pq2-0, spec/codecs.md#ptq1-0) ---- */
static int ptq1_trit(const uint8_t *blk, int e) {          /* 28-byte block, element 0..127 */
    static const int pow3[5] = {1, 3, 9, 27, 81};
    int byte, digit;
#ifdef WRONG_ORDER
    byte = e < 120 ? e / 5 : 24 + (e - 120) / 4; digit = e < 120 ? e % 5 : (e - 120) % 4;
#else
    if (e < 80)       { byte = e % 16;                   digit = e / 16; }
    else if (e < 120) { byte = 16 + (e - 80) % 8;        digit = (e - 80) / 8; }
    else              { byte = 24 + (e - 120) % 2;       digit = (e - 120) / 2; }
#endif
    return ((uint16_t)(uint8_t)(blk[byte] * pow3[digit]) * 3) >> 8;   /* digit formula */
}
static float value(int ptq1, const uint8_t *blk, int e) {
    if (ptq1) return (float)(ptq1_trit(blk, e) - 1) * f16(blk + 26);   /* scale last */
    return (float)(((blk[2 + e / 4] >> (2 * (e % 4))) & 3) - 1) * f16(blk); /* scale first */
}

/* ---- minimal request parsing: the runner sends one compact JSON object ---- */
static const char *find(const char *js, const char *key) {
    char pat[64]; const char *p = js;
    snprintf(pat, sizeof pat, "\"%s\"", key);
    while ((p = strstr(p, pat))) {                 /* a key is a string followed by ':' */
        p += strlen(pat);
        while (*p == ' ') p++;
        if (*p == ':') { p++; while (*p == ' ') p++; return p; }
    }
    return NULL;
}
static int str(const char *js, const char *key, char *out, size_t cap) {
    const char *p = find(js, key); size_t n = 0;
    if (!p || *p++ != '"') return 0;
    while (*p && *p != '"' && n + 1 < cap) out[n++] = *p++;   /* paths here have no escapes */
    out[n] = 0;
    return 1;
}

int main(void) {
    static char req[1 << 16];
    char kind[32], codec[32], path[4096], hex[65];
    size_t n = fread(req, 1, sizeof req - 1, stdin);
    req[n] = 0;
    if (!str(req, "kind", kind, sizeof kind) || strcmp(kind, "codec")) {
        printf("{\"result\":\"unsupported\",\"feature\":\"kind:%s\"}\n", kind); return 0;
    }
    if (!str(req, "codec", codec, sizeof codec) || (strcmp(codec, "ptq1_0") && strcmp(codec, "pq2_0"))) {
        printf("{\"result\":\"unsupported\",\"feature\":\"codec:%s\"}\n", codec); return 0;
    }
    const char *pr = find(req, "rows"), *pc = find(req, "cols");
    long rows = pr ? atol(pr) : 0, cols = pc ? atol(pc) : 0;
    int ptq1 = !strcmp(codec, "ptq1_0"), bb = ptq1 ? 28 : 34;
    if (!str(req, "file", path, sizeof path) || rows <= 0 || cols <= 0 || cols % 128) {
        printf("{\"result\":\"reject\",\"class\":null,\"message\":\"bad request\"}\n"); return 1;
    }
    FILE *f = fopen(path, "rb");
    size_t want = (size_t)(rows * cols / 128) * bb;
    uint8_t *data = malloc(want + 1);
    if (!f || !data || fread(data, 1, want + 1, f) != want) {
        printf("{\"result\":\"reject\",\"class\":\"io.read\",\"message\":\"file is not %zu bytes\"}\n", want);
        return 1;
    }
    sha256 all, row;
    sha_init(&all);
    printf("{\"result\":\"accept\",\"observation\":{\"values\":%ld,\"rows_sha256\":[", rows * cols);
    for (long r = 0; r < rows; r++) {
        sha_init(&row);
        for (long c = 0; c < cols; c++) {
            const uint8_t *blk = data + (size_t)((r * cols + c) / 128) * bb;
            float v = value(ptq1, blk, (int)(c % 128));
            uint32_t bits; uint8_t le[4];
            memcpy(&bits, &v, 4);
            if ((bits & 0x7f800000) == 0x7f800000 && (bits & 0x7fffff)) bits = 0x7fc00000; /* NaN */
            if (bits == 0x80000000) bits = 0;                                               /* -0 */
            for (int i = 0; i < 4; i++) le[i] = (uint8_t)(bits >> (8 * i));
            sha_put(&all, le, 4); sha_put(&row, le, 4);
        }
        sha_hex(&row, hex);
        printf("%s\"%s\"", r ? "," : "", hex);
    }
    sha_hex(&all, hex);
    printf("],\"sha256\":\"%s\"}}\n", hex);
    return 0;
}
