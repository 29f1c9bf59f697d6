// WRONG VARIANTS (negative controls), kind memory: results are right, the accesses are not.
// prefetch_next: the next ggml block's scale is loaded unconditionally (one block past the end
//   for the last block); word_scale: the scale fetched as the upper half of the 32-bit word that
//   ends at it (2 bytes before the first block); u32_loads: qs read through a reinterpreted
//   4-byte pointer (uint4_loads: memory_vector.cu) at 34-byte block offsets (misaligned); store_unguarded:
//   the mat-vec's final store lacks its r < n guard (writes past y when n % 4 != 0).
#include "../common.cuh"
#include "wv_common.cuh"

extern "C" __global__ void wrong_dequantize_pq2_0_prefetch_next(const unsigned char* blocks, float* y, int n_blocks) {
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * 34;
    // "prefetch" of the next block's scale into cache (volatile so the load is kept, as __ldg/ld.global would be)
    volatile const unsigned char* nxt = blk + 34;
    unsigned char warm = nxt[0];
    (void)warm;
    float d = nt_scale_at(blk);
    for (int j = threadIdx.x; j < 128; j += blockDim.x) {
        int c = (blk[2 + j / 4] >> (2 * (j % 4))) & 3;
        y[(long long)b * 128 + j] = (float)(c - 1) * d;
    }
}

// Scale as the high half of the little-endian word blk[-2..1] (an "aligned word" habit). The
// loads are volatile so they stay, as the one 32-bit ld.global a GPU would issue does (the
// host compiler would otherwise drop the two bytes whose bits are shifted out).
static __device__ inline float mem_word_scale_elem(const unsigned char* blk, int j) {
    volatile const unsigned char* v = blk;
    unsigned wd = (unsigned)v[-2] | ((unsigned)v[-1] << 8) | ((unsigned)v[0] << 16) | ((unsigned)v[1] << 24);
    float d = nt_f16((unsigned short)(wd >> 16));
    return (float)(((blk[2 + j / 4] >> (2 * (j % 4))) & 3) - 1) * d;
}
WV_MMV(wrong_mul_mat_vec_pq2_0_word_scale, 128, 34, mem_word_scale_elem)

// qs through const unsigned*: blk + 2 + 4*i is 4-aligned only for odd blocks.
extern "C" __global__ void wrong_dequantize_pq2_0_u32_loads(const unsigned char* blocks, float* y, int n_blocks) {
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * 34;
    float d = nt_scale_at(blk);
    const unsigned* q32 = (const unsigned*)(blk + 2);
    for (int j = threadIdx.x; j < 128; j += blockDim.x) {
        unsigned wd = q32[j / 16];
        y[(long long)b * 128 + j] = (float)((int)((wd >> (2 * (j % 16))) & 3u) - 1) * d;
    }
}

extern "C" __global__ void wrong_mul_mat_vec_ptq1_0_store_unguarded(const unsigned char* w, const float* x, float* y, int n, int k) {
    __shared__ float part[4][32];
    int r = blockIdx.x * 4 + threadIdx.y;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 28;
        for (int j = threadIdx.x; j < k; j += 32) acc += nt_row_ptq1(row, j) * x[j];
    }
    float s = wv_reduce_4x32(part, acc);
    if (threadIdx.x == 0) y[r] = s;
}
