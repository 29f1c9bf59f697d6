// Normalized Sylvester-Walsh-Hadamard rotation of activations (spec/hadamard.json):
// per token and per block of B features, y = H_B (s ⊙ x), H[r][c] = (-1)^popcount(r&c)/sqrt(B).
// Signs first, then the in-place butterfly, then the 1/sqrt(B) normalization.
#pragma once

#define NT_HAD_MAX 1024

// One CUDA block rotates one (block, token) slice in shared memory `buf`.
__host__ __device__ inline void nt_butterflies(float* buf, int block) {
    for (int h = 1; h < block; h *= 2) {
        for (int p = threadIdx.x; p < block / 2; p += blockDim.x) {
            int i = (p / h) * 2 * h + p % h;
            float a = buf[i], b = buf[i + h];
            buf[i] = a + b;
            buf[i + h] = a - b;
        }
        __syncthreads();
    }
}
