// WRONG VARIANTS (negative controls), kind shape, get_rows / dequantize: the row length
// hard-coded to 256, the row stride computed from n instead of k (needs n: ABI sidecar), and a
// dequantize that assumes one CUDA block per ggml block while its launch caps the grid at 8.
#include "../common.cuh"

// k hard-coded to 256 (the model's smallest width the author tested).
extern "C" __global__ void wrong_get_rows_pq2_0_k256(const unsigned char* w, const int* ids, float* y, int n_ids, int k) {
    const int K = 256;
    int i = blockIdx.x;
    if (i >= n_ids) return;
    const unsigned char* row = w + (long long)ids[i] * (K / 128) * 34;
    for (int j = threadIdx.x; j < K; j += blockDim.x) y[(long long)i * K + j] = nt_row_pq2(row, j);
    (void)k;
}

// Row stride from n (the swapped dimension of a transposed view); sidecar binds n and k.
extern "C" __global__ void wrong_get_rows_ptq1_0_stride_from_n(const unsigned char* w, const int* ids, float* y,
                                                               int n_ids, int k, int n) {
    int i = blockIdx.x;
    if (i >= n_ids) return;
    const unsigned char* row = w + (long long)ids[i] * (n / 128) * 28;
    for (int j = threadIdx.x; j < k; j += blockDim.x) y[(long long)i * k + j] = nt_row_ptq1(row, j);
}

// One CUDA block per ggml block, no grid-stride loop, but launched (sidecar) with a grid of 8:
// ggml blocks 8.. are never written.
extern "C" __global__ void wrong_dequantize_tq2_0_grid_capped(const unsigned char* blocks, float* y, int n_blocks) {
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    for (int e = threadIdx.x; e < 256; e += blockDim.x) y[(long long)b * 256 + e] = nt_tq2_elem(blocks + (long long)b * 66, e);
}
