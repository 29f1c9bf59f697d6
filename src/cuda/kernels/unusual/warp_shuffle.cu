// UNUSUAL BUT CORRECT kernels needing warp shuffles: lane reductions by a __shfl_xor_sync
// butterfly and a __shfl_down_sync tree (block (32,4,1): each threadIdx.y row is one full warp,
// every lane executes every shuffle with the full mask), and a planes mat-vec, one warp per row.
#include "../planes.cuh"

extern "C" __global__ void unusual_mul_mat_vec_pq2_0_shfl_xor(const unsigned char* w, const float* x, float* y, int n, int k) {
    int r = blockIdx.x * 4 + threadIdx.y;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 34;
        for (int j = threadIdx.x; j < k; j += 32) acc += nt_row_pq2(row, j) * x[j];
    }
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (r < n && threadIdx.x == 0) y[r] = acc;
}

extern "C" __global__ void unusual_mul_mat_vec_ptq1_0_shfl_down(const unsigned char* w, const float* x, float* y, int n, int k) {
    int r = blockIdx.x * 4 + threadIdx.y;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 28;
        for (int j = threadIdx.x; j < k; j += 32) acc += nt_row_ptq1(row, j) * x[j];
    }
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    if (r < n && threadIdx.x == 0) y[r] = acc;
}

extern "C" __global__ void unusual_mul_mat_vec_planes_ptq1_0_g128_warp_per_row(
    const unsigned char* obj, long long base_off, long long high_off, long long scale_off,
    const float* x, float* y, int n, int k_pad) {
    int r = blockIdx.x * 4 + threadIdx.y;
    float acc = 0.0f;
    if (r < n)
        for (int j = threadIdx.x; j < k_pad; j += 32) acc += nt_planes_ptq1(obj, base_off, high_off, scale_off, k_pad, r, j) * x[j];
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (r < n && threadIdx.x == 0) y[r] = acc;
}
