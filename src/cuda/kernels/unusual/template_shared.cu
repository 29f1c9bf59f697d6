// CORRECT-BUT-UNUSUAL: static `__shared__` arrays declared inside function templates and an
// inline function, as engine code does (ggml's kernels are `template <...> static __global__`
// with their reduction buffers declared inside). On a GPU every such array is per block. The
// host tier used to make `__shared__` a function-local static in a named section, which g++
// ignores for a static of a template instantiation or an inline function (vague or template
// linkage): the array was then ONE copy for every block in flight and was never poisoned, so
// these kernels were reported as races. Each must pass; wrong/template_shared.cu holds the
// twins that must fail.
//
// template_row_sum: the per-row tree reduction in an external-linkage template device function
// with a static `__shared__ float part[ROWS][W]` (W = 64: lanes 32-63 zero-filled first).
// static_template_inline: the same sum in a `static` (internal-linkage) template, as ggml
// declares its kernels, plus an `inline` (non-template) helper whose own `__shared__` slot
// carries the block's row base.
#include "../common.cuh"

template <int ROWS, int W>
__device__ float ks_template_row_sum(float acc) {
    __shared__ float part[ROWS][W];
    const int l = threadIdx.x, w = threadIdx.y;
    part[w][l] = acc;
    for (int t = l + 32; t < W; t += 32) part[w][t] = 0.0f;  // the tail zero-fill
    __syncthreads();
    for (int s = W / 2; s > 0; s >>= 1) {
        if (l < s) part[w][l] += part[w][l + s];
        __syncthreads();
    }
    return part[w][0];
}

static __device__ __forceinline__ float ks_row_dot(const unsigned char* w, const float* x, int r, int n, int k) {
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / NT_PQ2_QK) * NT_PQ2_BB;
        for (int j = threadIdx.x; j < k; j += 32) acc += nt_row_pq2(row, j) * x[j];
    }
    return acc;
}

extern "C" __global__ void unusual_mul_mat_vec_pq2_0_template_shared(const unsigned char* w, const float* x, float* y, int n, int k) {
    const int r = blockIdx.x * 4 + threadIdx.y;
    const float v = ks_template_row_sum<4, 64>(ks_row_dot(w, x, r, n, k));
    if (r < n && threadIdx.x == 0) y[r] = v;
}

template <int ROWS>
static __device__ float ks_static_template_row_sum(float acc) {
    __shared__ float part[ROWS][32];
    const int l = threadIdx.x, w = threadIdx.y;
    part[w][l] = acc;
    __syncthreads();
    for (int s = 16; s > 0; s >>= 1) {
        if (l < s) part[w][l] += part[w][l + s];
        __syncthreads();
    }
    return part[w][0];
}

// Thread (0, 0) publishes the block's first row in a shared slot; every thread reads it back.
inline __device__ int ks_inline_row_base() {
    __shared__ int base;
    if (threadIdx.x == 0 && threadIdx.y == 0) base = (int)blockIdx.x * 4;
    __syncthreads();
    return base;
}

extern "C" __global__ void unusual_mul_mat_vec_pq2_0_static_template_inline(const unsigned char* w, const float* x, float* y, int n, int k) {
    const int r = ks_inline_row_base() + (int)threadIdx.y;
    const float v = ks_static_template_row_sum<4>(ks_row_dot(w, x, r, n, k));
    if (r < n && threadIdx.x == 0) y[r] = v;
}
