// Class `get_rows`: y[i][:] = decode(row ids[i] of a [n, k] ggml-block matrix), bit-exact.
// Launch: grid (n_ids,1,1), block (128,1,1). Row stride = k / QK * BB bytes.
#include "common.cuh"

#define NT_GET_ROWS(NAME, QK, BB, ROW_ELEM)                                               \
    extern "C" __global__ void NAME(const unsigned char* __restrict__ w,                  \
                                    const int* __restrict__ ids, float* __restrict__ y,   \
                                    int n_ids, int k) {                                   \
        int i = blockIdx.x;                                                               \
        if (i >= n_ids) return;                                                           \
        const unsigned char* row = w + (long long)ids[i] * (k / QK) * BB;                 \
        for (int j = threadIdx.x; j < k; j += blockDim.x) y[(long long)i * k + j] = ROW_ELEM(row, j); \
    }

NT_GET_ROWS(ref_get_rows_pq2_0, NT_PQ2_QK, NT_PQ2_BB, nt_row_pq2)
NT_GET_ROWS(ref_get_rows_ptq1_0, NT_PTQ1_QK, NT_PTQ1_BB, nt_row_ptq1)
