// WRONG VARIANTS (negative controls), kind concurrency: shared-memory races a serial or
// lock-step execution hides. no_barrier_after_store: partial sums read by the tree before every
// lane stored them; no_final_barrier: one thread stores all four rows' results right after the
// last tree step without a barrier; no_trailing_barrier: the MMQ K loop reloads the tile while
// other threads still read the previous one (k > 128); warp_sync_volatile: the classic
// pre-Volta unrolled warp reduction on volatile shared memory without __syncwarp;
// missing_stage_barrier: Hadamard butterfly stages without a barrier between them.
#include "../mmq_tile.cuh"

extern "C" __global__ void wrong_mul_mat_vec_pq2_0_no_barrier_after_store(const unsigned char* w, const float* x, float* y, int n, int k) {
    __shared__ float part[4][32];
    int r = blockIdx.x * 4 + threadIdx.y;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 34;
        for (int j = threadIdx.x; j < k; j += 32) acc += nt_row_pq2(row, j) * x[j];
    }
    part[threadIdx.y][threadIdx.x] = acc;
    for (int s = 16; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) part[threadIdx.y][threadIdx.x] += part[threadIdx.y][threadIdx.x + s];
        __syncthreads();
    }
    if (r < n && threadIdx.x == 0) y[r] = part[threadIdx.y][0];
}

extern "C" __global__ void wrong_mul_mat_vec_ptq1_0_no_final_barrier(const unsigned char* w, const float* x, float* y, int n, int k) {
    __shared__ float part[4][32];
    int r = blockIdx.x * 4 + threadIdx.y;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 28;
        for (int j = threadIdx.x; j < k; j += 32) acc += nt_row_ptq1(row, j) * x[j];
    }
    part[threadIdx.y][threadIdx.x] = acc;
    for (int s = 16; s > 0; s >>= 1) {
        __syncthreads();
        if ((int)threadIdx.x < s) part[threadIdx.y][threadIdx.x] += part[threadIdx.y][threadIdx.x + s];
    }
    if (threadIdx.x == 0 && threadIdx.y == 0)
        for (int q = 0; q < 4; ++q)
            if ((int)blockIdx.x * 4 + q < n) y[blockIdx.x * 4 + q] = part[q][0];
}

extern "C" __global__ void wrong_mul_mat_pq2_0_no_trailing_barrier(const unsigned char* w, const float* x, float* y, int n, int k, int t) {
    __shared__ float tile[NT_TILE_ROWS][NT_TILE_K + 1];
    int r0 = blockIdx.x * NT_TILE_ROWS;
    int lr = threadIdx.x % NT_TILE_ROWS, r = r0 + lr, tok = blockIdx.y * 4 + threadIdx.x / NT_TILE_ROWS;
    float acc = 0.0f;
    for (int k0 = 0; k0 < k; k0 += NT_TILE_K) {
        nt_load_tile(tile, w, n, k, r0, k0, NT_PQ2_QK, NT_PQ2_BB, nt_q2_elem);
        __syncthreads();
        if (r < n && tok < t)
            for (int j = 0; j < NT_TILE_K && k0 + j < k; ++j) acc += tile[lr][j] * x[(long long)tok * k + k0 + j];
    }
    if (r < n && tok < t) y[(long long)tok * n + r] = acc;
}

extern "C" __global__ void wrong_mul_mat_vec_pq2_0_warp_sync_volatile(const unsigned char* w, const float* x, float* y, int n, int k) {
    __shared__ float part[4][32];
    int r = blockIdx.x * 4 + threadIdx.y;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 34;
        for (int j = threadIdx.x; j < k; j += 32) acc += nt_row_pq2(row, j) * x[j];
    }
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    int l = threadIdx.x;
    if (l < 16) {  // one warp per row: "a warp runs in lock-step, no barrier needed"
        volatile float* v = part[threadIdx.y];
        v[l] += v[l + 16];
        v[l] += v[l + 8];
        v[l] += v[l + 4];
        v[l] += v[l + 2];
        v[l] += v[l + 1];
    }
    if (r < n && l == 0) y[r] = part[threadIdx.y][0];
}

extern "C" __global__ void wrong_hadamard_rotate_missing_stage_barrier(const float* x, const float* signs, float* y, int k, int t, int block) {
    __shared__ float buf[1024];
    long long base = (long long)blockIdx.y * k + (long long)blockIdx.x * block;
    int f0 = blockIdx.x * block;
    for (int i = threadIdx.x; i < block; i += blockDim.x) buf[i] = signs[f0 + i] * x[base + i];
    __syncthreads();
    for (int h = 1; h < block; h <<= 1)
        for (int p = threadIdx.x; p < block / 2; p += blockDim.x) {
            int i = (p / h) * 2 * h + p % h;
            float a = buf[i], b = buf[i + h];
            buf[i] = a + b;
            buf[i + h] = a - b;
        }
    __syncthreads();
    float norm = 1.0f / sqrtf((float)block);
    for (int i = threadIdx.x; i < block; i += blockDim.x) y[base + i] = buf[i] * norm;
    (void)t;
}
