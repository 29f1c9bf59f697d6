// WRONG VARIANTS (negative controls) of `hadamard_rotate`:
// unnormalized: H without the 1/sqrt(B) factor (outputs sqrt(B) = 32x too large at B = 1024);
// signs_after: s ⊙ (H x) instead of H (s ⊙ x).
#include "../hadamard_rotate.cuh"

extern "C" __global__ void wrong_hadamard_rotate_unnormalized(const float* __restrict__ x, const float* __restrict__ signs,
                                                              float* __restrict__ y, int k, int t, int block) {
    __shared__ float buf[NT_HAD_MAX];
    long long base = (long long)blockIdx.y * k + (long long)blockIdx.x * block;
    int f0 = blockIdx.x * block;
    for (int i = threadIdx.x; i < block; i += blockDim.x) buf[i] = signs[f0 + i] * x[base + i];
    __syncthreads();
    nt_butterflies(buf, block);
    for (int i = threadIdx.x; i < block; i += blockDim.x) y[base + i] = buf[i];
    (void)t;
}

extern "C" __global__ void wrong_hadamard_rotate_signs_after(const float* __restrict__ x, const float* __restrict__ signs,
                                                             float* __restrict__ y, int k, int t, int block) {
    __shared__ float buf[NT_HAD_MAX];
    long long base = (long long)blockIdx.y * k + (long long)blockIdx.x * block;
    int f0 = blockIdx.x * block;
    for (int i = threadIdx.x; i < block; i += blockDim.x) buf[i] = x[base + i];
    __syncthreads();
    nt_butterflies(buf, block);
    float norm = 1.0f / sqrtf((float)block);
    for (int i = threadIdx.x; i < block; i += blockDim.x) y[base + i] = signs[f0 + i] * (buf[i] * norm);
    (void)t;
}
