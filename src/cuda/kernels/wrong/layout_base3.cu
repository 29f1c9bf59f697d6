// WRONG VARIANTS (negative controls), kind layout, base-3 formats: qh bytes placed before qs,
// the PTQ1_0 scale read from the front of the block, PTQ1_0 trits read sequentially (byte e/5,
// digit e%5) in get_rows and mul_mat_vec, and TQ1_0 decoded with PTQ1_0's stage widths 16/8/2.
#include "../common.cuh"
#include "wv_common.cuh"

// PTQ1_0 staged order, with the author's belief of where qs, qh and d sit.
static __device__ inline float lb_staged(const unsigned char* qs, const unsigned char* qh, const unsigned char* dp, int e) {
    int t;
    if (e < 80) t = nt_trit(qs[e % 16], e / 16);
    else if (e < 120) t = nt_trit(qs[16 + (e - 80) % 8], (e - 80) / 8);
    else t = nt_trit(qh[(e - 120) % 2], (e - 120) / 2);
    return (float)(t - 1) * nt_scale_at(dp);
}
// Believed layout {qh[2], qs[24], d}.
static __device__ inline float lb_qh_first(const unsigned char* blk, int e) { return lb_staged(blk + 2, blk, blk + 26, e); }
// Believed layout {d, qs[24], qh[2]} (scale first, as PQ2_0).
static __device__ inline float lb_scale_first(const unsigned char* blk, int e) { return lb_staged(blk + 2, blk + 26, blk, e); }
// Sequential: element e -> qs[e/5] digit e%5; then qh[(e-120)/4] digit (e-120)%4.
static __device__ inline float lb_sequential(const unsigned char* blk, int e) {
    int t = e < 120 ? nt_trit(blk[e / 5], e % 5) : nt_trit(blk[24 + (e - 120) / 4], (e - 120) % 4);
    return (float)(t - 1) * nt_scale_at(blk + 26);
}

WV_DEQUANT(wrong_dequantize_ptq1_0_qh_first, 128, 28, lb_qh_first)
WV_DEQUANT(wrong_dequantize_ptq1_0_scale_first, 128, 28, lb_scale_first)
WV_GET_ROWS(wrong_get_rows_ptq1_0_sequential, 128, 28, lb_sequential)
WV_MMV(wrong_mul_mat_vec_ptq1_0_sequential, 128, 28, lb_sequential)
WV_MMV(wrong_mul_mat_vec_ptq1_0_qh_first, 128, 28, lb_qh_first)

// TQ1_0 through a PTQ1_0 kernel whose block size, byte size and scale position were updated
// but whose stage widths were not: one thread per code byte, 16 + 8 qs bytes and 2 qh bytes,
// so only 128 of the 256 elements are written (the rest keep whatever y held).
extern "C" __global__ void wrong_dequantize_tq1_0_ptq1_widths(const unsigned char* blocks, float* y, int n_blocks) {
    int b = blockIdx.x;
    if (b >= n_blocks) return;
    const unsigned char* blk = blocks + (long long)b * 54;
    float d = nt_scale_at(blk + 52);
    float* out = y + (long long)b * 256;
    int i = threadIdx.x;
    if (i < 16) {
        for (int n = 0; n < 5; ++n) out[n * 16 + i] = (float)(nt_trit(blk[i], n) - 1) * d;
    } else if (i < 24) {
        for (int n = 0; n < 5; ++n) out[80 + n * 8 + (i - 16)] = (float)(nt_trit(blk[i], n) - 1) * d;
    } else if (i < 26) {
        for (int n = 0; n < 4; ++n) out[120 + n * 2 + (i - 24)] = (float)(nt_trit(blk[48 + (i - 24)], n) - 1) * d;
    }
}
