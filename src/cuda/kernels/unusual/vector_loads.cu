// UNUSUAL BUT CORRECT kernels with 4-byte vector loads (uchar4) of code bytes, taken only where
// the address is 4-aligned (checked at run time on the pointer: the buffer base and the block
// offset both vary), with a byte-wise fallback otherwise. Needs CUDA vector types (uchar4).
#include "../common.cuh"

static __device__ inline uchar4 uv_load4(const unsigned char* p) {
    if (((unsigned long long)p & 3ull) == 0) return *(const uchar4*)p;
    uchar4 v;
    v.x = p[0]; v.y = p[1]; v.z = p[2]; v.w = p[3];
    return v;
}
static __device__ inline void uv_trits(unsigned b, int nd, float d, float* out, int first, int step) {
    for (int n = 0; n < nd; ++n) {
        out[first + n * step] = (float)((int)((b * 3u) >> 8) - 1) * d;
        b = (b * 3u) & 0xffu;
    }
}

// PTQ1_0 (28 B: qs[24], qh[2], d): threads 0-5 take 4 qs bytes each, thread 6 the 2 qh bytes.
extern "C" __global__ void unusual_dequantize_ptq1_0_uchar4(const unsigned char* blocks, float* y, int n_blocks) {
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * 28;
    float d = nt_scale_at(blk + 26);
    float* out = y + (long long)b * 128;
    for (int q = threadIdx.x; q < 7; q += blockDim.x) {
        if (q < 6) {
            uchar4 v = uv_load4(blk + 4 * q);
            unsigned bytes[4] = {v.x, v.y, v.z, v.w};
            for (int u = 0; u < 4; ++u) {
                int i = 4 * q + u;
                if (i < 16) uv_trits(bytes[u], 5, d, out, i, 16);
                else uv_trits(bytes[u], 5, d, out, 80 + (i - 16), 8);
            }
        } else {
            uv_trits(blk[24], 4, d, out, 120, 2);
            uv_trits(blk[25], 4, d, out, 121, 2);
        }
    }
}

// PQ2_0 mat-vec: each lane takes 4-byte words of qs (16 codes), word w of the row = block w/8, bytes 4*(w%8)..
extern "C" __global__ void unusual_mul_mat_vec_pq2_0_uchar4(const unsigned char* w, const float* x, float* y, int n, int k) {
    __shared__ float part[4][32];
    int r = blockIdx.x * 4 + threadIdx.y;
    float acc = 0.0f;
    if (r < n) {
        int nb = k / 128;
        const unsigned char* row = w + (long long)r * nb * 34;
        for (int wd = threadIdx.x; wd < nb * 8; wd += 32) {
            const unsigned char* blk = row + (wd / 8) * 34;
            float d = nt_scale_at(blk);
            uchar4 v = uv_load4(blk + 2 + 4 * (wd % 8));
            unsigned bytes[4] = {v.x, v.y, v.z, v.w};
            const float* xs = x + (wd / 8) * 128 + 16 * (wd % 8);
            float s = 0.0f;
            for (int u = 0; u < 4; ++u)
                for (int c = 0; c < 4; ++c) s += (float)((int)((bytes[u] >> (2 * c)) & 3u) - 1) * d * xs[4 * u + c];
            acc += s;
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
