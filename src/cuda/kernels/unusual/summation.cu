// UNUSUAL BUT CORRECT kernels: other f32 summation orders, all inside the any-order bound
// gamma(m+2)*sum|terms|: reversed K walk with a serial lane sum, pairwise (binary-counter
// stack) per lane with a stride-doubling tree, Kahan compensated, per-ggml-block partials, and a Hadamard rotation as the
// explicit signed sum over the B inputs (H[i][c] = (-1)^popcount(i&c)), no shared memory.
#include "../common.cuh"

extern "C" __global__ void unusual_mul_mat_vec_pq2_0_reversed(const unsigned char* w, const float* x, float* y, int n, int k) {
    __shared__ float part[4][32];
    int r = blockIdx.x * 4 + threadIdx.y;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 34;
        for (int j = k - 1 - (int)threadIdx.x; j >= 0; j -= 32) acc += nt_row_pq2(row, j) * x[j];
    }
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (r < n && threadIdx.x == 31) {
        float s = 0.0f;
        for (int l = 31; l >= 0; --l) s += part[threadIdx.y][l];
        y[r] = s;
    }
}

extern "C" __global__ void unusual_mul_mat_vec_ptq1_0_pairwise(const unsigned char* w, const float* x, float* y, int n, int k) {
    __shared__ float part[4][32];
    int r = blockIdx.x * 4 + threadIdx.y, l = threadIdx.x;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 28;
        float stk[40];
        int top = 0, cnt = 0;
        for (int b = 0; b < k / 128; ++b) {
            const unsigned char* blk = row + b * 28;
            const float* xb = x + b * 128;
            // this lane's 4 terms of the block, summed as a pair of pairs
            float p = (nt_ptq1_elem(blk, l) * xb[l] + nt_ptq1_elem(blk, l + 32) * xb[l + 32]) +
                      (nt_ptq1_elem(blk, l + 64) * xb[l + 64] + nt_ptq1_elem(blk, l + 96) * xb[l + 96]);
            for (int c = cnt; c & 1; c >>= 1) p = stk[--top] + p;  // merge equal-size partials
            stk[top++] = p;
            ++cnt;
        }
        while (top > 0) acc = stk[--top] + acc;
    }
    part[threadIdx.y][l] = acc;
    __syncthreads();
    for (int s = 1; s < 32; s <<= 1) {  // stride-doubling tree: part[l] += part[l+s] for l % 2s == 0
        if (l % (2 * s) == 0) part[threadIdx.y][l] += part[threadIdx.y][l + s];
        __syncthreads();
    }
    if (r < n && l == 0) y[r] = part[threadIdx.y][0];
}

extern "C" __global__ void unusual_mul_mat_vec_pq2_0_kahan(const unsigned char* w, const float* x, float* y, int n, int k) {
    __shared__ float part[4][32];
    int r = blockIdx.x * 4 + threadIdx.y;
    float s = 0.0f, c = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 34;
        for (int j = threadIdx.x; j < k; j += 32) {
            float v = nt_row_pq2(row, j) * x[j] - c;
            float t2 = s + v;
            c = (t2 - s) - v;
            s = t2;
        }
    }
    part[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (r < n && threadIdx.x == 0) {
        float S = 0.0f, C = 0.0f;
        for (int l = 0; l < 32; ++l) {
            float v = part[threadIdx.y][l] - C;
            float t2 = S + v;
            C = (t2 - S) - v;
            S = t2;
        }
        y[r] = S;
    }
}

// mul_mat (class launch): one (row, token) per thread, a partial per ggml block added to the total.
extern "C" __global__ void unusual_mul_mat_ptq1_0_blocked(const unsigned char* w, const float* x, float* y, int n, int k, int t) {
    int r = blockIdx.x * 32 + threadIdx.x % 32, tok = blockIdx.y * 4 + threadIdx.x / 32;
    if (r >= n || tok >= t) return;
    const unsigned char* row = w + (long long)r * (k / 128) * 28;
    const float* xt = x + (long long)tok * k;
    float acc = 0.0f;
    for (int b = 0; b < k / 128; ++b) {
        float part = 0.0f;
        for (int e = 0; e < 128; ++e) part += nt_ptq1_elem(row + b * 28, e) * xt[b * 128 + e];
        acc += part;
    }
    y[(long long)tok * n + r] = acc;
}

static __device__ inline int uh_parity(unsigned v) {
    v ^= v >> 16; v ^= v >> 8; v ^= v >> 4; v ^= v >> 2; v ^= v >> 1;
    return (int)(v & 1u);
}

extern "C" __global__ void unusual_hadamard_rotate_direct(const float* x, const float* signs, float* y, int k, int t, int block) {
    long long base = (long long)blockIdx.y * k + (long long)blockIdx.x * block;
    int f0 = blockIdx.x * block;
    float norm = 1.0f / sqrtf((float)block);
    for (int i = threadIdx.x; i < block; i += blockDim.x) {
        float acc = 0.0f;
        for (int c = 0; c < block; ++c) {
            float v = signs[f0 + c] * x[base + c];
            acc += uh_parity((unsigned)(i & c)) ? -v : v;
        }
        y[base + i] = acc * norm;
    }
    (void)t;
}
