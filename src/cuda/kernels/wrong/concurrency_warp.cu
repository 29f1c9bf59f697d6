// WRONG VARIANT (negative control), kind concurrency, needing warp shuffles: a mat-vec whose
// lane reduction runs on lanes 0-15 only with mask 0x0000ffff, so the first step (offset 16)
// reads lanes 16-31, which are neither in the mask nor executing the shuffle (undefined value).
#include "../common.cuh"

extern "C" __global__ void wrong_mul_mat_vec_ptq1_0_shfl_half_mask(const unsigned char* w, const float* x, float* y, int n, int k) {
    int r = blockIdx.x * 4 + threadIdx.y, lane = threadIdx.x;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 28;
        for (int j = lane; j < k; j += 32) acc += nt_row_ptq1(row, j) * x[j];
    }
    if (lane < 16)
        for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0x0000ffffu, acc, off);
    if (r < n && lane == 0) y[r] = acc;
}
