// WRONG VARIANTS (negative controls) with static `__shared__` arrays inside function templates,
// twins of unusual/template_shared.cu. Before the host tier put such arrays in per-block
// shared memory, the array was one copy reset to zeros before every run and never poisoned,
// so the missing zero-fill read zeros and passed.
//
// template_no_tail_fill: the reduction buffer is W = 64 wide for 32 lanes, and the tail
// zero-fill of lanes 32-63 is missing: the first fold adds slots no thread wrote.
// template_no_barrier: the tree reduction starts right after each lane stores its partial sum,
// without the `__syncthreads()` between those stores and the first fold's reads.
#include "../common.cuh"

static __device__ __forceinline__ float ks_row_dot(const unsigned char* w, const float* x, int r, int n, int k) {
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / NT_PQ2_QK) * NT_PQ2_BB;
        for (int j = threadIdx.x; j < k; j += 32) acc += nt_row_pq2(row, j) * x[j];
    }
    return acc;
}

template <int ROWS, int W>
__device__ float ks_template_sum_no_tail_fill(float acc) {
    __shared__ float part[ROWS][W];
    const int l = threadIdx.x, w = threadIdx.y;
    part[w][l] = acc;  // lanes 32..W-1 are never stored
    __syncthreads();
    for (int s = W / 2; s > 0; s >>= 1) {
        if (l < s) part[w][l] += part[w][l + s];
        __syncthreads();
    }
    return part[w][0];
}

extern "C" __global__ void wrong_mul_mat_vec_pq2_0_template_no_tail_fill(const unsigned char* w, const float* x, float* y, int n, int k) {
    const int r = blockIdx.x * 4 + threadIdx.y;
    const float v = ks_template_sum_no_tail_fill<4, 64>(ks_row_dot(w, x, r, n, k));
    if (r < n && threadIdx.x == 0) y[r] = v;
}

template <int ROWS>
__device__ float ks_template_sum_no_barrier(float acc) {
    __shared__ float part[ROWS][32];
    const int l = threadIdx.x, w = threadIdx.y;
    part[w][l] = acc;
    // missing: __syncthreads();
    for (int s = 16; s > 0; s >>= 1) {
        if (l < s) part[w][l] += part[w][l + s];
        __syncthreads();
    }
    return part[w][0];
}

extern "C" __global__ void wrong_mul_mat_vec_pq2_0_template_no_barrier(const unsigned char* w, const float* x, float* y, int n, int k) {
    const int r = blockIdx.x * 4 + threadIdx.y;
    const float v = ks_template_sum_no_barrier<4>(ks_row_dot(w, x, r, n, k));
    if (r < n && threadIdx.x == 0) y[r] = v;
}
