// UNUSUAL BUT CORRECT twins of wrong/loopholes.cu: a q8_1-in mat-vec that takes the `-1` of each
// ternary code from the stored f16 `s` of the q8_1 block (d_w * (d_x * sum c q - s)), as ggml's
// dp4a paths do, and the pairs-of-blocks Q2_0-g64 dequantizer with the pair count rounded up.
#include <cuda_fp16.h>
#include "../common.cuh"

struct tw_block_q8_1 {
    __half d;
    __half s;
    signed char qs[32];
};

extern "C" __global__ void unusual_mul_mat_vec_pq2_0_q8_1_uses_s(const unsigned char* w, const void* vx, float* y, int n, int k) {
    __shared__ float part[4][32];
    const tw_block_q8_1* xb = (const tw_block_q8_1*)vx;
    int r = blockIdx.x * 4 + threadIdx.y;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 34;
        for (int qb = threadIdx.x; qb < k / 32; qb += 32) {
            const unsigned char* blk = row + (qb / 4) * 34;
            int csum = 0;  // sum of c * q with c in 0..3 (code minus nothing)
            for (int i = 0; i < 32; ++i) {
                int e = (qb % 4) * 32 + i;
                csum += ((blk[2 + e / 4] >> (2 * (e % 4))) & 3) * (int)xb[qb].qs[i];
            }
            acc += nt_scale_at(blk) * (__half2float(xb[qb].d) * (float)csum - __half2float(xb[qb].s));
        }
    }
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    for (int s = 16; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) part[threadIdx.y][threadIdx.x] += part[threadIdx.y][threadIdx.x + s];
        __syncthreads();
    }
    if (r < n && threadIdx.x == 0) y[r] = part[threadIdx.y][0];
}

extern "C" __global__ void unusual_dequantize_q2_0_g64_pairs(const unsigned char* blocks, float* y, int n_blocks) {
    int pairs = (n_blocks + 1) / 2;
    for (int p = blockIdx.x; p < pairs; p += gridDim.x) {
        int b = 2 * p + (int)threadIdx.x / 64, j = threadIdx.x % 64;
        if (b >= n_blocks) continue;
        const unsigned char* blk = blocks + (long long)b * 18;
        y[(long long)b * 64 + j] = (float)(((blk[2 + j / 4] >> (2 * (j % 4))) & 3) - 1) * nt_scale_at(blk);
    }
}

// The correct twin of wrong/model_scale.cu's 8192-float cache: x staged through shared memory
// in tiles of 8192 floats, each tile consumed (barrier) before the next is loaded.
extern "C" __global__ void unusual_mul_mat_vec_pq2_0_x_tiles8192(const unsigned char* w, const float* x, float* y, int n, int k) {
    __shared__ float xs[8192];
    __shared__ float part[4][32];
    int tid = threadIdx.y * 32 + threadIdx.x;
    int r = blockIdx.x * 4 + threadIdx.y;
    const unsigned char* row = w + (long long)(r < n ? r : 0) * (k / 128) * 34;
    float acc = 0.f;
    for (int t0 = 0; t0 < k; t0 += 8192) {
        int len = k - t0 < 8192 ? k - t0 : 8192;
        for (int j = tid; j < len; j += 128) xs[j] = x[t0 + j];
        __syncthreads();
        if (r < n)
            for (int j = threadIdx.x; j < len; j += 32) acc += nt_row_pq2(row, t0 + j) * xs[j];
        __syncthreads();
    }
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    for (int s = 16; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) part[threadIdx.y][threadIdx.x] += part[threadIdx.y][threadIdx.x + s];
        __syncthreads();
    }
    if (r < n && threadIdx.x == 0) y[r] = part[threadIdx.y][0];
}
