// WRONG VARIANTS (negative controls) for the host tier's sanitizer checks: each passed the
// host tier before it had the check (blocks ran one after another, __device__ storage kept its
// values across runs, shared memory started as a finite number, a warp collective paired with
// whatever its named lanes waited at), and each has a correct twin in unusual/sanitizer.cu.
//
// device_lut_block0: a value map in a __device__ table that only block 0 fills ("one block is
// enough, it is the same table for everyone"); CUDA leaves blocks unordered, so other blocks
// read it before block 0 wrote it (on a fresh module load: zeros).
// zero_times_uninit: the tree reduction starts from a 64-wide shared row of which only 32 are
// stored, the upper half "masked" by a zero weight: 0 x uninitialised is NaN when the garbage
// is NaN, Inf or a huge value.
// global_stage_shared: the partial sums staged in ONE __device__ array that every block uses
// ("shared memory is small, global is big"): blocks in flight at once overwrite each other's
// partials between their barriers.
// divergent_full_shfl: the first fold of a warp reduction inside `if (lane < 16)` with a full
// mask: lanes 16-31 are named but wait at the next shuffle instead (undefined in CUDA).
#include "../common.cuh"

__device__ float ks_lut[4];

extern "C" __global__ void wrong_dequantize_pq2_0_device_lut_block0(const unsigned char* blocks, float* y, int n_blocks) {
    int b = blockIdx.x;
    if (b == 0 && threadIdx.x < 4) ks_lut[threadIdx.x] = (float)threadIdx.x - 1.0f;
    __syncthreads();
    if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * NT_PQ2_BB;
    float d = nt_scale_at(blk);
    for (int j = threadIdx.x; j < NT_PQ2_QK; j += blockDim.x)
        y[(long long)b * NT_PQ2_QK + j] = ks_lut[(blk[2 + j / 4] >> (2 * (j % 4))) & 3] * d;
}

extern "C" __global__ void wrong_mul_mat_vec_pq2_0_zero_times_uninit(const unsigned char* w, const float* x, float* y, int n, int k) {
    __shared__ float part[4][64];
    int r = blockIdx.x * 4 + threadIdx.y, l = threadIdx.x;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / NT_PQ2_QK) * NT_PQ2_BB;
        for (int j = l; j < k; j += 32) acc += nt_row_pq2(row, j) * x[j];
    }
    part[threadIdx.y][l] = acc;
    __syncthreads();
    // "Lanes 32..63 do not exist, their weight is zero": but their slots were never stored.
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

extern "C" __global__ void wrong_mul_mat_vec_pq2_0_divergent_full_shfl(const unsigned char* w, const float* x, float* y, int n, int k) {
    int r = blockIdx.x * 4 + threadIdx.y, l = threadIdx.x;
    float v = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / NT_PQ2_QK) * NT_PQ2_BB;
        for (int j = l; j < k; j += 32) v += nt_row_pq2(row, j) * x[j];
    }
    if (l < 16) v += __shfl_down_sync(0xffffffffu, v, 16);  // "only the lower half folds"
    for (int o = 8; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (r < n && l == 0) y[r] = v;
}

__device__ float ks_stage[4][32];

extern "C" __global__ void wrong_mul_mat_vec_pq2_0_global_stage_shared(const unsigned char* w, const float* x, float* y, int n, int k) {
    int r = blockIdx.x * 4 + threadIdx.y, l = threadIdx.x;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / NT_PQ2_QK) * NT_PQ2_BB;
        for (int j = l; j < k; j += 32) acc += nt_row_pq2(row, j) * x[j];
    }
    ks_stage[threadIdx.y][l] = acc;
    __syncthreads();
    for (int s = 16; s > 0; s >>= 1) {
        if (l < s) ks_stage[threadIdx.y][l] += ks_stage[threadIdx.y][l + s];
        __syncthreads();
    }
    if (r < n && l == 0) y[r] = ks_stage[threadIdx.y][0];
}
