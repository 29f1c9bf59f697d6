// The MMQ-style K-tile loader shared by every block format of the `mul_mat` class: 128
// threads cooperatively decode a 32-row x 128-column tile of W into shared memory. The block
// stride is a parameter on purpose: a loader shared by several types is where a stale stride
// hides (it is not named after any one type).
#pragma once
#include "common.cuh"

#define NT_TILE_ROWS 32
#define NT_TILE_K 128

typedef float (*nt_elem_fn)(const unsigned char*, int);

__host__ __device__ inline void nt_load_tile(float (*tile)[NT_TILE_K + 1], const unsigned char* w, int n, int k,
                                             int r0, int k0, int qk, int bb, nt_elem_fn elem) {
    long long row_bytes = (long long)(k / qk) * bb;
    for (int e = threadIdx.x; e < NT_TILE_ROWS * NT_TILE_K; e += blockDim.x) {
        int r = e / NT_TILE_K, j = e % NT_TILE_K, kj = k0 + j;
        float v = 0.0f;
        if (r0 + r < n && kj < k) v = elem(w + (long long)(r0 + r) * row_bytes + (long long)(kj / qk) * bb, kj % qk);
        tile[r][j] = v;
    }
}

// The whole mul_mat kernel; XI is the activation index (token-major: tok * k + k0 + j).
#define NT_MUL_MAT_WITH(NAME, QK, BB, ELEM, XI)                                                  \
    extern "C" __global__ void NAME(const unsigned char* __restrict__ w,                  \
                                    const float* __restrict__ x, float* __restrict__ y,   \
                                    int n, int k, int t) {                                \
        __shared__ float tile[NT_TILE_ROWS][NT_TILE_K + 1];                               \
        int r0 = blockIdx.x * NT_TILE_ROWS;                                               \
        int r = r0 + threadIdx.x % NT_TILE_ROWS, tok = blockIdx.y * 4 + threadIdx.x / NT_TILE_ROWS; \
        float acc = 0.0f;                                                                 \
        for (int k0 = 0; k0 < k; k0 += NT_TILE_K) {                                       \
            nt_load_tile(tile, w, n, k, r0, k0, QK, BB, ELEM);                            \
            __syncthreads();                                                              \
            if (r < n && tok < t)                                                         \
                for (int j = 0; j < NT_TILE_K && k0 + j < k; ++j)                         \
                    acc += tile[threadIdx.x % NT_TILE_ROWS][j] * x[XI]; \
            __syncthreads();                                                              \
        }                                                                                 \
        if (r < n && tok < t) y[(long long)tok * n + r] = acc;                            \
    }
