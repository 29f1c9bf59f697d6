// Decoders the red-team kernels (wrong/unwritten.cu, wrong/caps.cu, unusual/engine_habits.cu) share:
// f16 scale through cuda_fp16.h, the PTQ1_0 digit rule, PQ2_0 / PTQ1_0 row elements.
#pragma once
#include <cuda_fp16.h>
#include <cuda_bf16.h>
static __device__ __forceinline__ float rt_h(const unsigned char* p) {
    return __half2float(__ushort_as_half((unsigned short)(p[0] | (p[1] << 8))));
}
static __device__ __forceinline__ int rt_trit(unsigned char b, int n) {
    unsigned p = 1; for (int i = 0; i < n; ++i) p *= 3u;
    unsigned char m = (unsigned char)((unsigned)b * p);
    return (int)(((unsigned)m * 3u) >> 8);
}
static __device__ __forceinline__ int rt_ptq1_code(const unsigned char* blk, int e) {
    if (e < 80) return rt_trit(blk[e % 16], e / 16);
    if (e < 120) return rt_trit(blk[16 + (e - 80) % 8], (e - 80) / 8);
    return rt_trit(blk[24 + (e - 120) % 2], (e - 120) / 2);
}
static __device__ __forceinline__ float rt_pq2(const unsigned char* row, int j) {
    const unsigned char* b = row + (j / 128) * 34; int e = j % 128;
    return (float)(((b[2 + e / 4] >> (2 * (e % 4))) & 3) - 1) * rt_h(b);
}
static __device__ __forceinline__ float rt_ptq1(const unsigned char* row, int j) {
    const unsigned char* b = row + (j / 128) * 28; int e = j % 128;
    return (float)(rt_ptq1_code(b, e) - 1) * rt_h(b + 26);
}
