// STAND-IN, written here (not mainline's code): a kernel with the launch shape and ABI of
// mainline llama.cpp's CUDA fast Walsh-Hadamard transform (ggml-org/llama.cpp
// ggml/src/ggml-cuda/fwht.cu, template <int N, typename T> fwht_cuda(const T* src, float* dst,
// const int64_t n_rows, const float scale): one warp per row of N contiguous values, 4 rows per
// block, grid ceil(n_rows / 4), every value multiplied by scale on load, natural (Sylvester)
// order, no signs). Written from that public description, so the sidecar
// conformance/adapters/mainline_fwht/fwht_cuda.abi.json that judges mainline's own file in
// scripts/mainline-fwht.sh is tested here without the sdist (tests/it/kernel_examples.rs).
// Lane l holds elements i * 32 + l; butterflies over the lane bits by __shfl_xor_sync, then over
// the register index (mainline's plan, as its description says), in registers only.
#include <cstdint>

template <int N, typename T>
__global__ void fwht_standin(const T* src, float* dst, const std::int64_t n_rows, const float scale) {
    constexpr int W = 32, R = N / W;
    const std::int64_t row = (std::int64_t)blockIdx.x * blockDim.y + threadIdx.y;
    if (row >= n_rows) return;  // the whole warp leaves together
    const int lane = threadIdx.x;
    float v[R];
    for (int i = 0; i < R; ++i) v[i] = (float)src[row * N + i * W + lane] * scale;
    for (int m = 1; m < W; m <<= 1)
        for (int i = 0; i < R; ++i) {
            const float other = __shfl_xor_sync(0xffffffffu, v[i], m, W);
            v[i] = (lane & m) ? other - v[i] : v[i] + other;
        }
    for (int s = 1; s < R; s <<= 1)
        for (int i = 0; i < R; ++i)
            if ((i & s) == 0) {
                const float a = v[i], b = v[i + s];
                v[i] = a + b;
                v[i + s] = a - b;
            }
    for (int i = 0; i < R; ++i) dst[row * N + i * W + lane] = v[i];
}
