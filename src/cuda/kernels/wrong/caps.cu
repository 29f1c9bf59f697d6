// WRONG VARIANTS (negative controls): fixed caps an engine kernel bakes in, right on small shapes.
#include "../rt_common.cuh"

extern "C" __global__ void wrong_mul_mat_vec_pq2_0_shared_x2048(const unsigned char* w, const float* x, float* y, int n, int k) {
    __shared__ float xs[2048];
    __shared__ float part[4][32];
    int tid = threadIdx.y * 32 + threadIdx.x;
    for (int j = tid; j < k; j += 128) xs[j] = x[j];      // k <= 2048 assumed
    __syncthreads();
    int r = blockIdx.x * 4 + threadIdx.y;
    float acc = 0.f;
    if (r < n) { const unsigned char* row = w + (long long)r * (k / 128) * 34;
        for (int j = threadIdx.x; j < k; j += 32) acc += rt_pq2(row, j) * xs[j]; }
    part[threadIdx.y][threadIdx.x] = acc; __syncthreads();
    for (int s = 16; s > 0; s >>= 1) { if ((int)threadIdx.x < s) part[threadIdx.y][threadIdx.x] += part[threadIdx.y][threadIdx.x + s]; __syncthreads(); }
    if (r < n && threadIdx.x == 0) y[r] = part[threadIdx.y][0];
}

#define MAXT 12
extern "C" __global__ void wrong_mul_mat_pq2_0_max_t12(const unsigned char* w, const float* x, float* y, int n, int k, int t) {
    if (blockIdx.y != 0 || threadIdx.x >= 32) return;
    int r = blockIdx.x * 32 + threadIdx.x; if (r >= n) return;
    const unsigned char* row = w + (long long)r * (k / 128) * 34;
    float acc[MAXT];
    #pragma unroll
    for (int i = 0; i < MAXT; ++i) acc[i] = 0.f;
    int tt = t < MAXT ? t : MAXT;
    for (int j = 0; j < k; ++j) { float wv = rt_pq2(row, j);
        #pragma unroll
        for (int i = 0; i < MAXT; ++i) if (i < tt) acc[i] += wv * x[(long long)i * k + j]; }
    for (int i = 0; i < tt; ++i) y[(long long)i * n + r] = acc[i];
}

extern "C" __global__ void wrong_hadamard_rotate_tokens_mod4(const float* x, const float* signs, float* y, int k, int t, int block) {
    __shared__ float buf[1024];
    int tok = blockIdx.y & 3;                                   // BUG for t > 4
    long long base = (long long)tok * k + (long long)blockIdx.x * block;
    int f0 = blockIdx.x * block;
    for (int i = threadIdx.x; i < block; i += blockDim.x) buf[i] = signs[f0 + i] * x[base + i];
    __syncthreads();
    for (int h = 1; h < block; h *= 2) {
        for (int p = threadIdx.x; p < block / 2; p += blockDim.x) { int i = (p / h) * 2 * h + p % h; float a = buf[i], b = buf[i + h]; buf[i] = a + b; buf[i + h] = a - b; }
        __syncthreads();
    }
    float norm = rsqrtf((float)block);
    for (int i = threadIdx.x; i < block; i += blockDim.x) y[base + i] = buf[i] * norm;
}

extern "C" __global__ void wrong_hadamard_rotate_signs_cache4096(const float* x, const float* signs, float* y, int k, int t, int block) {
    __shared__ float sg[4096];
    __shared__ float buf[1024];
    for (int i = threadIdx.x; i < k && i < 4096; i += blockDim.x) sg[i] = signs[i];   // "clamped" cache
    __syncthreads();
    long long base = (long long)blockIdx.y * k + (long long)blockIdx.x * block;
    int f0 = blockIdx.x * block;
    for (int i = threadIdx.x; i < block; i += blockDim.x) buf[i] = sg[(f0 + i) & 4095] * x[base + i];
    __syncthreads();
    for (int h = 1; h < block; h *= 2) {
        for (int p = threadIdx.x; p < block / 2; p += blockDim.x) { int i = (p / h) * 2 * h + p % h; float a = buf[i], b = buf[i + h]; buf[i] = a + b; buf[i + h] = a - b; }
        __syncthreads();
    }
    float norm = rsqrtf((float)block);
    for (int i = threadIdx.x; i < block; i += blockDim.x) y[base + i] = buf[i] * norm;
}

extern "C" __global__ void wrong_mul_mat_vec_pq2_0_gridstride_stale_acc(const unsigned char* w, const float* x, float* y, int n, int k) {
    float acc = 0.f;                                      // BUG: not reset per row
    for (int r = blockIdx.x * 4 + threadIdx.y; r < n; r += gridDim.x * 4) {
        const unsigned char* row = w + (long long)r * (k / 128) * 34;
        for (int j = threadIdx.x; j < k; j += 32) acc += rt_pq2(row, j) * x[j];
        float v = acc;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
        if (threadIdx.x == 0) y[r] = v;
    }
}

