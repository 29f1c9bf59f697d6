// WRONG VARIANTS (negative controls) of `mul_mat_vec_planes` (.ninfer row-split-k128-v1
// objects), kind shape: base offset hard-coded to 0, scale offset assumed to follow the base
// plane directly (no plane alignment), the high plane ignored (PTQ1_0 qh read from the base
// offset), the scale plane's groups per row from k instead of k_pad, and x read up to k_pad
// when the caller's x holds k floats. The last two take k through an ABI sidecar.
#include "../common.cuh"
#include "wv_common.cuh"

// Author's decoders with explicit plane pointers.
static __device__ inline float pl_pq2(const unsigned char* base, const unsigned char* scale, long long grp, int e) {
    int code = (base[grp * 32 + e / 4] >> (2 * (e % 4))) & 3;
    return (float)(code - 1) * nt_scale_at(scale + grp * 2);
}
static __device__ inline float pl_ptq1(const unsigned char* base, const unsigned char* high, const unsigned char* scale, long long grp, int e) {
    const unsigned char* qs = base + grp * 24;
    const unsigned char* qh = high + grp * 2;
    int t;
    if (e < 80) t = nt_trit(qs[e % 16], e / 16);
    else if (e < 120) t = nt_trit(qs[16 + (e - 80) % 8], (e - 80) / 8);
    else t = nt_trit(qh[(e - 120) % 2], (e - 120) / 2);
    return (float)(t - 1) * nt_scale_at(scale + grp * 2);
}

// BODY computes acc for row r (r < n) from j in [0, K_LOOP); defines base/high/scale first.
#define PL_KERNEL(NAME, PLANES, K_LOOP, ELEM)                                             \
    extern "C" __global__ void NAME(const unsigned char* __restrict__ obj, long long base_off, \
                                    long long high_off, long long scale_off,              \
                                    const float* __restrict__ x, float* __restrict__ y,   \
                                    int n, int k_pad) {                                   \
        __shared__ float part[4][32];                                                     \
        int r = blockIdx.x * 4 + threadIdx.y, gpr = k_pad / 128;                          \
        PLANES;                                                                           \
        float acc = 0.0f;                                                                 \
        if (r < n)                                                                        \
            for (int j = threadIdx.x; j < (K_LOOP); j += 32) acc += (ELEM) * x[j];        \
        float s = wv_reduce_4x32(part, acc);                                              \
        if (r < n && threadIdx.x == 0) y[r] = s;                                          \
        (void)base_off; (void)high_off; (void)scale_off;                                  \
    }

// base_off taken as 0 ("the base plane always starts the object").
PL_KERNEL(wrong_mul_mat_vec_planes_pq2_0_g128_base_at_0,
          const unsigned char* base = obj; const unsigned char* scale = obj + scale_off,
          k_pad, pl_pq2(base, scale, (long long)r * gpr + j / 128, j % 128))
PL_KERNEL(wrong_mul_mat_vec_planes_ptq1_0_g128_base_at_0,
          const unsigned char* base = obj; const unsigned char* high = obj + high_off; const unsigned char* scale = obj + scale_off,
          k_pad, pl_ptq1(base, high, scale, (long long)r * gpr + j / 128, j % 128))
// Scale plane right after the base plane: base_off + n * gpr * 32 (the 256-byte plane alignment forgotten).
PL_KERNEL(wrong_mul_mat_vec_planes_pq2_0_g128_scale_after_base,
          const unsigned char* base = obj + base_off; const unsigned char* scale = obj + base_off + (long long)n * gpr * 32,
          k_pad, pl_pq2(base, scale, (long long)r * gpr + j / 128, j % 128))
// PTQ1_0: scale after base and high planes, unaligned: base_off + n*gpr*24 + n*gpr*2.
PL_KERNEL(wrong_mul_mat_vec_planes_ptq1_0_g128_scale_after_high,
          const unsigned char* base = obj + base_off; const unsigned char* high = obj + high_off;
          const unsigned char* scale = obj + base_off + (long long)n * gpr * 26,
          k_pad, pl_ptq1(base, high, scale, (long long)r * gpr + j / 128, j % 128))
// high_off ignored: qh read at the base offset.
PL_KERNEL(wrong_mul_mat_vec_planes_ptq1_0_g128_qh_from_base,
          const unsigned char* base = obj + base_off; const unsigned char* high = obj + base_off; const unsigned char* scale = obj + scale_off,
          k_pad, pl_ptq1(base, high, scale, (long long)r * gpr + j / 128, j % 128))

// (k vs k_pad mix-ups are not wrong for PQ2_0_G128 / PTQ1_0_G128: k is a multiple of the
// 128-element group, so k_pad = k; no kernel is listed for them.)
