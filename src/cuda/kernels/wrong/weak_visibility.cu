// WRONG VARIANT (negative control) for the host tier's weak-visibility schedule: a split-K
// mat-vec, 4 blocks per row, each block writing its partial sum to global scratch and taking a
// ticket from the row's atomic counter; the block holding the last ticket sums the 4 partials.
// There is no __threadfence() between the partial and the ticket, so CUDA does not guarantee
// the last block sees the other blocks' partials (a relaxed atomic orders nothing; see the
// CUDA C++ Programming Guide, "Memory Fence Functions", whose sum example needs the fence).
// The host tier passed it before the weak-visibility schedule: fibers share one memory, so
// every write is visible at once. Its correct twin (the fence) is in unusual/weak_visibility.cu.
#include "../common.cuh"

extern "C" __global__ void wrong_mul_mat_vec_pq2_0_splitk_no_fence(const unsigned char* w, const float* x, float* y,
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
        // "the atomic is after the store in program order": not a publication
        last = atomicAdd(&ticket[r], 1u) == 3u;
    }
    __syncthreads();
    if (last && l == 0) {
        volatile float* p = part + r * 4;
        y[r] = (p[0] + p[1]) + (p[2] + p[3]);
    }
}
