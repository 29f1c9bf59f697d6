// STAND-IN, written here (not BeeLlama's code): a dequantizer with the launch shape and template
// ABI of ggml's CUDA `dequantize_block<qk, qr, dequantize_kernel, dst_t>` (ggml/src/ggml-cuda/
// convert.cu: two outputs per thread, 256 threads per block, grid ceil(k / 512), the per-block
// decoder a template argument) instantiated for BeeLlama's planar Q2_0S, whose decoder
// (`dequantize_q2_0s` in hjotha/beellama.cpp and Anbeeld/beellama.cpp ggml/src/ggml-cuda/) returns
// elements iqs and iqs + 16 of a 32-element block. Layout as spec/codecs.json q2_0s_planar says
// (10 B / 32: f16 d, then qs[8]; element j in byte j % 8, bits 2 * (j / 8); value (code - 2) * d).
// Judged from beellama_q2_0s.abi.json alone (tests/it/kernel_examples.rs).
#include <cstdint>
#include <cuda_fp16.h>

typedef void (*standin_dequantize_t)(const void* vx, const std::int64_t ib, const int iqs, float2& v);

static __device__ __forceinline__ void standin_q2_0s(const void* vx, const std::int64_t ib, const int iqs, float2& v) {
    const unsigned char* b = (const unsigned char*)vx + ib * 10;
    const float d = __half2float(__ushort_as_half((unsigned short)(b[0] | (b[1] << 8))));
    const int j0 = iqs, j1 = iqs + 16;
    v.x = (float)(((b[2 + j0 % 8] >> (2 * (j0 / 8))) & 3) - 2) * d;
    v.y = (float)(((b[2 + j1 % 8] >> (2 * (j1 / 8))) & 3) - 2) * d;
}

template <int qk, int qr, standin_dequantize_t dequantize_kernel, typename dst_t>
__global__ void standin_dequantize_block(const void* __restrict__ vx, dst_t* __restrict__ y, const std::int64_t k) {
    const std::int64_t i = 2 * ((std::int64_t)blockDim.x * blockIdx.x + threadIdx.x);
    if (i >= k) return;
    const std::int64_t ib = i / qk;             // block
    const int iqs = (int)((i % qk) / qr);       // first element of the pair
    const std::int64_t base = i - i % qk;       // first output of the block
    const int off = qr == 1 ? 1 : qk / 2;       // distance to the pair's second element
    float2 v;
    dequantize_kernel(vx, ib, iqs, v);
    y[base + iqs] = v.x;
    y[base + iqs + off] = v.y;
}
