// WRONG VARIANTS (negative controls), kind arch: right on every architecture but one branch of
// __CUDA_ARCH__ (a "fast path" added for Hopper / Blackwell that decodes differently). Correct
// on the host tier without __CUDA_ARCH__; caught only when the branching archs are run.
#include "../common.cuh"

// sm_90+: 2-bit codes read MSB-first within a byte.
extern "C" __global__ void wrong_dequantize_pq2_0_sm90_reversed_bits(const unsigned char* blocks, float* y, int n_blocks) {
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * 34;
    float d = nt_scale_at(blk);
    for (int j = threadIdx.x; j < 128; j += blockDim.x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        int c = (blk[2 + j / 4] >> (6 - 2 * (j % 4))) & 3;
#else
        int c = (blk[2 + j / 4] >> (2 * (j % 4))) & 3;
#endif
        y[(long long)b * 128 + j] = (float)(c - 1) * d;
    }
}

// sm_120+: base-3 digits least-significant first.
extern "C" __global__ void wrong_get_rows_ptq1_0_sm120_lsd_first(const unsigned char* w, const int* ids, float* y, int n_ids, int k) {
    int i = blockIdx.x;
    if (i >= n_ids) return;
    const unsigned char* row = w + (long long)ids[i] * (k / 128) * 28;
    for (int j = threadIdx.x; j < k; j += blockDim.x) {
        const unsigned char* blk = row + (j / 128) * 28;
        int e = j % 128, byte, digit, nd;
        if (e < 80) { byte = e % 16; digit = e / 16; nd = 5; }
        else if (e < 120) { byte = 16 + (e - 80) % 8; digit = (e - 80) / 8; nd = 5; }
        else { byte = 24 + (e - 120) % 2; digit = (e - 120) / 2; nd = 4; }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1200
        digit = nd - 1 - digit;
#endif
        (void)nd;
        y[(long long)i * k + j] = (float)(nt_trit(blk[byte], digit) - 1) * nt_scale_at(blk + 26);
    }
}
