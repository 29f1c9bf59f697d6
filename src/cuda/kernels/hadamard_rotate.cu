// Class `hadamard_rotate`: X, Y token-major [t][k]; signs [k] (one width of the sign table);
// block B = prism.hadamard.block_size (power of two, <= 1024, divides k).
// Launch: grid (k/B, t, 1), block (256,1,1).
#include "hadamard_rotate.cuh"

extern "C" __global__ void ref_hadamard_rotate(const float* __restrict__ x, const float* __restrict__ signs,
                                               float* __restrict__ y, int k, int t, int block) {
    __shared__ float buf[NT_HAD_MAX];
    long long base = (long long)blockIdx.y * k + (long long)blockIdx.x * block;
    int f0 = blockIdx.x * block;
    for (int i = threadIdx.x; i < block; i += blockDim.x) buf[i] = signs[f0 + i] * x[base + i];
    __syncthreads();
    nt_butterflies(buf, block);
    float norm = 1.0f / sqrtf((float)block);
    for (int i = threadIdx.x; i < block; i += blockDim.x) y[base + i] = buf[i] * norm;
    (void)t;
}
