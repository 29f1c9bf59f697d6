// Correct class skeletons for the wrong variants: each wrong kernel plugs its own (buggy)
// per-element decoder ELEM(blk, e) -> float into one of these, so the skeleton is never the bug.
// A helper header of src/cuda/kernels/wrong/ (no #include of its own).
#pragma once

#define WV_DEQUANT(NAME, QK, BB, ELEM)                                                    \
    extern "C" __global__ void NAME(const unsigned char* __restrict__ blocks,             \
                                    float* __restrict__ y, int n_blocks) {                \
        int b = blockIdx.x;                                                               \
        if (b >= n_blocks) return;                                                        \
        const unsigned char* blk = blocks + (long long)b * (BB);                          \
        for (int j = threadIdx.x; j < (QK); j += blockDim.x) y[(long long)b * (QK) + j] = ELEM(blk, j); \
    }

#define WV_GET_ROWS(NAME, QK, BB, ELEM)                                                   \
    extern "C" __global__ void NAME(const unsigned char* __restrict__ w,                  \
                                    const int* __restrict__ ids, float* __restrict__ y,   \
                                    int n_ids, int k) {                                   \
        int i = blockIdx.x;                                                               \
        if (i >= n_ids) return;                                                           \
        const unsigned char* row = w + (long long)ids[i] * (k / (QK)) * (BB);             \
        for (int j = threadIdx.x; j < k; j += blockDim.x)                                 \
            y[(long long)i * k + j] = ELEM(row + (j / (QK)) * (BB), j % (QK));            \
    }

#define WV_MMV(NAME, QK, BB, ELEM)                                                        \
    extern "C" __global__ void NAME(const unsigned char* __restrict__ w,                  \
                                    const float* __restrict__ x, float* __restrict__ y,   \
                                    int n, int k) {                                       \
        __shared__ float part[4][32];                                                     \
        int r = blockIdx.x * 4 + threadIdx.y;                                             \
        float acc = 0.0f;                                                                 \
        if (r < n) {                                                                      \
            const unsigned char* row = w + (long long)r * (k / (QK)) * (BB);              \
            for (int j = threadIdx.x; j < k; j += 32) acc += ELEM(row + (j / (QK)) * (BB), j % (QK)) * x[j]; \
        }                                                                                 \
        part[threadIdx.y][threadIdx.x] = acc;                                             \
        __syncthreads();                                                                  \
        for (int s = 16; s > 0; s >>= 1) {                                                \
            if ((int)threadIdx.x < s) part[threadIdx.y][threadIdx.x] += part[threadIdx.y][threadIdx.x + s]; \
            __syncthreads();                                                              \
        }                                                                                 \
        if (r < n && threadIdx.x == 0) y[r] = part[threadIdx.y][0];                       \
    }

// The mat-vec's 4x32 shared-memory tree reduction, as a function (every thread calls it).
static __device__ inline float wv_reduce_4x32(float (*part)[32], float acc) {
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    for (int s = 16; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) part[threadIdx.y][threadIdx.x] += part[threadIdx.y][threadIdx.x + s];
        __syncthreads();
    }
    return part[threadIdx.y][0];
}
