// Class `mul_mat_planes`: y[i][r] = sum_j W[r][j] * x[i][j] for tokens i < t, with W a `.ninfer`
// row-split object (obj = first byte of the object; plane offsets from row_split_geometry).
// x is [t, k_pad] token-major (token i at x + i * k_pad), y is [t, n] token-major.
// Launch: grid (ceil(n/4), t, 1), block (32,4,1): mul_mat_vec_planes with one token per blockIdx.y.
#include "planes.cuh"

#define NT_MM_PLANES(NAME, ELEM)                                                          \
    extern "C" __global__ void NAME(const unsigned char* __restrict__ obj, long long base_off, \
                                    long long high_off, long long scale_off,              \
                                    const float* __restrict__ x, float* __restrict__ y,   \
                                    int n, int k_pad, int t) {                            \
        __shared__ float part[4][32];                                                     \
        int r = blockIdx.x * 4 + threadIdx.y, tok = blockIdx.y;                           \
        const float* xt = x + (long long)tok * k_pad;                                     \
        float acc = 0.0f;                                                                 \
        if (r < n && tok < t)                                                             \
            for (int j = threadIdx.x; j < k_pad; j += 32) acc += (ELEM) * xt[j];          \
        part[threadIdx.y][threadIdx.x] = acc;                                             \
        __syncthreads();                                                                  \
        for (int s = 16; s > 0; s >>= 1) {                                                \
            if ((int)threadIdx.x < s) part[threadIdx.y][threadIdx.x] += part[threadIdx.y][threadIdx.x + s]; \
            __syncthreads();                                                              \
        }                                                                                 \
        if (r < n && tok < t && threadIdx.x == 0) y[(long long)tok * n + r] = part[threadIdx.y][0]; \
        (void)high_off;                                                                   \
    }

NT_MM_PLANES(ref_mul_mat_planes_pq2_0_g128, nt_planes_pq2(obj, base_off, scale_off, k_pad, r, j))
NT_MM_PLANES(ref_mul_mat_planes_ptq1_0_g128, nt_planes_ptq1(obj, base_off, high_off, scale_off, k_pad, r, j))
