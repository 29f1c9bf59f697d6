// Shadow of ggml-cuda's common.cuh for ONE mainline file: ggml/src/ggml-cuda/fwht.cu of the
// llama.cpp vendored in the PyPI sdist llama-cpp-python==0.3.36 (ggml 0.25.3). Written for this
// repository from the public meaning of the names fwht.cu uses; nothing here is copied from ggml.
// scripts/mainline-fwht.sh copies it next to the unchanged fwht.cu (in target/, never in the
// repository), so the crate's include resolver, which looks next to the including file first,
// picks it instead of mainline's common.cuh (cuda_runtime, cuBLAS, ggml.h, ...).
//
// Two parts:
//  1. device side, what the kernel body fwht_cuda<N, T> executes: the physical warp size and
//     the programmatic-dependent-launch wait. These decide what runs on the tiers.
//  2. host side, what mainline's host dispatcher (ggml_cuda_op_fwht / _impl) names: ggml_tensor,
//     the CUDA context, dim3, streams, the launch-parameter struct, the launch helper. The suite
//     never calls the dispatcher (the wrapper launches instead), but the unchanged file defines
//     it, so it must compile and link on the host tier and parse under NVRTC. Host-side CUDA API
//     types get shadow names through macros, so they cannot clash with whatever the host shim or
//     NVRTC's implicit headers define under the real names.
#pragma once

// ---- integer types ----------------------------------------------------------------------------
#if defined(__CUDACC_RTC__)
// NVRTC has no <stdint.h> unless the toolkit headers are on its path: only the widths used here.
typedef int                int32_t;
typedef unsigned int       uint32_t;
typedef long long          int64_t;
typedef unsigned long long uint64_t;
#else
#include <stdint.h>
#include <stddef.h>
#endif

// ---- 1. device side ---------------------------------------------------------------------------

// Lanes per hardware warp. ggml answers 64 only for AMD GCN/CDNA under HIP; every NVIDIA target
// (and the host tier, which emulates one) has 32. fwht.cu uses it as a compile-time constant
// (register tile width el_w = N / warp size, the shuffle width, __launch_bounds__).
static constexpr __host__ __device__ int ggml_cuda_get_physical_warp_size() { return 32; }

// Programmatic dependent launch: in mainline a kernel launched with PDL on sm_90+ first waits
// here until the grid it depends on in the stream has flushed its writes. A kernel launched on
// its own (as the suite does) depends on nothing, so this is the no-op mainline also compiles to
// on every launch path without PDL.
static __host__ __device__ inline void ggml_cuda_pdl_sync() {}

// ---- 2. host side (compiled, never executed by the suite) ----------------------------------------
// Every function here is __host__ __device__: NVRTC rejects unannotated (host) functions in JIT
// mode, and fwht.cu's own host functions compile under NVRTC only with -default-device (which
// makes unannotated functions device functions; they then call these).

#define GGML_MAX_DIMS 4
#define GGML_MAX_SRC 10
#define GGML_MAX_OP_PARAMS 64

// Abort when false (ggml prints and aborts; here the trap is enough: it never runs).
#if defined(__CUDACC__)
#define GGML_ASSERT(x) do { if (!(x)) __trap(); } while (0)
#else
#define GGML_ASSERT(x) do { if (!(x)) __builtin_trap(); } while (0)
#endif

// ggml type ids fwht.cu names (ggml's values); the op and hint enums only need to compare.
enum ggml_type { GGML_TYPE_F32 = 0, GGML_TYPE_F16 = 1 };
enum ggml_op { GGML_OP_NONE = 0, GGML_OP_MUL_MAT };
enum ggml_op_hint { GGML_HINT_NONE = 0, GGML_HINT_SRC0_IS_HADAMARD = 1 };

// A tensor as fwht.cu reads it: element counts ne[], byte strides nb[], op, op params, sources.
struct ggml_tensor {
    enum ggml_type type;
    int64_t ne[GGML_MAX_DIMS];
    size_t nb[GGML_MAX_DIMS];
    enum ggml_op op;
    int32_t op_params[GGML_MAX_OP_PARAMS / sizeof(int32_t)];
    struct ggml_tensor * src[GGML_MAX_SRC];
    void * data;
};

static __host__ __device__ inline size_t ggml_shadow_type_size(enum ggml_type t) { return t == GGML_TYPE_F32 ? 4 : 2; }

// Rows = product of every dimension but the first.
static __host__ __device__ inline int64_t ggml_nrows(const struct ggml_tensor * t) { return t->ne[1] * t->ne[2] * t->ne[3]; }

// Dense row-major: each stride is the previous stride times the previous extent.
static __host__ __device__ inline bool ggml_is_contiguous(const struct ggml_tensor * t) {
    size_t want = ggml_shadow_type_size(t->type);
    for (int i = 0; i < GGML_MAX_DIMS; ++i) {
        if (t->ne[i] != 1 && t->nb[i] != want) return false;
        want *= (size_t) t->ne[i];
    }
    return true;
}

static __host__ __device__ inline bool ggml_are_same_shape(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    for (int i = 0; i < GGML_MAX_DIMS; ++i) if (a->ne[i] != b->ne[i]) return false;
    return true;
}

static __host__ __device__ inline int32_t ggml_get_op_params_i32(const struct ggml_tensor * t, uint32_t i) { return t->op_params[i]; }

// Host-side CUDA runtime names, renamed so they never collide with a real definition (NVRTC's
// implicit headers declare dim3; the host tier's host_types.h may declare dim3 and half).
#define cudaStream_t ggml_shadow_stream_t
#define dim3 ggml_shadow_dim3
#define half ggml_shadow_half
typedef struct ggml_shadow_stream * ggml_shadow_stream_t;
struct ggml_shadow_dim3 {
    unsigned x, y, z;
    __host__ __device__ ggml_shadow_dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
// binary16 storage; fwht.cu only names the type (the f16 instantiation is dispatched by the
// launch helper below, which the suite replaces).
struct ggml_shadow_half { unsigned short bits; };

// Per-device properties; fwht.cu reads devices[current].warp_size.
struct ggml_cuda_device_info {
    struct { int warp_size; } devices[16];
};
static __host__ __device__ inline ggml_cuda_device_info ggml_cuda_info() {
    ggml_cuda_device_info info{};
    for (int d = 0; d < 16; ++d) info.devices[d].warp_size = ggml_cuda_get_physical_warp_size();
    return info;
}
static __host__ __device__ inline int ggml_cuda_get_device() { return 0; }

struct ggml_backend_cuda_context {
    ggml_shadow_stream_t stream_ = nullptr;
    __host__ __device__ ggml_shadow_stream_t stream() { return stream_; }
};

// The launch description mainline's dispatcher builds: grid, block, dynamic shared bytes, stream.
struct ggml_cuda_kernel_launch_params {
    ggml_shadow_dim3 block_nums;
    ggml_shadow_dim3 block_dims;
    size_t shmem;
    ggml_shadow_stream_t stream;
    __host__ __device__ ggml_cuda_kernel_launch_params(const ggml_shadow_dim3 & g, const ggml_shadow_dim3 & b, size_t s, ggml_shadow_stream_t st)
        : block_nums(g), block_dims(b), shmem(s), stream(st) {}
};

// Mainline's launch helper (kernel, params, args...) enqueues the kernel on the stream. Here the
// suite is the launcher (the wrapper's entry points, with the geometry of fwht.abi.json, which
// restates the dispatcher's block_nums/block_dims/shmem), so the dispatcher's launch is a no-op:
// a variadic macro, so that the kernel template named in it is neither instantiated nor its
// address taken (the wrapper turns fwht_cuda into a __device__ function).
#define ggml_cuda_kernel_launch(...) ((void) 0)
