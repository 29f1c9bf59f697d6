// UNUSUAL BUT CORRECT: engine habits the judge must accept -- a zero-scale fast path writing +0
// (the exact value is -0 for some codes: the same weight), and a mat-vec whose owning block zeroes
// y[r] and then accumulates with atomics.
#include "../rt_common.cuh"

extern "C" __global__ void unusual_dequantize_pq2_0_zero_fastpath(const unsigned char* blocks, float* y, int n_blocks) {
    int b = blockIdx.x; if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * 34;
    float d = rt_h(blk);
    for (int j = threadIdx.x; j < 128; j += blockDim.x)
        y[(long long)b * 128 + j] = d == 0.0f ? 0.0f : (float)(((blk[2 + j / 4] >> (2 * (j % 4))) & 3) - 1) * d;
}

extern "C" __global__ void unusual_mul_mat_vec_ptq1_0_atomic_selfzero(const unsigned char* w, const float* x, float* y, int n, int k) {
    int r = blockIdx.x * 4 + threadIdx.y;
    if (r < n && threadIdx.x == 0) y[r] = 0.f;
    __syncthreads();
    if (r >= n) return;
    const unsigned char* row = w + (long long)r * (k / 128) * 28;
    float acc = 0.f;
    for (int j = threadIdx.x; j < k; j += 32) acc += rt_ptq1(row, j) * x[j];
    atomicAdd(&y[r], acc);
}

