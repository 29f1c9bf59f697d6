// Class `dequantize` for BeeLlama's planar Q2_0S (spec/codecs.json q2_0s_planar): 10 B / 32,
// f16 d first, then qs[8]; element j in byte 2 + j % 8, bits 2 * (j / 8); value (code - 2) * d.
// Launch: grid (n_blocks,1,1), block (128,1,1); CUDA block b decodes block b (threads past 32 idle).
#include "common.cuh"

__host__ __device__ inline float nt_q2s_elem(const unsigned char* blk, int j) {
    int code = (blk[2 + j % 8] >> (2 * (j / 8))) & 3;
    return (float)(code - 2) * nt_scale_at(blk);
}

extern "C" __global__ void ref_dequantize_q2_0s_planar(const unsigned char* __restrict__ blocks,
                                                       float* __restrict__ y, int n_blocks) {
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * 10;
    for (int j = threadIdx.x; j < 32; j += blockDim.x) y[(long long)b * 32 + j] = nt_q2s_elem(blk, j);
}
