// WRONG VARIANTS (negative controls) of `mul_mat` (MMQ-style, 32x128 weight tiles through the
// shared tile loader): shape bugs (blockIdx.y ignored, tokens indexed mod 4, output written
// row-major [n][t], activations read row-major on PTQ1_0) and the shared loader's own decoder
// wrong (code 3 -> +1 on PQ2_0; PTQ1_0 digits sequential).
#include "../mmq_tile.cuh"

// TOK: this thread's token; XI: activation index; YI: output index.
#define SM_MUL_MAT(NAME, QK, BB, ELEM, TOK, XI, YI)                                       \
    extern "C" __global__ void NAME(const unsigned char* __restrict__ w,                  \
                                    const float* __restrict__ x, float* __restrict__ y,   \
                                    int n, int k, int t) {                                \
        __shared__ float tile[NT_TILE_ROWS][NT_TILE_K + 1];                               \
        int r0 = blockIdx.x * NT_TILE_ROWS;                                               \
        int lr = threadIdx.x % NT_TILE_ROWS, r = r0 + lr, tok = (TOK);                    \
        float acc = 0.0f;                                                                 \
        for (int k0 = 0; k0 < k; k0 += NT_TILE_K) {                                       \
            nt_load_tile(tile, w, n, k, r0, k0, QK, BB, ELEM);                            \
            __syncthreads();                                                              \
            if (r < n && tok < t)                                                         \
                for (int j = 0; j < NT_TILE_K && k0 + j < k; ++j) acc += tile[lr][j] * x[XI]; \
            __syncthreads();                                                              \
        }                                                                                 \
        if (r < n && tok < t) y[YI] = acc;                                                \
    }

#define SM_TOK_OK (blockIdx.y * 4 + threadIdx.x / NT_TILE_ROWS)
#define SM_TOK_NO_Y (threadIdx.x / NT_TILE_ROWS)
#define SM_X_OK ((long long)tok * k + k0 + j)
#define SM_X_MOD4 ((long long)(tok % 4) * k + k0 + j)
#define SM_X_ROW_MAJOR ((long long)(k0 + j) * t + tok)
#define SM_Y_OK ((long long)tok * n + r)
#define SM_Y_ROW_MAJOR ((long long)r * t + tok)

// The loader's own decoders (the "type switch" inside a shared loader).
static __device__ float sm_pq2_code3_plus1(const unsigned char* blk, int j) {
    int c = (blk[2 + j / 4] >> (2 * (j % 4))) & 3;
    return (float)(c == 3 ? 1 : c - 1) * nt_scale_at(blk);
}
static __device__ float sm_ptq1_sequential(const unsigned char* blk, int e) {
    int t = e < 120 ? nt_trit(blk[e / 5], e % 5) : nt_trit(blk[24 + (e - 120) / 4], (e - 120) % 4);
    return (float)(t - 1) * nt_scale_at(blk + 26);
}

SM_MUL_MAT(wrong_mul_mat_pq2_0_ignore_block_y, NT_PQ2_QK, NT_PQ2_BB, nt_q2_elem, SM_TOK_NO_Y, SM_X_OK, SM_Y_OK)
SM_MUL_MAT(wrong_mul_mat_ptq1_0_ignore_block_y, NT_PTQ1_QK, NT_PTQ1_BB, nt_ptq1_elem, SM_TOK_NO_Y, SM_X_OK, SM_Y_OK)
SM_MUL_MAT(wrong_mul_mat_ptq1_0_tokens_mod4, NT_PTQ1_QK, NT_PTQ1_BB, nt_ptq1_elem, SM_TOK_OK, SM_X_MOD4, SM_Y_OK)
SM_MUL_MAT(wrong_mul_mat_pq2_0_output_row_major, NT_PQ2_QK, NT_PQ2_BB, nt_q2_elem, SM_TOK_OK, SM_X_OK, SM_Y_ROW_MAJOR)
SM_MUL_MAT(wrong_mul_mat_ptq1_0_row_major, NT_PTQ1_QK, NT_PTQ1_BB, nt_ptq1_elem, SM_TOK_OK, SM_X_ROW_MAJOR, SM_Y_OK)
SM_MUL_MAT(wrong_mul_mat_pq2_0_tile_code3_as_plus1, NT_PQ2_QK, NT_PQ2_BB, sm_pq2_code3_plus1, SM_TOK_OK, SM_X_OK, SM_Y_OK)
SM_MUL_MAT(wrong_mul_mat_ptq1_0_tile_sequential, NT_PTQ1_QK, NT_PTQ1_BB, sm_ptq1_sequential, SM_TOK_OK, SM_X_OK, SM_Y_OK)
