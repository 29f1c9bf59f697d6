// WRONG VARIANTS (negative controls) of `hadamard_rotate`, kind shape: the block size fixed at
// 1024 (the Bonsai value), the sign vector indexed within the block (signs[i]) instead of per
// column (signs[block_start + i]), and the 1/B normalization instead of 1/sqrt(B).
// Own butterfly (no shared helper); one CUDA block per (block, token) slice.
#define HS_MAX 1024

static __device__ inline void hs_butterflies(float* buf, int B) {
    for (int h = 1; h < B; h <<= 1) {
        for (int p = threadIdx.x; p < B / 2; p += blockDim.x) {
            int i = (p / h) * 2 * h + p % h;
            float a = buf[i], b = buf[i + h];
            buf[i] = a + b;
            buf[i + h] = a - b;
        }
        __syncthreads();
    }
}

// B hard-coded: the kernel ignores `block` (grid still k/block x t from the ABI).
extern "C" __global__ void wrong_hadamard_rotate_fixed_1024(const float* x, const float* signs, float* y, int k, int t, int block) {
    __shared__ float buf[HS_MAX];
    const int B = 1024;
    int f0 = blockIdx.x * B;
    if (f0 + B > k) return;
    long long base = (long long)blockIdx.y * k + f0;
    for (int i = threadIdx.x; i < B; i += blockDim.x) buf[i] = signs[f0 + i] * x[base + i];
    __syncthreads();
    hs_butterflies(buf, B);
    for (int i = threadIdx.x; i < B; i += blockDim.x) y[base + i] = buf[i] * 0.03125f;
    (void)t; (void)block;
}

extern "C" __global__ void wrong_hadamard_rotate_signs_per_block(const float* x, const float* signs, float* y, int k, int t, int block) {
    __shared__ float buf[HS_MAX];
    long long base = (long long)blockIdx.y * k + (long long)blockIdx.x * block;
    for (int i = threadIdx.x; i < block; i += blockDim.x) buf[i] = signs[i] * x[base + i];
    __syncthreads();
    hs_butterflies(buf, block);
    float norm = 1.0f / sqrtf((float)block);
    for (int i = threadIdx.x; i < block; i += blockDim.x) y[base + i] = buf[i] * norm;
    (void)t;
}

extern "C" __global__ void wrong_hadamard_rotate_norm_1_over_b(const float* x, const float* signs, float* y, int k, int t, int block) {
    __shared__ float buf[HS_MAX];
    long long base = (long long)blockIdx.y * k + (long long)blockIdx.x * block;
    int f0 = blockIdx.x * block;
    for (int i = threadIdx.x; i < block; i += blockDim.x) buf[i] = signs[f0 + i] * x[base + i];
    __syncthreads();
    hs_butterflies(buf, block);
    float norm = 1.0f / (float)block;
    for (int i = threadIdx.x; i < block; i += blockDim.x) y[base + i] = buf[i] * norm;
    (void)t;
}
