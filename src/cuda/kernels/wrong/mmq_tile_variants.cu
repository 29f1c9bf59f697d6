// WRONG VARIANTS (negative controls) of the `mul_mat` class, built on the shared tile loader:
// g64_stride: the loader steps PQ2_0 blocks with mainline Q2_0-g64's geometry (64 elements,
//   18 bytes) -- the shared loader nobody updated because it is not named after PQ2_0;
// row_major: activations read as [k][t] instead of token-major [t][k] (identical at T = 1).
#include "../mmq_tile.cuh"

#define NT_ROW_MAJOR ((long long)(k0 + j) * t + tok)
#define NT_TOKEN_MAJOR ((long long)tok * k + k0 + j)

NT_MUL_MAT_WITH(wrong_mul_mat_pq2_0_g64_stride, NT_Q2G64_QK, NT_Q2G64_BB, nt_q2_elem, NT_TOKEN_MAJOR)
NT_MUL_MAT_WITH(wrong_mul_mat_pq2_0_row_major, NT_PQ2_QK, NT_PQ2_BB, nt_q2_elem, NT_ROW_MAJOR)
