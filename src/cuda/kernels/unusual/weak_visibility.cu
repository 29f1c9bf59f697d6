// UNUSUAL BUT CORRECT: the split-K mat-vec of wrong/weak_visibility.cu with the
// __threadfence() between each block's partial and its ticket, so the block holding the last
// ticket sees every partial (the CUDA C++ Programming Guide's "Memory Fence Functions" pattern).
#include "../common.cuh"

extern "C" __global__ void unusual_mul_mat_vec_pq2_0_splitk_fenced(const unsigned char* w, const float* x, float* y,
                                                                  void* scratch, int n, int k) {
    int r = blockIdx.x, s = blockIdx.y, l = threadIdx.x;
    const unsigned char* row = w + (long long)r * (k / NT_PQ2_QK) * NT_PQ2_BB;
    float acc = 0.0f;
    for (int j = s * 32 + l; j < k; j += 4 * 32) acc += nt_row_pq2(row, j) * x[j];
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    float* part = (float*)scratch;
    unsigned* ticket = (unsigned*)(part + (long long)n * 4);
    __shared__ int last;
    if (l == 0) {
        part[r * 4 + s] = acc;
        __threadfence();  // the partial is visible device-wide before the ticket is taken
        last = atomicAdd(&ticket[r], 1u) == 3u;
    }
    __syncthreads();
    if (last && l == 0) {
        volatile float* p = part + r * 4;
        y[r] = (p[0] + p[1]) + (p[2] + p[3]);
    }
}
