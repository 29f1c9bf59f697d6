// UNUSUAL BUT CORRECT kernels: grid-stride loops launched (ABI sidecar) with fewer CUDA blocks
// than work items, so each CUDA block covers several ggml blocks / rows / ids.
#include "../common.cuh"

// Sidecar launch: grid (4,1,1), block (64,1,1).
extern "C" __global__ void unusual_dequantize_pq2_0_grid_stride(const unsigned char* blocks, float* y, int n_blocks) {
    for (int b = blockIdx.x; b < n_blocks; b += gridDim.x) {
        const unsigned char* blk = blocks + (long long)b * 34;
        float d = nt_scale_at(blk);
        for (int j = threadIdx.x; j < 128; j += blockDim.x)
            y[(long long)b * 128 + j] = (float)(((blk[2 + j / 4] >> (2 * (j % 4))) & 3) - 1) * d;
    }
}

// Element-level grid stride over all n_blocks*256 outputs. Sidecar: grid (ceil(n_blocks/3),1,1), block (128,1,1).
extern "C" __global__ void unusual_dequantize_tq1_0_grid_stride(const unsigned char* blocks, float* y, int n_blocks) {
    long long total = (long long)n_blocks * 256;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x)
        y[i] = nt_tq1_elem(blocks + (i / 256) * 54, (int)(i % 256));
}

// Sidecar: grid (2,1,1), block (128,1,1).
extern "C" __global__ void unusual_get_rows_ptq1_0_grid_stride(const unsigned char* w, const int* ids, float* y, int n_ids, int k) {
    for (int i = blockIdx.x; i < n_ids; i += gridDim.x) {
        const unsigned char* row = w + (long long)ids[i] * (k / 128) * 28;
        for (int j = threadIdx.x; j < k; j += blockDim.x) y[(long long)i * k + j] = nt_row_ptq1(row, j);
    }
}

// Sidecar: grid (2,1,1), block (32,4,1). The row-group loop bound is uniform over the CUDA block,
// so every thread reaches every barrier.
extern "C" __global__ void unusual_mul_mat_vec_pq2_0_grid_stride(const unsigned char* w, const float* x, float* y, int n, int k) {
    __shared__ float part[4][32];
    for (int r0 = blockIdx.x * 4; r0 < n; r0 += gridDim.x * 4) {
        int r = r0 + threadIdx.y;
        float acc = 0.0f;
        if (r < n) {
            const unsigned char* row = w + (long long)r * (k / 128) * 34;
            for (int j = threadIdx.x; j < k; j += 32) acc += nt_row_pq2(row, j) * x[j];
        }
        part[threadIdx.y][threadIdx.x] = acc;
        __syncthreads();
        for (int s = 16; s > 0; s >>= 1) {
            if ((int)threadIdx.x < s) part[threadIdx.y][threadIdx.x] += part[threadIdx.y][threadIdx.x + s];
            __syncthreads();
        }
        if (r < n && threadIdx.x == 0) y[r] = part[threadIdx.y][0];
        __syncthreads();  // part is rewritten by the next row group
    }
}
