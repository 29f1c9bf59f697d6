// Class `mul_mat` (MMQ-style prefill, T >= 1 tokens): Y[t][r] = sum_j W[r][j] * X[t][j],
// X token-major [t][k], Y token-major [t][n]. Launch: grid (ceil(n/32), ceil(t/4), 1),
// block (128,1,1); thread i owns row r0 + i%32 and token blockIdx.y*4 + i/32. The K loop
// stages 32x128 weight tiles in shared memory through nt_load_tile (two barriers per tile).
#include "mmq_tile.cuh"

#define NT_TOKEN_MAJOR ((long long)tok * k + k0 + j)

NT_MUL_MAT_WITH(ref_mul_mat_pq2_0, NT_PQ2_QK, NT_PQ2_BB, nt_q2_elem, NT_TOKEN_MAJOR)
NT_MUL_MAT_WITH(ref_mul_mat_ptq1_0, NT_PTQ1_QK, NT_PTQ1_BB, nt_ptq1_elem, NT_TOKEN_MAJOR)
