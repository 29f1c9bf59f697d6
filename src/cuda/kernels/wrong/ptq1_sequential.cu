// WRONG VARIANT (negative control): PTQ1_0 trits read sequentially (element e -> qs[e/5],
// digit e%5; qh after) instead of ggml's staged order. Must fail every PTQ1_0 dequantize case.
#include "../common.cuh"

extern "C" __global__ void wrong_dequantize_ptq1_0_sequential(const unsigned char* __restrict__ blocks,
                                                              float* __restrict__ y, int n_blocks) {
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * NT_PTQ1_BB;
    float d = nt_scale_at(blk + 26);
    for (int e = threadIdx.x; e < NT_PTQ1_QK; e += blockDim.x) {
        int t = e < 120 ? nt_trit(blk[e / 5], e % 5) : nt_trit(blk[24 + (e - 120) / 4], (e - 120) % 4);
        y[(long long)b * NT_PTQ1_QK + e] = ((float)t - 1.0f) * d;
    }
}
