// WRONG VARIANT (negative control), kind memory, needing CUDA vector types (uint4): PQ2_0 qs
// read through const uint4* at 34-byte block offsets (34*b + 2 is never 16-aligned).
#include "../common.cuh"

// qs through const uint4* (two 16-byte loads per block): never 16-aligned at 34*b + 2.
extern "C" __global__ void wrong_dequantize_pq2_0_uint4_loads(const unsigned char* blocks, float* y, int n_blocks) {
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * 34;
    float d = nt_scale_at(blk);
    const uint4* q = (const uint4*)(blk + 2);
    for (int j = threadIdx.x; j < 128; j += blockDim.x) {
        uint4 v = q[j / 64];
        int w = (j % 64) / 16;
        unsigned wd = w == 0 ? v.x : w == 1 ? v.y : w == 2 ? v.z : v.w;
        y[(long long)b * 128 + j] = (float)((int)((wd >> (2 * (j % 16))) & 3u) - 1) * d;
    }
}

