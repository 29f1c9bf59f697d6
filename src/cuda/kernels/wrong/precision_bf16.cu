// WRONG VARIANT (negative control), kind precision, needing <cuda_bf16.h> and the ABI sidecar
// precision "bf16-out": a bf16-out mat-vec that also ACCUMULATES in bf16 (each partial sum
// rounded to 8 significant bits), far outside one final bf16 rounding.
#include <cuda_bf16.h>
#include "../common.cuh"

extern "C" __global__ void wrong_mul_mat_vec_pq2_0_bf16_accumulator(const unsigned char* w, const float* x, __nv_bfloat16* y, int n, int k) {
    __shared__ __nv_bfloat16 part[4][32];
    int r = blockIdx.x * 4 + threadIdx.y;
    __nv_bfloat16 acc = __float2bfloat16(0.0f);
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 34;
        for (int j = threadIdx.x; j < k; j += 32) acc = __float2bfloat16(__bfloat162float(acc) + nt_row_pq2(row, j) * x[j]);
    }
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    for (int s = 16; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            part[threadIdx.y][threadIdx.x] = __float2bfloat16(__bfloat162float(part[threadIdx.y][threadIdx.x]) + __bfloat162float(part[threadIdx.y][threadIdx.x + s]));
        __syncthreads();
    }
    if (r < n && threadIdx.x == 0) y[r] = part[threadIdx.y][0];
}
