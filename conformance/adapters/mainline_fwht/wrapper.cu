// Wrapper: mainline llama.cpp's CUDA fast Walsh-Hadamard transform (ggml/src/ggml-cuda/fwht.cu of
// the PyPI sdist llama-cpp-python==0.3.36, ggml 0.25.3), UNCHANGED, behind the `hadamard_rotate`
// ABI of spec/kernels.json:
//     (const float* x, const float* signs, float* y, int k, int t, int block)
//     y = H_B (s ⊙ x) per token and per block of B = block features, H normalized by 1/sqrt(B).
// Our own code; fwht.cu is not in this repository: scripts/mainline-fwht.sh extracts it from the
// sdist into target/mainline-fwht/ next to this file and the shadow headers (shadow/*.cuh).
//
// What mainline's kernel is (fwht.cu lines 5-60):
//   template <int N, typename T> __launch_bounds__(4*warp, 1) __global__
//   void fwht_cuda(const T* src, float* dst, int64_t n_rows, float scale)
//   One warp per row of N contiguous elements; row r = blockIdx.x * blockDim.y + threadIdx.y,
//   rows r >= n_rows return; lane = threadIdx.x holds elements i*32 + lane (i < N/32) in
//   registers, each multiplied by `scale` on load; butterflies over the lane bits with
//   __shfl_xor_sync (h = 1..16), then over the register index in registers (h = 32..N/2);
//   dst[i*32 + lane] = result. Natural (Sylvester) order, no signs. Mainline's host dispatcher
//   (lines 62-99) launches it with grid (ceil(rows/4),1,1), block (warp,4,1), 0 shared bytes,
//   scale = 1/sqrtf(n), and only for n = 64, 128, 256, 512.
//
// How it is wrapped (one launch, mainline code unchanged):
//   * A __global__ cannot be called from another kernel (only launched), and its parameter list
//     (src, dst, n_rows, scale) has no signs. So while fwht.cu is included, __global__ is
//     defined as __device__ (and its __launch_bounds__ dropped: a register-allocation hint, not
//     semantics); the kernel body becomes a device function with the same code, and the entry
//     points below call it. Both macros are restored right after the include.
//   * fwht.cu also defines mainline's host dispatcher (unannotated host functions). NVRTC
//     rejects host functions in JIT mode unless given -default-device, so the compile and
//     device tiers must pass that option for this source (a sidecar field such as
//     "nvrtc_options": ["-default-device"] is proposed; not in fwht.abi.json until the CLI has it).
//     NVRTC 13.5 then compiles this file for sm_80/89/90/120 with all four entries.
//   * Signs: a prologue writes s ⊙ x into y, each lane exactly the elements i*32 + lane that
//     mainline's same lane then loads, so the same thread writes and reads every element (no
//     barrier needed), and fwht_cuda runs in place (src = dst = y: it loads all N values into
//     registers before it stores any, and its parameters are not __restrict__).
//   * Normalization: mainline's own, scale = 1/sqrtf(N) applied on load, computed as its host
//     dispatcher does (1 / sqrtf(n), f32).
//   * Layout: the class's token-major [t][k] with k a multiple of B is exactly n_rows = t*k/B
//     contiguous rows of B floats; row r's signs start at feature (r % (k/B)) * B.
//
// Entry points:
//   mainline_fwht             mainline's launch geometry (conformance/adapters/mainline_fwht/
//                             fwht.abi.json): grid (ceil(n_rows/4),1,1), block (32,4,1), shared 0;
//                             B in {64,128,256,512}, mainline's dispatch set.
//   mainline_fwht_ext         same geometry (fwht_ext.abi.json); additionally instantiates
//                             fwht_cuda<32> and fwht_cuda<1024>, sizes mainline never launches
//                             (1024 = prism.hadamard.block_size of the Bonsai models).
//   mainline_fwht_classlaunch       the class's fixed launch (k/B, t, 1) x (256,1,1), for the CLI
//   mainline_fwht_classlaunch_ext   without --abi: warp 0 of each CUDA block runs mainline's body
//                                   for one row, warps 1-7 return; B sets as above.
// Any other B leaves y unwritten (the guard fill then fails every output): not supported.

// __global__ -> __device__ for fwht.cu only. NVRTC ignores #pragma push_macro/pop_macro (it
// warns "unrecognized #pragma"), so the previous meaning is restored by spelling it out: the
// attribute CUDA's host_defines.h gives __global__ under NVRTC/nvcc, nothing on the host tier.
#undef __global__
#undef __launch_bounds__
#define __global__ __device__
#define __launch_bounds__(...)
#include "fwht.cu"
#undef __global__
#undef __launch_bounds__
#if defined(__CUDACC__)
#define __global__ __attribute__((global))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#else
#define __global__
#define __launch_bounds__(...)
#endif

#define MFWHT_WARP 32

// Writes s ⊙ x for row `row` into y, lane `lane` taking elements i*32 + lane (mainline's
// ownership), then runs mainline's body over y in place. The (src, dst) pointers given to
// fwht_cuda are `base` with mainline's own row index r applied on top: r is computed inside
// fwht_cuda from blockIdx/blockDim/threadIdx, so `base` = y - r_mainline * N + row * N.
template <int N>
static __device__ __forceinline__ void mfwht_row(const float* x, const float* signs, float* y, int k,
                                                 long long row, int lane, float* base, int64_t n_rows) {
    static_assert(N % MFWHT_WARP == 0, "one warp per row: N must be a multiple of the warp size");
    const float* xr = x + row * N;
    float* yr = y + row * N;
    const float* sr = signs + (row % (k / N)) * N;
    for (int i = 0; i < N / MFWHT_WARP; ++i) {
        const int e = i * MFWHT_WARP + lane;
        yr[e] = sr[e] * xr[e];
    }
    fwht_cuda<N, float>(base, base, n_rows, 1 / sqrtf(N));
}

// Mainline geometry: the row is mainline's r; base = y.
template <int N>
static __device__ __forceinline__ void mfwht_native(const float* x, const float* signs, float* y, int k, int t) {
    const int64_t n_rows = (int64_t) t * (k / N);
    const long long r = (long long) blockIdx.x * blockDim.y + threadIdx.y;
    if (r < n_rows) {
        // Prologue for this warp's row; fwht_cuda itself returns for r >= n_rows as in mainline.
        const float* xr = x + r * N;
        float* yr = y + r * N;
        const float* sr = signs + (r % (k / N)) * N;
        for (int i = 0; i < N / MFWHT_WARP; ++i) {
            const int e = i * MFWHT_WARP + threadIdx.x;
            yr[e] = sr[e] * xr[e];
        }
    }
    fwht_cuda<N, float>(y, y, n_rows, 1 / sqrtf(N));
}

// Class launch: CUDA block (bx, by) = feature block bx of token by; warp 0 does the row.
// fwht_cuda computes r = blockIdx.x (blockDim.y = 1, threadIdx.y = 0), so it is given
// base = y + (row - blockIdx.x) * N and n_rows = blockIdx.x + 1 (its bound check passes).
template <int N>
static __device__ __forceinline__ void mfwht_classlaunch(const float* x, const float* signs, float* y, int k) {
    if (threadIdx.x >= MFWHT_WARP || threadIdx.y != 0 || threadIdx.z != 0) return;
    const long long row = (long long) blockIdx.y * (k / N) + blockIdx.x;
    mfwht_row<N>(x, signs, y, k, row, threadIdx.x, y + (row - (long long) blockIdx.x) * N, (int64_t) blockIdx.x + 1);
}

extern "C" __global__ void __launch_bounds__(128, 1)
mainline_fwht(const float* x, const float* signs, float* y, int k, int t, int block) {
    switch (block) {
        case 64:  mfwht_native<64>(x, signs, y, k, t); break;
        case 128: mfwht_native<128>(x, signs, y, k, t); break;
        case 256: mfwht_native<256>(x, signs, y, k, t); break;
        case 512: mfwht_native<512>(x, signs, y, k, t); break;
        default: break;
    }
}

extern "C" __global__ void __launch_bounds__(128, 1)
mainline_fwht_ext(const float* x, const float* signs, float* y, int k, int t, int block) {
    switch (block) {
        case 32:   mfwht_native<32>(x, signs, y, k, t); break;
        case 64:   mfwht_native<64>(x, signs, y, k, t); break;
        case 128:  mfwht_native<128>(x, signs, y, k, t); break;
        case 256:  mfwht_native<256>(x, signs, y, k, t); break;
        case 512:  mfwht_native<512>(x, signs, y, k, t); break;
        case 1024: mfwht_native<1024>(x, signs, y, k, t); break;
        default: break;
    }
}

extern "C" __global__ void mainline_fwht_classlaunch(const float* x, const float* signs, float* y, int k, int t, int block) {
    switch (block) {
        case 64:  mfwht_classlaunch<64>(x, signs, y, k); break;
        case 128: mfwht_classlaunch<128>(x, signs, y, k); break;
        case 256: mfwht_classlaunch<256>(x, signs, y, k); break;
        case 512: mfwht_classlaunch<512>(x, signs, y, k); break;
        default: break;
    }
    (void) t;
}

extern "C" __global__ void mainline_fwht_classlaunch_ext(const float* x, const float* signs, float* y, int k, int t, int block) {
    switch (block) {
        case 32:   mfwht_classlaunch<32>(x, signs, y, k); break;
        case 64:   mfwht_classlaunch<64>(x, signs, y, k); break;
        case 128:  mfwht_classlaunch<128>(x, signs, y, k); break;
        case 256:  mfwht_classlaunch<256>(x, signs, y, k); break;
        case 512:  mfwht_classlaunch<512>(x, signs, y, k); break;
        case 1024: mfwht_classlaunch<1024>(x, signs, y, k); break;
        default: break;
    }
    (void) t;
}
