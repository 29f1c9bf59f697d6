// Per-element decode of a `.ninfer` row-split object (spec/geometry.json, src/planes.rs):
// three planes at the geometry's offsets, each row-major by (row, group). The plane order is
// base, high, scale; a ggml block's bytes are spread over them by spec/formats.json
// block_plane_slices (PQ2_0_G128: qs -> base, d -> scale; PTQ1_0_G128: qs -> base, qh -> high, d -> scale).
#pragma once
#include "common.cuh"

// PQ2_0_G128: base 32 B/group, high 0, scale 2.
__host__ __device__ inline float nt_planes_pq2(const unsigned char* obj, long long base_off, long long scale_off,
                                               int k_pad, int r, int j) {
    int gpr = k_pad / 128, g = j / 128, jj = j % 128;
    const unsigned char* qs = obj + base_off + ((long long)r * gpr + g) * 32;
    float d = nt_scale_at(obj + scale_off + ((long long)r * gpr + g) * 2);
    int code = (qs[jj / 4] >> (2 * (jj % 4))) & 3;
    return ((float)code - 1.0f) * d;
}

// PTQ1_0_G128: base 24 B/group (qs), high 2 (qh), scale 2; staged trit order 16/8/2.
__host__ __device__ inline float nt_planes_ptq1(const unsigned char* obj, long long base_off, long long high_off,
                                                long long scale_off, int k_pad, int r, int j) {
    int gpr = k_pad / 128, g = j / 128, e = j % 128;
    long long grp = (long long)r * gpr + g;
    const unsigned char* qs = obj + base_off + grp * 24;
    const unsigned char* qh = obj + high_off + grp * 2;
    float d = nt_scale_at(obj + scale_off + grp * 2);
    int t;
    if (e < 80) t = nt_trit(qs[e % 16], e / 16);
    else if (e < 120) t = nt_trit(qs[16 + (e - 80) % 8], (e - 80) / 8);
    else t = nt_trit(qh[(e - 120) % 2], (e - 120) / 2);
    return ((float)t - 1.0f) * d;
}
