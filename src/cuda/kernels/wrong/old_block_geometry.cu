// WRONG VARIANTS (negative controls): PQ2_0 bytes read with an old block geometry.
// block32: 10-byte / 32-element blocks (34/128 : 10/32 = 17/20, the "20/17" size ratio);
// block64: mainline Q2_0-g64's 18-byte / 64-element blocks (the "18/17" ratio).
// Same ABI as `dequantize` (n_blocks counts 128-element PQ2_0 blocks).
#include "../common.cuh"

#define NT_DEQUANT_AS(NAME, QK, BB)                                                       \
    extern "C" __global__ void NAME(const unsigned char* __restrict__ blocks,             \
                                    float* __restrict__ y, int n_blocks) {                \
        int b = blockIdx.x;                                                               \
        if (b >= n_blocks) return;                                                        \
        for (int j = threadIdx.x; j < NT_PQ2_QK; j += blockDim.x) {                       \
            long long i = (long long)b * NT_PQ2_QK + j;                                   \
            y[i] = nt_q2_elem(blocks + (i / QK) * BB, (int)(i % QK));                     \
        }                                                                                 \
    }

NT_DEQUANT_AS(wrong_dequantize_pq2_0_block32, 32, 10)
NT_DEQUANT_AS(wrong_dequantize_pq2_0_block64, 64, 18)
