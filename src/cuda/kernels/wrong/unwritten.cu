// WRONG VARIANTS (negative controls): outputs left unwritten where the scale is not finite --
// the runner's fill is itself a NaN, so only the unwritten-output rule catches them.
#include "../rt_common.cuh"

extern "C" __global__ void wrong_dequantize_pq2_0_skip_nan_blocks(const unsigned char* blocks, float* y, int n_blocks) {
    int b = blockIdx.x; if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * 34;
    float d = rt_h(blk);
    if (d != d) return;   // "garbage block": leave it (engine assumes y was memset elsewhere)
    for (int j = threadIdx.x; j < 128; j += blockDim.x)
        y[(long long)b * 128 + j] = (float)(((blk[2 + j / 4] >> (2 * (j % 4))) & 3) - 1) * d;
}

extern "C" __global__ void wrong_dequantize_ptq1_0_skip_code1_nonfinite(const unsigned char* blocks, float* y, int n_blocks) {
    int b = blockIdx.x; if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * 28;
    float d = rt_h(blk + 26);
    for (int e = threadIdx.x; e < 128; e += blockDim.x) {
        int t = rt_ptq1_code(blk, e);
        if (isinf(d) && t == 1) continue;   // "0*Inf is undefined anyway": leave it
        y[(long long)b * 128 + e] = (float)(t - 1) * d;
    }
}

extern "C" __global__ void wrong_get_rows_pq2_0_skip_nan_blocks(const unsigned char* w, const int* ids, float* y, int n_ids, int k) {
    int i = blockIdx.x; if (i >= n_ids) return;
    const unsigned char* row = w + (long long)ids[i] * (k / 128) * 34;
    for (int b = 0; b < k / 128; ++b) {
        float d = rt_h(row + b * 34);
        if (d != d) continue;               // NaN block: skip (y "already NaN-initialised by the allocator")
        for (int e = threadIdx.x; e < 128; e += blockDim.x)
            y[(long long)i * k + b * 128 + e] = (float)(((row[b * 34 + 2 + e / 4] >> (2 * (e % 4))) & 3) - 1) * d;
    }
}

extern "C" __global__ void wrong_mul_mat_vec_ptq1_0_skip_nonfinite_rows(const unsigned char* w, const float* x, float* y, int n, int k) {
    int r = blockIdx.x * 4 + threadIdx.y; if (r >= n) return;
    const unsigned char* row = w + (long long)r * (k / 128) * 28;
    for (int b = 0; b < k / 128; ++b) if (!isfinite(rt_h(row + b * 28 + 26))) return;   // "poisoned row": leave y alone
    float acc = 0.f;
    for (int j = threadIdx.x; j < k; j += 32) acc += rt_ptq1(row, j) * x[j];
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    if (threadIdx.x == 0) y[r] = acc;
}

