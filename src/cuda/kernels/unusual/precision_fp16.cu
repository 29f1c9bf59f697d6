// UNUSUAL BUT CORRECT kernels with f16 types (needs <cuda_fp16.h>) and ABI sidecars:
// an f16-out dequantize (precision "f16-out": expected output = RNE f16 of the exact value) and a
// q8_1-activation mat-vec (precision "q8_1-in") with __dp4a integer dot products:
// per 32 values, sum_j (c_j - 1) * d_w * q_j * d_x = d_w * d_x * (sum c_j q_j - sum q_j).
#include <cuda_fp16.h>
#include "../common.cuh"

extern "C" __global__ void unusual_dequantize_pq2_0_f16_out(const unsigned char* blocks, __half* y, int n_blocks) {
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * 34;
    float d = nt_scale_at(blk);
    for (int j = threadIdx.x; j < 128; j += blockDim.x) {
        int c = (blk[2 + j / 4] >> (2 * (j % 4))) & 3;
        y[(long long)b * 128 + j] = __float2half_rn((float)(c - 1) * d);
    }
}

struct uq_block_q8_1 {
    __half d;           // scale of the 32 values
    __half s;           // d * sum(qs) (unused here: the integer sum is exact)
    signed char qs[32];
};

// Launch as mul_mat_vec: grid (ceil(n/4),1,1), block (32,4,1); lane l walks q8_1 blocks l, l+32, ...
extern "C" __global__ void unusual_mul_mat_vec_pq2_0_q8_1(const unsigned char* w, const void* vx, float* y, int n, int k) {
    __shared__ float part[4][32];
    const uq_block_q8_1* xb = (const uq_block_q8_1*)vx;
    int r = blockIdx.x * 4 + threadIdx.y;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 34;
        for (int qb = threadIdx.x; qb < k / 32; qb += 32) {
            const unsigned char* blk = row + (qb / 4) * 34;
            const unsigned char* qs = blk + 2 + (qb % 4) * 8;  // 8 bytes = codes of these 32 values
            const signed char* q = xb[qb].qs;
            int isum = 0, qsum = 0;
            for (int i = 0; i < 8; ++i) {
                unsigned v = qs[i];
                int codes = (int)((v & 3u) | (((v >> 2) & 3u) << 8) | (((v >> 4) & 3u) << 16) | ((v >> 6) << 24));
                int q4 = (int)((unsigned)(unsigned char)q[4 * i] | ((unsigned)(unsigned char)q[4 * i + 1] << 8) |
                               ((unsigned)(unsigned char)q[4 * i + 2] << 16) | ((unsigned)(unsigned char)q[4 * i + 3] << 24));
                isum = __dp4a(codes, q4, isum);
                qsum = __dp4a(0x01010101, q4, qsum);
            }
            acc += nt_scale_at(blk) * __half2float(xb[qb].d) * (float)(isum - qsum);
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
