// WRONG VARIANTS (negative controls), kind value-map, 2-bit formats: code 3 clamped to +1 in
// every class that decodes 2-bit codes, the code offset c-2 (Q2_0S-style) instead of c-1, and
// a "scale is a magnitude" fabsf(d). Each author wrote their own decoder (no shared helper).
#include "../common.cuh"

// Author's own per-block 2-bit reader: scale first, element j at qs[j/4] bits 2*(j%4).
static __device__ inline int vm_code(const unsigned char* blk, int j) { return (blk[2 + j / 4] >> (2 * (j % 4))) & 3; }
static __device__ inline float vm_d(const unsigned char* p) { return nt_f16((unsigned short)(p[0] | (p[1] << 8))); }

// Code 3 clamped to +1 ("ternary only"), on the legacy Q2_0-g128 bytes (same layout as PQ2_0).
extern "C" __global__ void wrong_dequantize_q2_0_g128_legacy_code3_as_plus1(const unsigned char* blocks, float* y, int n_blocks) {
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * 34;
    float d = vm_d(blk);
    for (int j = threadIdx.x; j < 128; j += blockDim.x) {
        int c = vm_code(blk, j);
        y[(long long)b * 128 + j] = (float)(c > 2 ? 1 : c - 1) * d;
    }
}

// Code 3 clamped to +1 on mainline Q2_0 (G = 64, 18 B).
extern "C" __global__ void wrong_dequantize_q2_0_g64_code3_as_plus1(const unsigned char* blocks, float* y, int n_blocks) {
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * 18;
    float d = vm_d(blk);
    for (int j = threadIdx.x; j < 64; j += blockDim.x) {
        int c = vm_code(blk, j);
        if (c == 3) c = 2;
        y[(long long)b * 64 + j] = (float)(c - 1) * d;
    }
}

// TQ2_0 (qs[64] then d; element e at byte (e/128)*32 + e%32, bits 2*((e%128)/32)) with code 3 -> +1
// through a ternary lookup table {-1, 0, +1, +1}.
extern "C" __global__ void wrong_dequantize_tq2_0_code3_as_plus1(const unsigned char* blocks, float* y, int n_blocks) {
    const float lut[4] = {-1.0f, 0.0f, 1.0f, 1.0f};
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * 66;
    float d = vm_d(blk + 64);
    for (int e = threadIdx.x; e < 256; e += blockDim.x) {
        int c = (blk[(e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32))) & 3;
        y[(long long)b * 256 + e] = lut[c] * d;
    }
}

// PQ2_0 with the code offset of a 4-level signed format (c - 2) instead of c - 1.
extern "C" __global__ void wrong_dequantize_pq2_0_code_minus_2(const unsigned char* blocks, float* y, int n_blocks) {
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * 34;
    float d = vm_d(blk);
    for (int j = threadIdx.x; j < 128; j += blockDim.x) y[(long long)b * 128 + j] = (float)(vm_code(blk, j) - 2) * d;
}

// TQ2_0 with c - 2.
extern "C" __global__ void wrong_dequantize_tq2_0_code_minus_2(const unsigned char* blocks, float* y, int n_blocks) {
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * 66;
    float d = vm_d(blk + 64);
    for (int e = threadIdx.x; e < 256; e += blockDim.x) {
        int c = (blk[(e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32))) & 3;
        y[(long long)b * 256 + e] = (float)(c - 2) * d;
    }
}

// PQ2_0 with |d|: the author assumed the quantizer stores amax (never negative).
extern "C" __global__ void wrong_dequantize_pq2_0_abs_scale(const unsigned char* blocks, float* y, int n_blocks) {
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * 34;
    float d = fabsf(vm_d(blk));
    for (int j = threadIdx.x; j < 128; j += blockDim.x) y[(long long)b * 128 + j] = (float)(vm_code(blk, j) - 1) * d;
}

// get_rows PQ2_0 with code 3 -> +1.
extern "C" __global__ void wrong_get_rows_pq2_0_code3_as_plus1(const unsigned char* w, const int* ids, float* y, int n_ids, int k) {
    int i = blockIdx.x;
    if (i >= n_ids) return;
    const unsigned char* row = w + (long long)ids[i] * (k / 128) * 34;
    for (int j = threadIdx.x; j < k; j += blockDim.x) {
        const unsigned char* blk = row + (j / 128) * 34;
        int c = vm_code(blk, j % 128);
        y[(long long)i * k + j] = (float)(c == 3 ? 1 : c - 1) * vm_d(blk);
    }
}

// mul_mat_vec PQ2_0 with code 3 -> +1 (shared-memory tree reduction as the reference).
extern "C" __global__ void wrong_mul_mat_vec_pq2_0_code3_as_plus1(const unsigned char* w, const float* x, float* y, int n, int k) {
    __shared__ float part[4][32];
    int r = blockIdx.x * 4 + threadIdx.y;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 34;
        for (int j = threadIdx.x; j < k; j += 32) {
            const unsigned char* blk = row + (j / 128) * 34;
            int c = vm_code(blk, j % 128);
            if (c == 3) c = 2;
            acc += (float)(c - 1) * vm_d(blk) * x[j];
        }
    }
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    for (int s = 16; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) part[threadIdx.y][threadIdx.x] += part[threadIdx.y][threadIdx.x + s];
        __syncthreads();
    }
    if (r < n && threadIdx.x == 0) y[r] = part[threadIdx.y][0];
}
