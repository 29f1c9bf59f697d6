// WRONG VARIANTS (negative controls), kind value-map: the f16 block scale decoded by a
// hand-written conversion that is right only for normal numbers (and zero). Caught only by
// cases with special scales: subnormal, +-Inf, NaN (real quantizers produce normal scales).
#include "../common.cuh"
#include "wv_common.cuh"

// KERNELS.md's worked example conversion: exponent rebiased by +112 for every non-zero value,
// so subnormals come out as normals (2^-15 * 1.m) and Inf/NaN as finite 2^16 * 1.m.
static __device__ inline float sf_f16_normal_only(unsigned short h) {
    union { unsigned u; float f; } c;
    c.u = (h & 0x7fff) ? ((h & 0x8000u) << 16) | ((((h >> 10) & 0x1fu) + 112u) << 23) | ((h & 0x3ffu) << 13)
                       : ((h & 0x8000u) << 16);
    return c.f;
}
// Subnormals flushed to signed zero (a "DAZ" shortcut); normal, Inf and NaN right.
static __device__ inline float sf_f16_ftz(unsigned short h) {
    unsigned ex = (h >> 10) & 0x1fu;
    union { unsigned u; float f; } c;
    if (ex == 0) c.u = (h & 0x8000u) << 16;
    else c.u = ((h & 0x8000u) << 16) | ((ex == 31 ? 255u : ex + 112u) << 23) | ((h & 0x3ffu) << 13);
    return c.f;
}
// Subnormals right (man * 2^-24), but exponent 31 rebiased like a normal: Inf/NaN -> finite.
static __device__ inline float sf_f16_no_inf(unsigned short h) {
    unsigned ex = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (ex == 0) { float v = (float)man * 5.9604644775390625e-8f; return (h & 0x8000u) ? -v : v; }
    union { unsigned u; float f; } c;
    c.u = ((h & 0x8000u) << 16) | ((ex + 112u) << 23) | (man << 13);
    return c.f;
}

static __device__ inline float sf_ptq1_normal_only(const unsigned char* blk, int e) {
    int byte, digit;
    if (e < 80) { byte = e % 16; digit = e / 16; }
    else if (e < 120) { byte = 16 + (e - 80) % 8; digit = (e - 80) / 8; }
    else { byte = 24 + (e - 120) % 2; digit = (e - 120) / 2; }
    return (float)(nt_trit(blk[byte], digit) - 1) * sf_f16_normal_only((unsigned short)(blk[26] | (blk[27] << 8)));
}
static __device__ inline float sf_ptq1_ftz(const unsigned char* blk, int e) {
    int byte, digit;
    if (e < 80) { byte = e % 16; digit = e / 16; }
    else if (e < 120) { byte = 16 + (e - 80) % 8; digit = (e - 80) / 8; }
    else { byte = 24 + (e - 120) % 2; digit = (e - 120) / 2; }
    return (float)(nt_trit(blk[byte], digit) - 1) * sf_f16_ftz((unsigned short)(blk[26] | (blk[27] << 8)));
}
static __device__ inline float sf_pq2_ftz(const unsigned char* blk, int j) {
    return (float)(((blk[2 + j / 4] >> (2 * (j % 4))) & 3) - 1) * sf_f16_ftz((unsigned short)(blk[0] | (blk[1] << 8)));
}
static __device__ inline float sf_pq2_normal_only(const unsigned char* blk, int j) {
    return (float)(((blk[2 + j / 4] >> (2 * (j % 4))) & 3) - 1) * sf_f16_normal_only((unsigned short)(blk[0] | (blk[1] << 8)));
}
static __device__ inline float sf_tq1_no_inf(const unsigned char* blk, int e) {
    int byte, digit;
    if (e < 160) { byte = e % 32; digit = e / 32; }
    else if (e < 240) { byte = 32 + (e - 160) % 16; digit = (e - 160) / 16; }
    else { byte = 48 + (e - 240) % 4; digit = (e - 240) / 4; }
    return (float)(nt_trit(blk[byte], digit) - 1) * sf_f16_no_inf((unsigned short)(blk[52] | (blk[53] << 8)));
}
static __device__ inline float sf_g64_no_inf(const unsigned char* blk, int j) {
    return (float)(((blk[2 + j / 4] >> (2 * (j % 4))) & 3) - 1) * sf_f16_no_inf((unsigned short)(blk[0] | (blk[1] << 8)));
}

WV_DEQUANT(wrong_dequantize_ptq1_0_f16_normal_only, 128, 28, sf_ptq1_normal_only)
WV_DEQUANT(wrong_dequantize_pq2_0_f16_ftz, 128, 34, sf_pq2_ftz)
WV_DEQUANT(wrong_dequantize_tq1_0_f16_no_inf, 256, 54, sf_tq1_no_inf)
WV_DEQUANT(wrong_dequantize_q2_0_g64_f16_no_inf, 64, 18, sf_g64_no_inf)
WV_GET_ROWS(wrong_get_rows_ptq1_0_f16_normal_only, 128, 28, sf_ptq1_normal_only)
WV_MMV(wrong_mul_mat_vec_ptq1_0_f16_ftz, 128, 28, sf_ptq1_ftz)
WV_MMV(wrong_mul_mat_vec_pq2_0_f16_normal_only, 128, 34, sf_pq2_normal_only)
