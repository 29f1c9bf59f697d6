// UNUSUAL BUT CORRECT kernels with bf16 types (needs <cuda_bf16.h>) and ABI sidecars: a
// bf16-out mat-vec (f32 accumulation, one RNE rounding at the store; precision "bf16-out") and
// a bf16-in + bf16-out mat-vec (activations widened exactly; precision "bf16-in+bf16-out").
#include <cuda_bf16.h>
#include "../common.cuh"

static __device__ inline float ub_reduce(float (*part)[32], float acc) {
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    for (int s = 16; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) part[threadIdx.y][threadIdx.x] += part[threadIdx.y][threadIdx.x + s];
        __syncthreads();
    }
    return part[threadIdx.y][0];
}

extern "C" __global__ void unusual_mul_mat_vec_pq2_0_bf16_out(const unsigned char* w, const float* x, __nv_bfloat16* y, int n, int k) {
    __shared__ float part[4][32];
    int r = blockIdx.x * 4 + threadIdx.y;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 34;
        for (int j = threadIdx.x; j < k; j += 32) acc += nt_row_pq2(row, j) * x[j];
    }
    float s = ub_reduce(part, acc);
    if (r < n && threadIdx.x == 0) y[r] = __float2bfloat16_rn(s);
}

extern "C" __global__ void unusual_mul_mat_vec_ptq1_0_bf16_in_bf16_out(const unsigned char* w, const __nv_bfloat16* x, __nv_bfloat16* y, int n, int k) {
    __shared__ float part[4][32];
    int r = blockIdx.x * 4 + threadIdx.y;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 28;
        for (int j = threadIdx.x; j < k; j += 32) acc += nt_row_ptq1(row, j) * __bfloat162float(x[j]);
    }
    float s = ub_reduce(part, acc);
    if (r < n && threadIdx.x == 0) y[r] = __float2bfloat16_rn(s);
}
