// WRONG VARIANTS (negative controls), kind layout, 2-bit formats: reversed 2-bit order within a
// byte (element j at bits 6-2*(j%4)), the TQ2_0-style planar order on PQ2_0 (byte j%32 holds
// elements j, j+32, j+64, j+96), other block sizes, the scale at the other end of the block,
// and TQ2_0 read in PQ2_0's sequential order.
#include "../common.cuh"
#include "wv_common.cuh"

static __device__ inline float lq_d(const unsigned char* p) { return nt_f16((unsigned short)(p[0] | (p[1] << 8))); }

static __device__ inline float lq_reversed(const unsigned char* blk, int j) {
    return (float)(((blk[2 + j / 4] >> (6 - 2 * (j % 4))) & 3) - 1) * lq_d(blk);
}
static __device__ inline float lq_planar(const unsigned char* blk, int j) {
    return (float)(((blk[2 + j % 32] >> (2 * (j / 32))) & 3) - 1) * lq_d(blk);
}
// Scale after the codes: qs[32] then d (as TQ2_0 / PTQ1_0 put it).
static __device__ inline float lq_scale_last(const unsigned char* blk, int j) {
    return (float)(((blk[j / 4] >> (2 * (j % 4))) & 3) - 1) * lq_d(blk + 32);
}
// TQ2_0 read with PQ2_0's sequential order (byte e/4, bits 2*(e%4)); scale last, right.
static __device__ inline float lq_tq2_sequential(const unsigned char* blk, int e) {
    return (float)(((blk[e / 4] >> (2 * (e % 4))) & 3) - 1) * lq_d(blk + 64);
}

WV_DEQUANT(wrong_dequantize_pq2_0_reversed_bits, 128, 34, lq_reversed)
WV_DEQUANT(wrong_dequantize_q2_0_g128_legacy_reversed_bits, 128, 34, lq_reversed)
WV_DEQUANT(wrong_dequantize_q2_0_g64_reversed_bits, 64, 18, lq_reversed)
WV_DEQUANT(wrong_dequantize_pq2_0_planar, 128, 34, lq_planar)
WV_DEQUANT(wrong_dequantize_pq2_0_scale_last, 128, 34, lq_scale_last)
WV_DEQUANT(wrong_dequantize_tq2_0_sequential, 256, 66, lq_tq2_sequential)
WV_GET_ROWS(wrong_get_rows_pq2_0_planar, 128, 34, lq_planar)
WV_GET_ROWS(wrong_get_rows_pq2_0_reversed_bits, 128, 34, lq_reversed)
WV_MMV(wrong_mul_mat_vec_pq2_0_reversed_bits, 128, 34, lq_reversed)
WV_MMV(wrong_mul_mat_vec_pq2_0_planar, 128, 34, lq_planar)

// Other block geometries over the dequantize ABI (n_blocks counts blocks of the CASE's format):
// the element index i is global, decoded as if blocks had QK elements and 2 + QK/4 bytes.
#define LQ_DEQUANT_AS(NAME, CASE_QK, QK)                                                  \
    extern "C" __global__ void NAME(const unsigned char* __restrict__ blocks,             \
                                    float* __restrict__ y, int n_blocks) {                \
        int b = blockIdx.x;                                                               \
        if (b >= n_blocks) return;                                                        \
        for (int j = threadIdx.x; j < (CASE_QK); j += blockDim.x) {                       \
            long long i = (long long)b * (CASE_QK) + j;                                   \
            long long ib = i / (QK);                                                      \
            /* the last geometry block may reach past the data: clamp like a bounds-checked reader */ \
            if ((ib + 1) * (2 + (QK) / 4) > (long long)n_blocks * (2 + (CASE_QK) / 4)) { y[i] = 0.0f; continue; } \
            y[i] = nt_q2_elem(blocks + ib * (2 + (QK) / 4), (int)(i % (QK)));             \
        }                                                                                 \
    }
LQ_DEQUANT_AS(wrong_dequantize_pq2_0_block256, 128, 256)
LQ_DEQUANT_AS(wrong_dequantize_q2_0_g64_block128, 64, 128)
LQ_DEQUANT_AS(wrong_dequantize_q2_0_g128_legacy_block64, 128, 64)
