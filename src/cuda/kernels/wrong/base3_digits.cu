// WRONG VARIANTS (negative controls), kind value-map, base-3 formats (PTQ1_0, TQ1_0):
// canonical_lut: trits from a decode table inverted from the encoder (byte(v) -> v); right for
//   the 243 (qs) / 81 (qh) canonical bytes, wrong for non-canonical ones (the table holds 0 there),
//   where ggml's digit rule ((u8)(b*3^n)*3)>>8 still defines a value;
// lsd_first: the five digits of a byte taken least-significant first.
#include "../common.cuh"
#include "wv_common.cuh"

// Builds the inverse tables in shared memory; every thread of the block must call it.
static __device__ inline void b3_build(unsigned char* inv5, unsigned char* inv4) {
    for (int i = threadIdx.x + threadIdx.y * blockDim.x; i < 256; i += blockDim.x * blockDim.y) { inv5[i] = 0; inv4[i] = 0; }
    __syncthreads();
    for (int v = threadIdx.x + threadIdx.y * blockDim.x; v < 243; v += blockDim.x * blockDim.y) {
        inv5[(v * 256 + 242) / 243] = (unsigned char)v;
        if (v < 81) inv4[(v * 3 * 256 + 242) / 243] = (unsigned char)v;
    }
    __syncthreads();
}
static __device__ inline int b3_pow3(int n) { int p = 1; while (n-- > 0) p *= 3; return p; }
// Staged element e with stage widths (w1, w2, wh) via the tables.
static __device__ inline float b3_lut_elem(const unsigned char* blk, int e, int w1, int w2, int wh,
                                           const unsigned char* inv5, const unsigned char* inv4) {
    int t;
    if (e < 5 * w1) t = inv5[blk[e % w1]] / b3_pow3(4 - e / w1) % 3;
    else if (e < 5 * (w1 + w2)) { int f = e - 5 * w1; t = inv5[blk[w1 + f % w2]] / b3_pow3(4 - f / w2) % 3; }
    else { int f = e - 5 * (w1 + w2); t = inv4[blk[w1 + w2 + f % wh]] / b3_pow3(3 - f / wh) % 3; }
    return (float)(t - 1) * nt_scale_at(blk + w1 + w2 + wh);
}

extern "C" __global__ void wrong_dequantize_ptq1_0_canonical_lut(const unsigned char* blocks, float* y, int n_blocks) {
    __shared__ unsigned char inv5[256], inv4[256];
    b3_build(inv5, inv4);
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    for (int e = threadIdx.x; e < 128; e += blockDim.x)
        y[(long long)b * 128 + e] = b3_lut_elem(blocks + (long long)b * 28, e, 16, 8, 2, inv5, inv4);
}

extern "C" __global__ void wrong_dequantize_tq1_0_canonical_lut(const unsigned char* blocks, float* y, int n_blocks) {
    __shared__ unsigned char inv5[256], inv4[256];
    b3_build(inv5, inv4);
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    for (int e = threadIdx.x; e < 256; e += blockDim.x)
        y[(long long)b * 256 + e] = b3_lut_elem(blocks + (long long)b * 54, e, 32, 16, 4, inv5, inv4);
}

extern "C" __global__ void wrong_get_rows_ptq1_0_canonical_lut(const unsigned char* w, const int* ids, float* y, int n_ids, int k) {
    __shared__ unsigned char inv5[256], inv4[256];
    b3_build(inv5, inv4);
    int i = blockIdx.x;
    if (i >= n_ids) return;
    const unsigned char* row = w + (long long)ids[i] * (k / 128) * 28;
    for (int j = threadIdx.x; j < k; j += blockDim.x)
        y[(long long)i * k + j] = b3_lut_elem(row + (j / 128) * 28, j % 128, 16, 8, 2, inv5, inv4);
}

extern "C" __global__ void wrong_mul_mat_vec_ptq1_0_canonical_lut(const unsigned char* w, const float* x, float* y, int n, int k) {
    __shared__ unsigned char inv5[256], inv4[256];
    __shared__ float part[4][32];
    b3_build(inv5, inv4);
    int r = blockIdx.x * 4 + threadIdx.y;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 28;
        for (int j = threadIdx.x; j < k; j += 32) acc += b3_lut_elem(row + (j / 128) * 28, j % 128, 16, 8, 2, inv5, inv4) * x[j];
    }
    float s = wv_reduce_4x32(part, acc);
    if (r < n && threadIdx.x == 0) y[r] = s;
}

// Digits least-significant first: digit n of a qs byte is ggml's digit 4-n (3-n for qh).
static __device__ inline float b3_lsd_elem(const unsigned char* blk, int e, int w1, int w2, int wh) {
    int t;
    if (e < 5 * w1) t = nt_trit(blk[e % w1], 4 - e / w1);
    else if (e < 5 * (w1 + w2)) { int f = e - 5 * w1; t = nt_trit(blk[w1 + f % w2], 4 - f / w2); }
    else { int f = e - 5 * (w1 + w2); t = nt_trit(blk[w1 + w2 + f % wh], 3 - f / wh); }
    return (float)(t - 1) * nt_scale_at(blk + w1 + w2 + wh);
}
static __device__ inline float b3_ptq1_lsd(const unsigned char* blk, int e) { return b3_lsd_elem(blk, e, 16, 8, 2); }
static __device__ inline float b3_tq1_lsd(const unsigned char* blk, int e) { return b3_lsd_elem(blk, e, 32, 16, 4); }
WV_DEQUANT(wrong_dequantize_ptq1_0_lsd_first, 128, 28, b3_ptq1_lsd)
WV_DEQUANT(wrong_dequantize_tq1_0_lsd_first, 256, 54, b3_tq1_lsd)
WV_MMV(wrong_mul_mat_vec_ptq1_0_lsd_first, 128, 28, b3_ptq1_lsd)
