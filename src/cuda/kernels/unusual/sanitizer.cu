// CORRECT-BUT-UNUSUAL twins of wrong/sanitizer.cu: they use what the sanitizer checks watch
// (__device__ storage, a padded shared row, a divergent warp) in ways CUDA allows, so the
// checks must not reject them.
//
// constant_lut: the value map in a __constant__ table initialised where it is declared (a
// module load puts it there; every run starts from it again), plus a per-block __device__
// slot each block writes and reads back only itself.
// padded_zeroed: the same 64-wide shared row, its upper half stored as zeros first.
// global_stage_per_block: partial sums staged in global (__device__) memory, one slot per
// block, so blocks in flight at once never share one (a __shared__ slot past 4096 blocks).
// full_shfl_then_branch: the fold's shuffle outside the branch (every named lane arrives),
// only its use inside `if (lane < 16)`; lanes 16-31 then leave, which a full-mask collective
// allows (exited lanes are not waited for).
#include "../common.cuh"

__constant__ float ks_value_map[4] = {-1.0f, 0.0f, 1.0f, 2.0f};
__device__ float ks_block_scale[1 << 16];  // one slot per block (65536 blocks at most)

extern "C" __global__ void unusual_dequantize_pq2_0_constant_lut(const unsigned char* blocks, float* y, int n_blocks) {
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * NT_PQ2_BB;
    int slot = b & 0xffff;
    if (threadIdx.x == 0) ks_block_scale[slot] = nt_scale_at(blk);
    __syncthreads();
    float d = ks_block_scale[slot];
    for (int j = threadIdx.x; j < NT_PQ2_QK; j += blockDim.x)
        y[(long long)b * NT_PQ2_QK + j] = ks_value_map[(blk[2 + j / 4] >> (2 * (j % 4))) & 3] * d;
}

extern "C" __global__ void unusual_mul_mat_vec_pq2_0_padded_zeroed(const unsigned char* w, const float* x, float* y, int n, int k) {
    __shared__ float part[4][64];
    int r = blockIdx.x * 4 + threadIdx.y, l = threadIdx.x;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / NT_PQ2_QK) * NT_PQ2_BB;
        for (int j = l; j < k; j += 32) acc += nt_row_pq2(row, j) * x[j];
    }
    part[threadIdx.y][l] = acc;
    part[threadIdx.y][l + 32] = 0.0f;
    __syncthreads();
    float upper = l + 32 < 32 ? 1.0f : 0.0f;
    float v = part[threadIdx.y][l] + upper * part[threadIdx.y][l + 32];
    __syncthreads();
    part[threadIdx.y][l] = v;
    __syncthreads();
    for (int s = 16; s > 0; s >>= 1) {
        if (l < s) part[threadIdx.y][l] += part[threadIdx.y][l + s];
        __syncthreads();
    }
    if (r < n && l == 0) y[r] = part[threadIdx.y][0];
}

extern "C" __global__ void unusual_mul_mat_vec_pq2_0_full_shfl_then_branch(const unsigned char* w, const float* x, float* y, int n, int k) {
    int r = blockIdx.x * 4 + threadIdx.y, l = threadIdx.x;
    float v = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / NT_PQ2_QK) * NT_PQ2_BB;
        for (int j = l; j < k; j += 32) v += nt_row_pq2(row, j) * x[j];
    }
    float up = __shfl_down_sync(0xffffffffu, v, 16);
    if (l >= 16) return;
    v += up;
    for (int o = 8; o > 0; o >>= 1) v += __shfl_down_sync(0x0000ffffu, v, o);
    if (r < n && l == 0) y[r] = v;
}

__device__ float ks_stage_per_block[4096][4][32];

extern "C" __global__ void unusual_mul_mat_vec_pq2_0_global_stage_per_block(const unsigned char* w, const float* x, float* y, int n, int k) {
    __shared__ float fallback[4][32];
    float (*stage)[32] = blockIdx.x < 4096 ? ks_stage_per_block[blockIdx.x] : fallback;
    int r = blockIdx.x * 4 + threadIdx.y, l = threadIdx.x;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / NT_PQ2_QK) * NT_PQ2_BB;
        for (int j = l; j < k; j += 32) acc += nt_row_pq2(row, j) * x[j];
    }
    stage[threadIdx.y][l] = acc;
    __syncthreads();
    for (int s = 16; s > 0; s >>= 1) {
        if (l < s) stage[threadIdx.y][l] += stage[threadIdx.y][l + s];
        __syncthreads();
    }
    if (r < n && l == 0) y[r] = stage[threadIdx.y][0];
}
