// WRONG VARIANT (negative control): a `.ninfer` PQ2_0_G128 object read as interleaved ggml
// blocks (scale at offset 0 of each 34-byte block) instead of row-split planes. Same ABI as
// `mul_mat_vec_planes`; the plane offsets are ignored.
#include "../common.cuh"

extern "C" __global__ void wrong_mul_mat_vec_planes_pq2_0_g128_scale_at_0(
    const unsigned char* __restrict__ obj, long long base_off, long long high_off, long long scale_off,
    const float* __restrict__ x, float* __restrict__ y, int n, int k_pad) {
    __shared__ float part[4][32];
    int r = blockIdx.x * 4 + threadIdx.y;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = obj + (long long)r * (k_pad / 128) * NT_PQ2_BB;
        for (int j = threadIdx.x; j < k_pad; j += 32) acc += nt_row_pq2(row, j) * x[j];
    }
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    for (int s = 16; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) part[threadIdx.y][threadIdx.x] += part[threadIdx.y][threadIdx.x + s];
        __syncthreads();
    }
    if (r < n && threadIdx.x == 0) y[r] = part[threadIdx.y][0];
    (void)base_off; (void)high_off; (void)scale_off;
}
