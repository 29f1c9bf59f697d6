// STAND-IN, written here (not NInfer's code): a ternary gemv with the ABI features of NInfer's
// PQ2_0 / PTQ1_0 gemv as issue #33 describes them -- a template over the block type,
// instantiated by name; std:: fixed-width integer parameters; groups per row (k / 128) and a
// token count (1) passed as values the sidecar computes; bf16 activations and outputs; one warp
// per row, 8 rows per 256-thread block, a __shfl_xor_sync reduction. Judged from its sidecars
// (ninfer_gemv_pq2_0.abi.json, ninfer_gemv_ptq1_0.abi.json) alone, no wrapper
// (tests/it/kernel_examples.rs).
#include <cstdint>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

struct sb_pq2_0 {        // 34 B / 128: f16 scale, 32 bytes of 2-bit codes (element j: byte j/4, bits 2*(j%4))
    std::uint16_t d;
    std::uint8_t qs[32];
};
struct sb_ptq1_0 {       // 28 B / 128: 24 + 2 bytes of base-3 digits, then the f16 scale
    std::uint8_t qs[24];
    std::uint8_t qh[2];
    std::uint16_t d;
};

static __device__ __forceinline__ int sb_digit(std::uint8_t b, int n) {
    const std::uint8_t m = (std::uint8_t)(b * (n == 0 ? 1 : n == 1 ? 3 : n == 2 ? 9 : n == 3 ? 27 : 81));
    return (m * 3) >> 8;
}
static __device__ __forceinline__ float sb_weight(const sb_pq2_0& b, int e) {
    return (float)(((b.qs[e / 4] >> (2 * (e % 4))) & 3) - 1) * __half2float(__ushort_as_half(b.d));
}
static __device__ __forceinline__ float sb_weight(const sb_ptq1_0& b, int e) {
    const int t = e < 80 ? sb_digit(b.qs[e % 16], e / 16)
                : e < 120 ? sb_digit(b.qs[16 + (e - 80) % 8], (e - 80) / 8)
                          : sb_digit(b.qh[(e - 120) % 2], (e - 120) / 2);
    return (float)(t - 1) * __half2float(__ushort_as_half(b.d));
}

template <typename Block>
__global__ void sb_gemv(const Block* __restrict__ w, const __nv_bfloat16* __restrict__ x,
                        __nv_bfloat16* __restrict__ y, std::int32_t groups_per_row, std::int32_t rows,
                        std::int32_t tokens) {
    const std::int32_t row = blockIdx.x * blockDim.y + threadIdx.y;
    if (row >= rows || tokens != 1) return;  // a gemv: one token
    const Block* wr = w + (std::int64_t)row * groups_per_row;
    float sum = 0.0f;
    for (std::int32_t j = threadIdx.x; j < groups_per_row * 128; j += 32)
        sum += sb_weight(wr[j / 128], j % 128) * __bfloat162float(x[j]);
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o, 32);
    if (threadIdx.x == 0) y[row] = __float2bfloat16(sum);
}
