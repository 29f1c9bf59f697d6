// Class `mul_mat_vec` (the vec_dot / mmvq path): y[r] = sum_j W[r][j] * x[j], W [n, k] in
// ggml blocks, f32 accumulation. Launch: grid (ceil(n/4),1,1), block (32,4,1): 4 rows per
// CUDA block, 32 lanes per row, shared-memory tree reduction (exercises __syncthreads).
#include "common.cuh"

#define NT_MMV(NAME, QK, BB, ROW_ELEM)                                                    \
    extern "C" __global__ void NAME(const unsigned char* __restrict__ w,                  \
                                    const float* __restrict__ x, float* __restrict__ y,   \
                                    int n, int k) {                                       \
        __shared__ float part[4][32];                                                     \
        int r = blockIdx.x * 4 + threadIdx.y;                                             \
        float acc = 0.0f;                                                                 \
        if (r < n) {                                                                      \
            const unsigned char* row = w + (long long)r * (k / QK) * BB;                  \
            for (int j = threadIdx.x; j < k; j += 32) acc += ROW_ELEM(row, j) * x[j];     \
        }                                                                                 \
        part[threadIdx.y][threadIdx.x] = acc;                                             \
        __syncthreads();                                                                  \
        for (int s = 16; s > 0; s >>= 1) {                                                \
            if ((int)threadIdx.x < s) part[threadIdx.y][threadIdx.x] += part[threadIdx.y][threadIdx.x + s]; \
            __syncthreads();                                                              \
        }                                                                                 \
        if (r < n && threadIdx.x == 0) y[r] = part[threadIdx.y][0];                       \
    }

NT_MMV(ref_mul_mat_vec_pq2_0, NT_PQ2_QK, NT_PQ2_BB, nt_row_pq2)
NT_MMV(ref_mul_mat_vec_ptq1_0, NT_PTQ1_QK, NT_PTQ1_BB, nt_row_ptq1)
