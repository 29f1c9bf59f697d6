// WRONG VARIANTS (negative controls) of `mul_mat_planes` whose bug only shows for T > 1: every
// one is right on token 0, so the T = 1 cases a mul_mat_vec_planes-style check runs pass them
// all. Only token 0 written; x of every token read at token 0 (the per-token offset missing);
// the token stride of x taken from the wrong object (the base plane's row bytes, k_pad / 4 for
// PQ2_0_G128, instead of the activations' k_pad); y written token-minor (y[r * t + i]).
#include "../planes.cuh"

// X_TOKEN: the start of token tok's activations; Y_AT: where output (tok, r) goes; WRITE: whether
// this block writes at all.
#define PT_KERNEL(NAME, ELEM, X_TOKEN, Y_AT, WRITE)                                       \
    extern "C" __global__ void NAME(const unsigned char* __restrict__ obj, long long base_off, \
                                    long long high_off, long long scale_off,              \
                                    const float* __restrict__ x, float* __restrict__ y,   \
                                    int n, int k_pad, int t) {                            \
        __shared__ float part[4][32];                                                     \
        int r = blockIdx.x * 4 + threadIdx.y, tok = blockIdx.y;                           \
        const float* xt = (X_TOKEN);                                                      \
        float acc = 0.0f;                                                                 \
        if (r < n && tok < t)                                                             \
            for (int j = threadIdx.x; j < k_pad; j += 32) acc += (ELEM) * xt[j];          \
        part[threadIdx.y][threadIdx.x] = acc;                                             \
        __syncthreads();                                                                  \
        for (int s = 16; s > 0; s >>= 1) {                                                \
            if ((int)threadIdx.x < s) part[threadIdx.y][threadIdx.x] += part[threadIdx.y][threadIdx.x + s]; \
            __syncthreads();                                                              \
        }                                                                                 \
        if (r < n && tok < t && threadIdx.x == 0 && (WRITE)) y[(Y_AT)] = part[threadIdx.y][0]; \
        (void)high_off;                                                                   \
    }

#define PT_PQ2 nt_planes_pq2(obj, base_off, scale_off, k_pad, r, j)
#define PT_PTQ1 nt_planes_ptq1(obj, base_off, high_off, scale_off, k_pad, r, j)
#define PT_X_RIGHT x + (long long)tok * k_pad
#define PT_Y_RIGHT (long long)tok * n + r

// Only token 0 written (a mat-vec kernel's "if (blockIdx.y == 0)" guard left in).
PT_KERNEL(wrong_mul_mat_planes_pq2_0_g128_token0_only, PT_PQ2, PT_X_RIGHT, PT_Y_RIGHT, tok == 0)
// x of every token read at x (the mat-vec kernel's activation pointer reused per token).
PT_KERNEL(wrong_mul_mat_planes_ptq1_0_g128_x_no_token_offset, PT_PTQ1, x, PT_Y_RIGHT, true)
// Token stride of x = the base plane's bytes per row (gpr * 32 = k_pad / 4), not k_pad floats.
PT_KERNEL(wrong_mul_mat_planes_pq2_0_g128_x_stride_base_row, PT_PQ2, x + (long long)tok * (k_pad / 128) * 32, PT_Y_RIGHT, true)
// y written row-major by weight row (token-minor): y[r * t + tok].
PT_KERNEL(wrong_mul_mat_planes_ptq1_0_g128_y_token_minor, PT_PTQ1, PT_X_RIGHT, (long long)r * t + tok, true)
