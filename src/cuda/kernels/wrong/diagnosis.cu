// WRONG VARIANTS (negative controls) whose failures the diagnosis names (#33): each is caught
// as a mismatch already; what is new is the "looks like" hint its failure gets.
// planar32: PQ2_0 codes read in the planar order of 32-element groups (byte j of a group holds
//   elements j, j+8, j+16, j+24), the order BeeLlama's Q2_0S uses, on PQ2_0's sequential bytes;
// code3_zero: code 3 read as 0 (a ternary table {-1, 0, +1, 0}; ggml decodes it as +2d);
// scale_bf16: the f16 block scale taken as a bf16 (its 16 bits as the top half of an f32);
// planar32_scale_bf16: both of the above at once (the diagnosis names the pair);
// bf16_out_truncated: a bf16-out mat-vec whose f32 -> bf16 conversion drops the low 16 bits
//   (truncation) instead of rounding to nearest even.
#include <cuda_bf16.h>
#include "../common.cuh"
#include "wv_common.cuh"

static __device__ inline float dg_scale_bf16(const unsigned char* blk) {
    union { unsigned u; float f; } c;
    c.u = (unsigned)(blk[0] | (blk[1] << 8)) << 16;
    return c.f;
}
static __device__ inline int dg_code_planar32(const unsigned char* blk, int j) {
    return (blk[2 + (j / 32) * 8 + j % 8] >> (2 * ((j % 32) / 8))) & 3;
}
static __device__ inline float dg_planar32(const unsigned char* blk, int j) {
    return (float)(dg_code_planar32(blk, j) - 1) * nt_scale_at(blk);
}
static __device__ inline float dg_code3_zero(const unsigned char* blk, int j) {
    int c = (blk[2 + j / 4] >> (2 * (j % 4))) & 3;
    return (float)(c == 3 ? 0 : c - 1) * nt_scale_at(blk);
}
static __device__ inline float dg_scale_bf16_elem(const unsigned char* blk, int j) {
    int c = (blk[2 + j / 4] >> (2 * (j % 4))) & 3;
    return (float)(c - 1) * dg_scale_bf16(blk);
}
static __device__ inline float dg_planar32_bf16(const unsigned char* blk, int j) {
    return (float)(dg_code_planar32(blk, j) - 1) * dg_scale_bf16(blk);
}

WV_DEQUANT(wrong_dequantize_pq2_0_planar32, 128, 34, dg_planar32)
WV_MMV(wrong_mul_mat_vec_pq2_0_planar32, 128, 34, dg_planar32)
WV_DEQUANT(wrong_dequantize_pq2_0_code3_zero, 128, 34, dg_code3_zero)
WV_DEQUANT(wrong_dequantize_pq2_0_scale_bf16, 128, 34, dg_scale_bf16_elem)
WV_MMV(wrong_mul_mat_vec_pq2_0_planar32_scale_bf16, 128, 34, dg_planar32_bf16)

static __device__ inline __nv_bfloat16 dg_bf16_truncate(float v) {
    union { float f; unsigned u; } c;
    c.f = v;
    return __ushort_as_bfloat16((unsigned short)(c.u >> 16));
}

extern "C" __global__ void wrong_mul_mat_vec_pq2_0_bf16_out_truncated(const unsigned char* w, const float* x, __nv_bfloat16* y, int n, int k) {
    __shared__ float part[4][32];
    int r = blockIdx.x * 4 + threadIdx.y;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 34;
        for (int j = threadIdx.x; j < k; j += 32) acc += nt_row_pq2(row, j) * x[j];
    }
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    for (int s = 16; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) part[threadIdx.y][threadIdx.x] += part[threadIdx.y][threadIdx.x + s];
        __syncthreads();
    }
    if (r < n && threadIdx.x == 0) y[r] = dg_bf16_truncate(part[threadIdx.y][0]);
}
