// UNUSUAL BUT CORRECT `hadamard_rotate` kernels: y = H_B (s ⊙ x) / sqrt(B) per token and block.
// shfl_then_shared: the first 5 butterfly stages (h = 1..16, inside 32-element chunks) by
//   __shfl_xor_sync in registers, the rest in shared memory (needs warp shuffles);
// dynamic_smem: the slice in `extern __shared__ float buf[]` (sidecar shared = block * 4);
// (the direct O(B^2) form is unusual_hadamard_rotate_direct in summation.cu)

extern "C" __global__ void unusual_hadamard_rotate_shfl_then_shared(const float* x, const float* signs, float* y, int k, int t, int block) {
    __shared__ float buf[1024];
    long long base = (long long)blockIdx.y * k + (long long)blockIdx.x * block;
    int f0 = blockIdx.x * block;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nwarps = blockDim.x / 32;
    // chunk c (32 consecutive elements) belongs to one whole warp: shuffles are warp-uniform
    for (int c = warp; c < block / 32; c += nwarps) {
        int i = c * 32 + lane;
        float v = signs[f0 + i] * x[base + i];
        for (int h = 1; h < 32; h <<= 1) {
            float o = __shfl_xor_sync(0xffffffffu, v, h);
            v = (lane & h) ? o - v : v + o;  // pair (i, i^h): low gets a+b, high gets a-b
        }
        buf[i] = v;
    }
    __syncthreads();
    for (int h = 32; h < block; h <<= 1) {
        for (int p = threadIdx.x; p < block / 2; p += blockDim.x) {
            int i = (p / h) * 2 * h + p % h;
            float a = buf[i], b = buf[i + h];
            buf[i] = a + b;
            buf[i + h] = a - b;
        }
        __syncthreads();
    }
    float norm = 1.0f / sqrtf((float)block);
    for (int i = threadIdx.x; i < block; i += blockDim.x) y[base + i] = buf[i] * norm;
    (void)t;
}

// Sidecar launch: grid (k / block, t, 1), block (256,1,1), shared = block * 4 bytes.
extern "C" __global__ void unusual_hadamard_rotate_dynamic_smem(const float* x, const float* signs, float* y, int k, int t, int block) {
    extern __shared__ float dyn[];
    long long base = (long long)blockIdx.y * k + (long long)blockIdx.x * block;
    int f0 = blockIdx.x * block;
    for (int i = threadIdx.x; i < block; i += blockDim.x) dyn[i] = signs[f0 + i] * x[base + i];
    __syncthreads();
    for (int h = 1; h < block; h <<= 1) {
        // pair index p -> (i, i + h) with i's bit h clear: insert a 0 bit at position log2(h)
        for (int p = threadIdx.x; p < block / 2; p += blockDim.x) {
            int i = ((p & ~(h - 1)) << 1) | (p & (h - 1));
            float a = dyn[i], b = dyn[i + h];
            dyn[i] = a + b;
            dyn[i + h] = a - b;
        }
        __syncthreads();
    }
    float norm = 1.0f / sqrtf((float)block);
    for (int i = threadIdx.x; i < block; i += blockDim.x) y[base + i] = dyn[i] * norm;
    (void)t;
}

