// Shared per-element decoders for the reference kernels. Written from spec/codecs.json,
// spec/formats.json and the crate's codecs (src/codec/*): value = (code - 1) * d.
// Everything here is __host__ __device__ so the same bodies run under NVRTC and under the
// host C++ shim. No #include: NVRTC header resolution depends on the toolkit pairing.
#pragma once

// IEEE binary16 bits -> f32, by hand (cuda_fp16.h is avoided on purpose).
__host__ __device__ inline float nt_f16(unsigned short h) {
    unsigned sign = (unsigned)(h >> 15) & 1u, ex = (unsigned)(h >> 10) & 0x1fu, man = (unsigned)h & 0x3ffu;
    if (ex == 0) {
        // Subnormal or zero: man * 2^-24 is exact in f32.
        float v = (float)man * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    unsigned bits = (sign << 31) | ((ex == 31 ? 255u : ex + 112u) << 23) | (man << 13);
    union { unsigned u; float f; } c;
    c.u = bits;
    return c.f;
}

__host__ __device__ inline float nt_scale_at(const unsigned char* p) {
    return nt_f16((unsigned short)(p[0] | (p[1] << 8)));
}

// Digit n (0 = most significant) of a base-3 byte: ((u8)(b * 3^n) * 3) >> 8; the u8 multiply wraps.
__host__ __device__ inline int nt_trit(unsigned char b, int n) {
    unsigned p = 1;
    for (int i = 0; i < n; ++i) p *= 3u;
    unsigned char m = (unsigned char)((unsigned)b * p);
    return (int)(((unsigned)m * 3u) >> 8);
}

// PQ2_0 family (PQ2_0 / legacy Q2_0-g128 at G=128, mainline Q2_0 at G=64): scale FIRST,
// element j at qs[j/4] bits 2*(j%4).
__host__ __device__ inline float nt_q2_elem(const unsigned char* blk, int j) {
    float d = nt_scale_at(blk);
    int code = (blk[2 + j / 4] >> (2 * (j % 4))) & 3;
    return ((float)code - 1.0f) * d;
}

// Staged base-3 blocks (PTQ1_0: w1=16 w2=8 wh=2; TQ1_0: 32 16 4); scale LAST.
__host__ __device__ inline float nt_staged_elem(const unsigned char* blk, int e, int w1, int w2, int wh) {
    int byte, digit;
    if (e < 5 * w1) {
        byte = e % w1; digit = e / w1;
    } else if (e < 5 * (w1 + w2)) {
        int f = e - 5 * w1; byte = w1 + f % w2; digit = f / w2;
    } else {
        int f = e - 5 * (w1 + w2); byte = w1 + w2 + f % wh; digit = f / wh;
    }
    float d = nt_scale_at(blk + w1 + w2 + wh);
    return ((float)nt_trit(blk[byte], digit) - 1.0f) * d;
}

__host__ __device__ inline float nt_ptq1_elem(const unsigned char* blk, int e) { return nt_staged_elem(blk, e, 16, 8, 2); }
__host__ __device__ inline float nt_tq1_elem(const unsigned char* blk, int e) { return nt_staged_elem(blk, e, 32, 16, 4); }

// TQ2_0: qs[64] then d; element e at byte (e/128)*32 + e%32, bits 2*((e%128)/32).
__host__ __device__ inline float nt_tq2_elem(const unsigned char* blk, int e) {
    float d = nt_scale_at(blk + 64);
    int code = (blk[(e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32))) & 3;
    return ((float)code - 1.0f) * d;
}

// Block geometry per format id used by the kernels below.
#define NT_PQ2_QK 128
#define NT_PQ2_BB 34
#define NT_Q2G64_QK 64
#define NT_Q2G64_BB 18
#define NT_PTQ1_QK 128
#define NT_PTQ1_BB 28
#define NT_TQ1_QK 256
#define NT_TQ1_BB 54
#define NT_TQ2_QK 256
#define NT_TQ2_BB 66

// Element j of a row of ggml blocks (row = first block of the row).
__host__ __device__ inline float nt_row_pq2(const unsigned char* row, int j) { return nt_q2_elem(row + (j / NT_PQ2_QK) * NT_PQ2_BB, j % NT_PQ2_QK); }
__host__ __device__ inline float nt_row_ptq1(const unsigned char* row, int j) { return nt_ptq1_elem(row + (j / NT_PTQ1_QK) * NT_PTQ1_BB, j % NT_PTQ1_QK); }
