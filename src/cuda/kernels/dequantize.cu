// Class `dequantize` (spec/kernels.json): ggml blocks -> f32, bit-exact.
// Launch: grid (n_blocks,1,1), block (128,1,1); CUDA block b decodes ggml block b.
#include "common.cuh"

#define NT_DEQUANT(NAME, QK, BB, ELEM)                                                    \
    extern "C" __global__ void NAME(const unsigned char* __restrict__ blocks,             \
                                    float* __restrict__ y, int n_blocks) {                \
        int b = blockIdx.x;                                                               \
        if (b >= n_blocks) return;                                                        \
        const unsigned char* blk = blocks + (long long)b * BB;                            \
        for (int j = threadIdx.x; j < QK; j += blockDim.x) y[(long long)b * QK + j] = ELEM(blk, j); \
    }

NT_DEQUANT(ref_dequantize_pq2_0, NT_PQ2_QK, NT_PQ2_BB, nt_q2_elem)
NT_DEQUANT(ref_dequantize_q2_0_g64, NT_Q2G64_QK, NT_Q2G64_BB, nt_q2_elem)
NT_DEQUANT(ref_dequantize_ptq1_0, NT_PTQ1_QK, NT_PTQ1_BB, nt_ptq1_elem)
NT_DEQUANT(ref_dequantize_tq1_0, NT_TQ1_QK, NT_TQ1_BB, nt_tq1_elem)
NT_DEQUANT(ref_dequantize_tq2_0, NT_TQ2_QK, NT_TQ2_BB, nt_tq2_elem)
