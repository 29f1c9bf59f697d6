// WRONG VARIANTS (negative controls), kind precision, f32 ABI, using __half (needs
// <cuda_fp16.h>): f16-rounded output, activations rounded to f16 before the product, an f16
// accumulator, and a dequantized value computed in half arithmetic (2*d overflows to Inf for
// |d| > 32752, where f32 holds it).
#include <cuda_fp16.h>
#include "../common.cuh"

static __device__ inline float ph_reduce(float (*part)[32], float acc) {
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    for (int s = 16; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) part[threadIdx.y][threadIdx.x] += part[threadIdx.y][threadIdx.x + s];
        __syncthreads();
    }
    return part[threadIdx.y][0];
}

// Result stored through __half (an f16-out kernel wrapped for the f32 ABI by widening).
extern "C" __global__ void wrong_mul_mat_vec_pq2_0_f16_output(const unsigned char* w, const float* x, float* y, int n, int k) {
    __shared__ float part[4][32];
    int r = blockIdx.x * 4 + threadIdx.y;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 34;
        for (int j = threadIdx.x; j < k; j += 32) acc += nt_row_pq2(row, j) * x[j];
    }
    float s = ph_reduce(part, acc);
    if (r < n && threadIdx.x == 0) y[r] = __half2float(__float2half(s));
}

// Activations converted to __half on load (an f16-activation engine path behind an f32 ABI).
extern "C" __global__ void wrong_mul_mat_vec_ptq1_0_x_as_half(const unsigned char* w, const float* x, float* y, int n, int k) {
    __shared__ float part[4][32];
    int r = blockIdx.x * 4 + threadIdx.y;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 28;
        for (int j = threadIdx.x; j < k; j += 32) acc += nt_row_ptq1(row, j) * __half2float(__float2half(x[j]));
    }
    float s = ph_reduce(part, acc);
    if (r < n && threadIdx.x == 0) y[r] = s;
}

// Everything accumulated in __half (lane sums and the tree).
extern "C" __global__ void wrong_mul_mat_vec_pq2_0_half_accumulator(const unsigned char* w, const float* x, float* y, int n, int k) {
    __shared__ __half hpart[4][32];
    int r = blockIdx.x * 4 + threadIdx.y;
    __half acc = __float2half(0.0f);
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 34;
        for (int j = threadIdx.x; j < k; j += 32) acc = __hadd(acc, __float2half(nt_row_pq2(row, j) * x[j]));
    }
    hpart[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    for (int s = 16; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) hpart[threadIdx.y][threadIdx.x] = __hadd(hpart[threadIdx.y][threadIdx.x], hpart[threadIdx.y][threadIdx.x + s]);
        __syncthreads();
    }
    if (r < n && threadIdx.x == 0) y[r] = __half2float(hpart[threadIdx.y][0]);
}

// (code - 1) * d computed as __half * __half, then widened: exact except 2*d past 65504 (-> Inf).
extern "C" __global__ void wrong_dequantize_pq2_0_half_arith(const unsigned char* blocks, float* y, int n_blocks) {
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * 34;
    __half d = __ushort_as_half((unsigned short)(blk[0] | (blk[1] << 8)));
    for (int j = threadIdx.x; j < 128; j += blockDim.x) {
        int c = (blk[2 + j / 4] >> (2 * (j % 4))) & 3;
        y[(long long)b * 128 + j] = __half2float(__hmul(__int2half_rn(c - 1), d));
    }
}
