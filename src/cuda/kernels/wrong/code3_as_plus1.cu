// WRONG VARIANT (negative control): PQ2_0 code 3 clamped to +1 (a "ternary only" shortcut).
// ggml decodes code 3 as +2d; this must fail exactly the cases whose blocks contain code 3.
#include "../common.cuh"

extern "C" __global__ void wrong_dequantize_pq2_0_code3_as_plus1(const unsigned char* __restrict__ blocks,
                                                                 float* __restrict__ y, int n_blocks) {
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * NT_PQ2_BB;
    float d = nt_scale_at(blk);
    for (int j = threadIdx.x; j < NT_PQ2_QK; j += blockDim.x) {
        int code = (blk[2 + j / 4] >> (2 * (j % 4))) & 3;
        if (code == 3) code = 2;
        y[(long long)b * NT_PQ2_QK + j] = ((float)code - 1.0f) * d;
    }
}
