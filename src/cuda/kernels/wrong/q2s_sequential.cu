// WRONG VARIANT (negative control) of `dequantize` for BeeLlama's planar Q2_0S: the codes read
// in PQ2_0's sequential order (element j in byte 2 + j / 4, bits 2 * (j % 4)) instead of the
// planar one (byte 2 + j % 8, bits 2 * (j / 8)); scale and value map right.
#include "../common.cuh"

extern "C" __global__ void wrong_dequantize_q2_0s_planar_sequential(const unsigned char* __restrict__ blocks,
                                                                    float* __restrict__ y, int n_blocks) {
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * 10;
    for (int j = threadIdx.x; j < 32; j += blockDim.x) {
        int code = (blk[2 + j / 4] >> (2 * (j % 4))) & 3;
        y[(long long)b * 32 + j] = (float)(code - 2) * nt_scale_at(blk);
    }
}
