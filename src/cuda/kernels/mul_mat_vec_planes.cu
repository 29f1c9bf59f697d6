// Class `mul_mat_vec_planes`: y[r] = sum_j W[r][j] * x[j] with W a `.ninfer` row-split object
// (obj = first byte of the object; plane offsets from row_split_geometry). x has k_pad floats.
// Launch: grid (ceil(n/4),1,1), block (32,4,1), as mul_mat_vec.
#include "planes.cuh"

#define NT_MMV_PLANES(NAME, ELEM)                                                         \
    extern "C" __global__ void NAME(const unsigned char* __restrict__ obj, long long base_off, \
                                    long long high_off, long long scale_off,              \
                                    const float* __restrict__ x, float* __restrict__ y,   \
                                    int n, int k_pad) {                                   \
        __shared__ float part[4][32];                                                     \
        int r = blockIdx.x * 4 + threadIdx.y;                                             \
        float acc = 0.0f;                                                                 \
        if (r < n)                                                                        \
            for (int j = threadIdx.x; j < k_pad; j += 32) acc += (ELEM) * x[j];           \
        part[threadIdx.y][threadIdx.x] = acc;                                             \
        __syncthreads();                                                                  \
        for (int s = 16; s > 0; s >>= 1) {                                                \
            if ((int)threadIdx.x < s) part[threadIdx.y][threadIdx.x] += part[threadIdx.y][threadIdx.x + s]; \
            __syncthreads();                                                              \
        }                                                                                 \
        if (r < n && threadIdx.x == 0) y[r] = part[threadIdx.y][0];                       \
        (void)high_off;                                                                   \
    }

NT_MMV_PLANES(ref_mul_mat_vec_planes_pq2_0_g128, nt_planes_pq2(obj, base_off, scale_off, k_pad, r, j))
NT_MMV_PLANES(ref_mul_mat_vec_planes_ptq1_0_g128, nt_planes_ptq1(obj, base_off, high_off, scale_off, k_pad, r, j))
