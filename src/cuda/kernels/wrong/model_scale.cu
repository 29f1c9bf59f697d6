// WRONG VARIANTS (negative controls) right on every shape below real models and wrong at them
// (issue #33): activations cached in 8192 shared floats (the index wraps at Qwen/Bonsai FFN
// widths k = 12288 and 17408), and row ids read as 16-bit values (wrong past row 65,535 of a
// vocabulary-sized table).
#include "../common.cuh"

extern "C" __global__ void wrong_mul_mat_vec_pq2_0_x_cache8192(const unsigned char* w, const float* x, float* y, int n, int k) {
    __shared__ float xs[8192];
    __shared__ float part[4][32];
    int tid = threadIdx.y * 32 + threadIdx.x;
    for (int j = tid; j < k; j += 128) xs[j % 8192] = x[j];  // "k <= 8192 in every model we tried"
    __syncthreads();
    int r = blockIdx.x * 4 + threadIdx.y;
    float acc = 0.f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 34;
        for (int j = threadIdx.x; j < k; j += 32) acc += nt_row_pq2(row, j) * xs[j % 8192];
    }
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    for (int s = 16; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) part[threadIdx.y][threadIdx.x] += part[threadIdx.y][threadIdx.x + s];
        __syncthreads();
    }
    if (r < n && threadIdx.x == 0) y[r] = part[threadIdx.y][0];
}

extern "C" __global__ void wrong_get_rows_pq2_0_ids_u16(const unsigned char* w, const int* ids, float* y, int n_ids, int k) {
    int i = blockIdx.x;
    if (i >= n_ids) return;
    unsigned short id = (unsigned short)ids[i];  // token ids "fit in 16 bits"
    const unsigned char* row = w + (long long)id * (k / NT_PQ2_QK) * NT_PQ2_BB;
    for (int j = threadIdx.x; j < k; j += blockDim.x) y[(long long)i * k + j] = nt_row_pq2(row, j);
}

// The row's byte offset in 32-bit int: right for every table below 2^31 bytes, wrapped (to a
// negative offset before the table) for the rows of a vocabulary table past 2^31 bytes.
extern "C" __global__ void wrong_get_rows_pq2_0_row_offset_i32(const unsigned char* w, const int* ids, float* y, int n_ids, int k) {
    int i = blockIdx.x;
    if (i >= n_ids) return;
    int off = ids[i] * (k / NT_PQ2_QK) * NT_PQ2_BB;  // "a table fits in 2 GB"
    const unsigned char* row = w + off;
    for (int j = threadIdx.x; j < k; j += blockDim.x) y[(long long)i * k + j] = nt_row_pq2(row, j);
}
