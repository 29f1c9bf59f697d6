// UNUSUAL BUT CORRECT kernels: other thread -> element mappings. One thread per code byte
// (decoding 4 two-bit codes or 5/4 trits by the running "multiply by 3" digit loop), 8 rows
// per CUDA block with 256 threads (sidecar), and a mul_mat with one output per thread and no
// shared memory. Own decoders throughout.

static __device__ inline float um_f16(unsigned short h) {
    unsigned s = (h >> 15) & 1u, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    float v;
    if (e == 0) v = (float)m * 5.9604644775390625e-8f;  // subnormal/zero: m * 2^-24, exact
    else {
        union { unsigned u; float f; } c;
        c.u = ((e == 31 ? 255u : e + 112u) << 23) | (m << 13);
        v = c.f;
    }
    return s ? -v : v;
}
static __device__ inline float um_scale(const unsigned char* p) { return um_f16((unsigned short)(p[0] | (p[1] << 8))); }

// Writes the nd digits of byte b (MSB first) to out[first + n*step]; digit n = (m_n*3)>>8, m_{n+1} = (u8)(m_n*3).
static __device__ inline void um_trits(unsigned char b, int nd, float d, float* out, int first, int step) {
    unsigned m = b;
    for (int n = 0; n < nd; ++n) {
        out[first + n * step] = (float)((int)((m * 3u) >> 8) - 1) * d;
        m = (m * 3u) & 0xffu;
    }
}

extern "C" __global__ void unusual_dequantize_pq2_0_thread_per_byte(const unsigned char* blocks, float* y, int n_blocks) {
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * 34;
    float d = um_scale(blk);
    for (int q = threadIdx.x; q < 32; q += blockDim.x) {
        unsigned v = blk[2 + q];
        float* out = y + (long long)b * 128 + 4 * q;
        out[0] = (float)((int)(v & 3u) - 1) * d;
        out[1] = (float)((int)((v >> 2) & 3u) - 1) * d;
        out[2] = (float)((int)((v >> 4) & 3u) - 1) * d;
        out[3] = (float)((int)(v >> 6) - 1) * d;
    }
}

extern "C" __global__ void unusual_dequantize_tq2_0_thread_per_byte(const unsigned char* blocks, float* y, int n_blocks) {
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * 66;
    float d = um_scale(blk + 64);
    for (int q = threadIdx.x; q < 64; q += blockDim.x) {
        unsigned v = blk[q];
        float* out = y + (long long)b * 256 + (q / 32) * 128 + q % 32;
        for (int s = 0; s < 4; ++s) out[32 * s] = (float)((int)((v >> (2 * s)) & 3u) - 1) * d;
    }
}

// Staged base-3 block, one thread per code byte: widths (w1, w2, wh).
#define UM_STAGED_BYTES(NAME, QK, BB, W1, W2, WH)                                         \
    extern "C" __global__ void NAME(const unsigned char* blocks, float* y, int n_blocks) { \
        int b = blockIdx.x;                                                               \
        if (b >= n_blocks) return;                                                        \
        const unsigned char* blk = blocks + (long long)b * (BB);                          \
        float d = um_scale(blk + (W1) + (W2) + (WH));                                     \
        float* out = y + (long long)b * (QK);                                             \
        for (int i = threadIdx.x; i < (W1) + (W2) + (WH); i += blockDim.x) {              \
            if (i < (W1)) um_trits(blk[i], 5, d, out, i, (W1));                           \
            else if (i < (W1) + (W2)) um_trits(blk[i], 5, d, out, 5 * (W1) + i - (W1), (W2)); \
            else um_trits(blk[i], 4, d, out, 5 * ((W1) + (W2)) + i - (W1) - (W2), (WH)); \
        }                                                                                 \
    }
UM_STAGED_BYTES(unusual_dequantize_ptq1_0_thread_per_byte, 128, 28, 16, 8, 2)
UM_STAGED_BYTES(unusual_dequantize_tq1_0_thread_per_byte, 256, 54, 32, 16, 4)

// get_rows, one thread per qs byte of the row (4 elements each).
extern "C" __global__ void unusual_get_rows_pq2_0_thread_per_byte(const unsigned char* w, const int* ids, float* y, int n_ids, int k) {
    int i = blockIdx.x;
    if (i >= n_ids) return;
    int nb = k / 128;
    const unsigned char* row = w + (long long)ids[i] * nb * 34;
    for (int q = threadIdx.x; q < nb * 32; q += blockDim.x) {
        const unsigned char* blk = row + (q / 32) * 34;
        unsigned v = blk[2 + q % 32];
        float d = um_scale(blk);
        float* out = y + (long long)i * k + 4 * q;
        for (int s = 0; s < 4; ++s) out[s] = (float)((int)((v >> (2 * s)) & 3u) - 1) * d;
    }
}

static __device__ inline float um_ptq1_elem(const unsigned char* blk, int e) {
    int byte, digit;
    if (e < 80) { byte = e % 16; digit = e / 16; }
    else if (e < 120) { byte = 16 + (e - 80) % 8; digit = (e - 80) / 8; }
    else { byte = 24 + (e - 120) % 2; digit = (e - 120) / 2; }
    unsigned m = blk[byte];
    for (int n = 0; n < digit; ++n) m = (m * 3u) & 0xffu;
    return (float)((int)((m * 3u) >> 8) - 1) * um_scale(blk + 26);
}

// 8 rows per CUDA block, 32 lanes per row. Sidecar: grid (ceil(n/8),1,1), block (32,8,1).
extern "C" __global__ void unusual_mul_mat_vec_ptq1_0_8rows(const unsigned char* w, const float* x, float* y, int n, int k) {
    __shared__ float part[8][33];
    int r = blockIdx.x * 8 + threadIdx.y;
    float acc = 0.0f;
    if (r < n) {
        const unsigned char* row = w + (long long)r * (k / 128) * 28;
        for (int j = threadIdx.x; j < k; j += 32) acc += um_ptq1_elem(row + (j / 128) * 28, j % 128) * x[j];
    }
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    for (int s = 16; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) part[threadIdx.y][threadIdx.x] += part[threadIdx.y][threadIdx.x + s];
        __syncthreads();
    }
    if (r < n && threadIdx.x == 0) y[r] = part[threadIdx.y][0];
}

// mul_mat, class launch (ceil(n/32), ceil(t/4)) x 128: thread -> (row, token) computed directly.
extern "C" __global__ void unusual_mul_mat_pq2_0_direct(const unsigned char* w, const float* x, float* y, int n, int k, int t) {
    int r = blockIdx.x * 32 + threadIdx.x % 32, tok = blockIdx.y * 4 + threadIdx.x / 32;
    if (r >= n || tok >= t) return;
    const unsigned char* row = w + (long long)r * (k / 128) * 34;
    const float* xt = x + (long long)tok * k;
    float acc = 0.0f;
    for (int b = 0; b < k / 128; ++b) {
        const unsigned char* blk = row + b * 34;
        float d = um_scale(blk);
        for (int q = 0; q < 32; ++q) {
            unsigned v = blk[2 + q];
            for (int s = 0; s < 4; ++s) acc += (float)((int)((v >> (2 * s)) & 3u) - 1) * d * xt[b * 128 + 4 * q + s];
        }
    }
    y[(long long)tok * n + r] = acc;
}
