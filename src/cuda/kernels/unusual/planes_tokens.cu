// UNUSUAL BUT CORRECT `mul_mat_planes` kernels: tokens in the inner loop. One launch row of
// blocks (grid (ceil(n/4), 1, 1) by ABI sidecar); each thread decodes a weight once and applies
// it to up to 8 tokens at a time (a register tile of accumulators), each token's lane sums
// reduced by a __shfl_down_sync tree (block (32,4,1): one warp per row).
#include "../planes.cuh"

#define PU_TILE 8

#define PU_KERNEL(NAME, ELEM)                                                             \
    extern "C" __global__ void NAME(const unsigned char* __restrict__ obj, long long base_off, \
                                    long long high_off, long long scale_off,              \
                                    const float* __restrict__ x, float* __restrict__ y,   \
                                    int n, int k_pad, int t) {                            \
        int r = blockIdx.x * 4 + threadIdx.y;                                             \
        for (int t0 = 0; t0 < t; t0 += PU_TILE) {                                         \
            float acc[PU_TILE];                                                           \
            for (int u = 0; u < PU_TILE; ++u) acc[u] = 0.0f;                              \
            if (r < n)                                                                    \
                for (int j = threadIdx.x; j < k_pad; j += 32) {                           \
                    float w = (ELEM);                                                     \
                    for (int u = 0; u < PU_TILE && t0 + u < t; ++u)                       \
                        acc[u] += w * x[(long long)(t0 + u) * k_pad + j];                 \
                }                                                                         \
            for (int u = 0; u < PU_TILE; ++u)                                             \
                for (int o = 16; o > 0; o >>= 1) acc[u] += __shfl_down_sync(0xffffffffu, acc[u], o); \
            if (r < n && threadIdx.x == 0)                                                \
                for (int u = 0; u < PU_TILE && t0 + u < t; ++u) y[(long long)(t0 + u) * n + r] = acc[u]; \
        }                                                                                 \
        (void)high_off;                                                                   \
    }

PU_KERNEL(unusual_mul_mat_planes_pq2_0_g128_tokens_inner, nt_planes_pq2(obj, base_off, scale_off, k_pad, r, j))
PU_KERNEL(unusual_mul_mat_planes_ptq1_0_g128_tokens_inner, nt_planes_ptq1(obj, base_off, high_off, scale_off, k_pad, r, j))
