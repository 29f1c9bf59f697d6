// Self-test of host_types.h (the host tier's CUDA types and intrinsics). Every expected value is
// computed here independently of the header (ldexp, exhaustive tables, loops, __int128 exact
// arithmetic); a few values are the ones NVIDIA's own cuda_fp16.hpp / libdevice documentation
// state. Prints per-group counts and "ALL OK" on success; exit 1 on any failure.
// Build: c++ -std=c++17 -O1 host_types_selftest.cpp -o selftest
#include "host_types.h"
#include <stdio.h>

static long g_checks = 0, g_fail = 0;
#define CHECK(cond, ...) do { ++g_checks; if (!(cond)) { if (++g_fail <= 30) { printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } } while (0)

static uint32_t fb(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float bf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd() { rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull; return (uint32_t)(rng_state >> 32); }

template <class A, class B> struct same { static const bool v = false; };
template <class A> struct same<A, A> { static const bool v = true; };

// ---- f16 reference table: value of every pattern from its fields with ldexp -------------------
static double H[65536];  // value of each f16 pattern (NaN where NaN)
static double ref_h(unsigned h) {
    const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 31) v = m ? NAN : INFINITY;
    else if (e == 0) v = ldexp((double)m, -24);
    else v = ldexp((double)(1024 + m), e - 25);
    return s ? -v : v;
}
// Positive finite values in pattern order 0..0x7bff are increasing; slot 0x7c00 holds 2^16,
// the next value of an unbounded exponent range (IEEE 754 §4.3.1 rounds as if unbounded, then
// overflows: the tie 65520 goes to the even slot 0x7c00 = Inf).
static double HP[0x7c01];
// Nearest f16 (RNE) to x (finite double), by bracketing in the table and comparing exact distances.
static unsigned ref_f2h(double x) {
    const unsigned sign = signbit(x) ? 0x8000u : 0u;
    const double a = fabs(x);
    if (a >= 65536.0) return sign | 0x7c00u;
    int lo = 0, hi = 0x7c00;  // HP[lo] <= a < HP[hi]
    while (hi - lo > 1) { const int mid = (lo + hi) / 2; if (HP[mid] <= a) lo = mid; else hi = mid; }
    const double d0 = a - HP[lo], d1 = HP[hi] - a;  // exact (see the header's note on Sterbenz)
    const int pick = d0 < d1 ? lo : d1 < d0 ? hi : ((lo & 1) ? hi : lo);
    return sign | (unsigned)pick;
}
static unsigned ref_f2h_rz(double x) {
    const unsigned sign = signbit(x) ? 0x8000u : 0u;
    const double a = fabs(x);
    if (a >= 65504.0) return sign | 0x7bffu;
    int lo = 0, hi = 0x7c00;
    while (hi - lo > 1) { const int mid = (lo + hi) / 2; if (HP[mid] <= a) lo = mid; else hi = mid; }
    return sign | (unsigned)lo;
}
// bf16: value = float with the pattern in the top half; table of positive finite values + 2^128.
static double BP[0x7f81];
static double ref_b(unsigned b) {
    const int s = b >> 15, e = (b >> 7) & 255, m = b & 127;
    double v;
    if (e == 255) v = m ? NAN : INFINITY;
    else if (e == 0) v = ldexp((double)m, -133);
    else v = ldexp((double)(128 + m), e - 134);
    return s ? -v : v;
}
static unsigned ref_f2b(double x) {
    const unsigned sign = signbit(x) ? 0x8000u : 0u;
    const double a = fabs(x);
    if (a >= ldexp(1.0, 128)) return sign | 0x7f80u;
    int lo = 0, hi = 0x7f80;
    while (hi - lo > 1) { const int mid = (lo + hi) / 2; if (BP[mid] <= a) lo = mid; else hi = mid; }
    const double d0 = a - BP[lo], d1 = BP[hi] - a;
    const int pick = d0 < d1 ? lo : d1 < d0 ? hi : ((lo & 1) ? hi : lo);
    return sign | (unsigned)pick;
}

// Exact f16 arithmetic reference: value N * 2^-48 (N an __int128), rounded RNE to f16 by
// comparing exact integer distances to the bracketing table entries (HI[i] = HP[i] * 2^48).
static __int128 HI[0x7c01];
static unsigned ref_round48(__int128 N, bool zero_neg) {
    if (N == 0) return zero_neg ? 0x8000u : 0u;
    const unsigned sign = N < 0 ? 0x8000u : 0u;
    const __int128 a = N < 0 ? -N : N;
    if (a >= HI[0x7c00]) return sign | 0x7c00u;
    int lo = 0, hi = 0x7c00;
    while (hi - lo > 1) { const int mid = (lo + hi) / 2; if (HI[mid] <= a) lo = mid; else hi = mid; }
    const __int128 d0 = a - HI[lo], d1 = HI[hi] - a;
    const int pick = d0 < d1 ? lo : d1 < d0 ? hi : ((lo & 1) ? hi : lo);
    return sign | (unsigned)pick;
}
static __int128 units24(unsigned h) { return (__int128)(H[h] * 16777216.0); }  // f16 * 2^24: an integer

static bool is_nan_h(unsigned h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu); }

static void test_half_conversions() {
    long n0 = g_checks;
    for (unsigned h = 0; h < 65536; ++h) H[h] = ref_h(h);
    for (unsigned i = 0; i < 0x7c00; ++i) HP[i] = H[i];
    HP[0x7c00] = 65536.0;
    for (unsigned i = 0; i <= 0x7c00; ++i) HI[i] = (__int128)(HP[i] * 16777216.0) << 24;
    // __half2float on all 65536 patterns: exact value; NaN stays NaN with sign and payload
    // (quiet bit set, as an IEEE 754 conversion does).
    for (unsigned h = 0; h < 65536; ++h) {
        const float f = __half2float(__ushort_as_half((unsigned short)h));
        if (is_nan_h(h)) {
            CHECK(f != f && (fb(f) >> 31) == (h >> 15) && ((fb(f) >> 13) & 0x1ffu) == (h & 0x1ffu) && (fb(f) & 0x400000u), "h2f NaN %04x -> %08x", h, fb(f));
        } else {
            CHECK((double)f == H[h] && signbit(f) == signbit(H[h]), "h2f %04x -> %a want %a", h, f, H[h]);
            // round trip f16 -> f32 -> f16
            CHECK(__half_as_ushort(__float2half(f)) == h, "roundtrip %04x", h);
            CHECK(__half_as_ushort(__float2half_rz(f)) == h, "roundtrip rz %04x", h);
        }
        const __half hh = __ushort_as_half((unsigned short)h);
        CHECK((float)hh == f || (f != f), "operator float %04x", h);
    }
    // Every midpoint between consecutive f16 magnitudes (both signs) and its float neighbours.
    for (unsigned i = 0; i < 0x7c00; ++i) {
        const double mid = (HP[i] + HP[i + 1]) / 2;  // exact: 12 significant bits
        const float fm = (float)mid;
        CHECK((double)fm == mid, "midpoint not exact %u", i);
        const unsigned even = (i & 1) ? i + 1 : i;
        for (int s = 0; s < 2; ++s) {
            const float m = s ? -fm : fm;
            const unsigned sg = s ? 0x8000u : 0u;
            CHECK(__half_as_ushort(__float2half_rn(m)) == (sg | even), "tie %a -> %04x want %04x", m, __half_as_ushort(__float2half_rn(m)), sg | even);
            CHECK(__half_as_ushort(__float2half(nextafterf(m, s ? -INFINITY : INFINITY))) == (sg | (i + 1)), "above tie %u", i);
            CHECK(__half_as_ushort(__float2half(nextafterf(m, 0.0f))) == (sg | i), "below tie %u", i);
            CHECK(__half_as_ushort(__float2half_rz(m)) == (sg | (i == 0x7bff ? 0x7bffu : i)), "rz tie %u", i);
        }
    }
    // Random floats over the whole f32 range: vs the table reference.
    for (int k = 0; k < 400000; ++k) {
        uint32_t u = rnd();
        if (k & 1) u = (u & 0x80ffffffu) | ((uint32_t)(96 + rnd() % 50) << 23);  // concentrate near the f16 range
        const float f = bf(u);
        if (f != f) continue;
        CHECK(__half_as_ushort(__float2half(f)) == ref_f2h(f), "f2h %a -> %04x want %04x", f, __half_as_ushort(__float2half(f)), ref_f2h(f));
        CHECK(__half_as_ushort(__float2half_rz(f)) == (fabsf(f) == INFINITY ? (fb(f) >> 16 & 0x8000u) | 0x7c00u : ref_f2h_rz(f)), "f2h_rz %a", f);
        CHECK(__half_as_ushort(__double2half((double)f)) == ref_f2h(f), "d2h %a", f);
        const double d = (double)f * (1.0 + ldexp((double)(rnd() % 1000), -40));  // off the f32 grid
        CHECK(__half_as_ushort(__double2half(d)) == ref_f2h(d), "d2h %a", d);
    }
    // Documented thresholds (cuda_fp16.hpp host path: |x| > 0x477fefff overflows under RN;
    // NaN -> 0x7fff; +-Inf -> +-Inf).
    CHECK(__half_as_ushort(__float2half(65520.0f)) == 0x7c00u, "65520 -> Inf");
    CHECK(__half_as_ushort(__float2half(-65520.0f)) == 0xfc00u, "-65520 -> -Inf");
    CHECK(__half_as_ushort(__float2half(bf(0x477fefffu))) == 0x7bffu, "65519.996 -> 65504");
    CHECK(__half_as_ushort(__float2half(65504.0f)) == 0x7bffu, "65504");
    CHECK(__half_as_ushort(__float2half_rz(1e30f)) == 0x7bffu, "rz overflow -> max");
    CHECK(__half_as_ushort(__float2half_rz(INFINITY)) == 0x7c00u, "rz inf");
    CHECK(__half_as_ushort(__float2half(NAN)) == 0x7fffu, "NaN -> 0x7fff");
    CHECK(__half_as_ushort(__float2half(-NAN)) == 0x7fffu, "-NaN -> 0x7fff");
    CHECK(__half_as_ushort(__float2half(bf(0x7f800001u))) == 0x7fffu, "sNaN -> 0x7fff");
    CHECK(__half_as_ushort(__float2half(INFINITY)) == 0x7c00u && __half_as_ushort(__float2half(-INFINITY)) == 0xfc00u, "inf");
    CHECK(__half_as_ushort(__float2half(-0.0f)) == 0x8000u, "-0");
    CHECK(__half_as_ushort(__float2half(ldexpf(1.0f, -25))) == 0x0000u, "2^-25 tie -> 0");
    CHECK(__half_as_ushort(__float2half(nextafterf(ldexpf(1.0f, -25), 1.0f))) == 0x0001u, "just above 2^-25");
    CHECK(__half_as_ushort(__float2half(ldexpf(3.0f, -25))) == 0x0002u, "3*2^-25 tie -> even 2");
    CHECK(__half_as_ushort(__float2half(1e-30f)) == 0 && __half_as_ushort(__float2half(-1e-30f)) == 0x8000u, "underflow keeps sign");
    CHECK(__half_as_ushort(__float2half_rd(1e-30f)) == 0 && __half_as_ushort(__float2half_rd(-1e-30f)) == 0x8001u, "rd");
    CHECK(__half_as_ushort(__float2half_ru(1e-30f)) == 1 && __half_as_ushort(__float2half_ru(-1e-30f)) == 0x8000u, "ru");
    // Integer conversions (cvt rni / rzi, saturating).
    CHECK(__half2int_rn(__float2half(2.5f)) == 2 && __half2int_rn(__float2half(3.5f)) == 4 && __half2int_rz(__float2half(-3.75f)) == -3, "half2int");
    CHECK(__half_as_ushort(__int2half_rn(65519)) == 0x7bffu && __half_as_ushort(__int2half_rn(65520)) == 0x7c00u && __half_as_ushort(__int2half_rn(2049)) == ref_f2h(2049.0), "int2half");
    // half2 packing
    const __half2 p = __floats2half2_rn(1.5f, -2.0f);
    const float2 q = __half22float2(p);
    CHECK(q.x == 1.5f && q.y == -2.0f && __low2float(p) == 1.5f && __high2float(p) == -2.0f, "half2 pack");
    CHECK(__half_as_ushort(__low2half(p)) == 0x3e00u && __half_as_ushort(__high2half(p)) == 0xc000u, "low/high");
    CHECK(__half_as_ushort(__halves2half2(__low2half(p), __high2half(p)).y) == 0xc000u, "halves2half2");
    const __half2 p2 = __float2half2_rn(0.5f);
    CHECK(__half_as_ushort(p2.x) == 0x3800u && __half_as_ushort(p2.y) == 0x3800u && __float22half2_rn(make_float2(1, 2)).y == __float2half(2.0f), "float2half2");
    printf("f16 conversions: %ld checks\n", g_checks - n0);
}

static void test_half_arith() {
    long n0 = g_checks;
    // Random operand pairs (all patterns are candidates, NaNs included); exact results in __int128.
    for (int k = 0; k < 600000; ++k) {
        unsigned a = rnd() & 0xffffu, b = rnd() & 0xffffu, c = rnd() & 0xffffu;
        if (k % 3 == 1) b = (b & 0x83ffu) | ((a & 0x7c00u) ^ ((rnd() % 3) << 10));  // nearby exponents: cancellation
        if (k % 5 == 2) c = (c & 0x83ffu) | (rnd() % 8) << 10;                     // subnormal/small addends
        const __half ha = __ushort_as_half((unsigned short)a), hb = __ushort_as_half((unsigned short)b), hc = __ushort_as_half((unsigned short)c);
        const bool nan_in = is_nan_h(a) || is_nan_h(b) || is_nan_h(c);
        const bool inf_in = (a & 0x7fffu) == 0x7c00u || (b & 0x7fffu) == 0x7c00u || (c & 0x7fffu) == 0x7c00u;
        const unsigned add = __half_as_ushort(__hadd(ha, hb)), sub = __half_as_ushort(__hsub(ha, hb));
        const unsigned mul = __half_as_ushort(__hmul(ha, hb)), fma = __half_as_ushort(__hfma(ha, hb, hc));
        if (nan_in) {
            const bool nan_ab = is_nan_h(a) || is_nan_h(b);
            CHECK((!nan_ab || (add == 0x7fffu && mul == 0x7fffu)) && fma == 0x7fffu, "NaN in -> canonical NaN %04x %04x %04x", a, b, c);
            continue;
        }
        if (inf_in) {
            const double ea = H[a] + H[b], em = H[a] * H[b], ef = H[a] * H[b] + H[c];
            CHECK(ea != ea ? add == 0x7fffu : add == ref_f2h(ea), "inf add %04x %04x", a, b);
            CHECK(em != em ? mul == 0x7fffu : mul == ref_f2h(em), "inf mul %04x %04x", a, b);
            CHECK(ef != ef ? fma == 0x7fffu : fma == ref_f2h(ef), "inf fma %04x %04x %04x", a, b, c);
            continue;
        }
        const __int128 A = units24(a), B = units24(b), C = units24(c);
        const bool an = a >> 15, bn = b >> 15, cn = c >> 15;
        CHECK(add == ref_round48((A + B) << 24, an && bn), "hadd %04x %04x -> %04x want %04x", a, b, add, ref_round48((A + B) << 24, an && bn));
        CHECK(sub == ref_round48((A - B) << 24, an && !bn), "hsub %04x %04x", a, b);
        CHECK(mul == ref_round48(A * B, an != bn), "hmul %04x %04x -> %04x want %04x", a, b, mul, ref_round48(A * B, an != bn));
        const bool pz = A * B == 0, pn = an != bn;
        CHECK(fma == ref_round48(A * B + (C << 24), pz && C == 0 && pn && cn), "hfma %04x %04x %04x -> %04x want %04x", a, b, c, fma, ref_round48(A * B + (C << 24), pz && C == 0 && pn && cn));
        // operators are the intrinsics
        CHECK(__half_as_ushort(ha + hb) == add && __half_as_ushort(ha * hb) == mul && __half_as_ushort(ha - hb) == sub, "operators");
        // Division: r is correctly rounded iff no neighbour is strictly nearer to a/b, ties even.
        if (B != 0) {
            const unsigned r = __half_as_ushort(__hdiv(ha, hb));
            const unsigned mag = r & 0x7fffu;
            if (mag < 0x7c00u && A != 0) {
                const __int128 Bp = B < 0 ? -B : B, Ap = (A < 0 ? -A : A) << 24;  // |a/b| * 2^24 = Ap / Bp
                __int128 d[3];
                for (int j = -1; j <= 1; ++j) {
                    const int idx = (int)mag + j;
                    const __int128 R = idx < 0 ? 0 : (__int128)(HP[idx] * 16777216.0);
                    d[j + 1] = Ap - R * Bp; if (d[j + 1] < 0) d[j + 1] = -d[j + 1];
                }
                const bool ok = d[1] < d[2] || (d[1] == d[2] && !(mag & 1));
                const bool ok2 = mag == 0 || d[1] < d[0] || (d[1] == d[0] && !(mag & 1));
                CHECK(ok && ok2 && ((r >> 15) == (unsigned)(an != bn)), "hdiv %04x %04x -> %04x", a, b, r);
            }
        }
        // comparisons vs the double values
        const double x = H[a], y = H[b];
        CHECK(__heq(ha, hb) == (x == y) && __hlt(ha, hb) == (x < y) && __hge(ha, hb) == (x >= y) && __hne(ha, hb) == (x != y), "cmp");
        CHECK((ha < hb) == (x < y) && (ha != hb) == (x != y) && (ha == hb) == (x == y), "cmp ops");
    }
    // NaN comparison semantics: __hne ordered (false), operator!= unordered (true).
    const __half nan = __ushort_as_half(0x7e00), one = __float2half(1.0f), m0 = __ushort_as_half(0x8000), p0 = __ushort_as_half(0);
    CHECK(!__hne(nan, one) && __hneu(nan, one) && (nan != one) && !(nan == one) && !__heq(nan, nan), "NaN compare");
    CHECK(__hisnan(nan) && !__hisnan(one) && __hisinf(__ushort_as_half(0xfc00)) == -1 && __hisinf(__ushort_as_half(0x7c00)) == 1 && __hisinf(one) == 0, "isnan/isinf");
    CHECK(__half_as_ushort(__hmax(nan, one)) == 0x3c00u && __half_as_ushort(__hmin(one, nan)) == 0x3c00u && __half_as_ushort(__hmax(nan, nan)) == 0x7fffu, "hmax NaN");
    CHECK(__half_as_ushort(__hmax(m0, p0)) == 0 && __half_as_ushort(__hmin(p0, m0)) == 0x8000u && __half_as_ushort(__hmax_nan(nan, one)) == 0x7fffu, "hmax zeros");
    CHECK(__half_as_ushort(__hneg(one)) == 0xbc00u && __half_as_ushort(__habs(__ushort_as_half(0xbc00))) == 0x3c00u && __half_as_ushort(-one) == 0xbc00u, "neg/abs");
    __half acc = one; acc += one; acc *= __float2half(3.0f); acc -= one; acc /= __float2half(5.0f);
    CHECK(__half2float(acc) == 1.0f, "compound ops");
    const __half2 h2a = __floats2half2_rn(1.0f, 2.0f), h2b = __floats2half2_rn(3.0f, -4.0f);
    const float2 r2 = __half22float2(__hfma2(h2a, h2b, h2a));
    CHECK(r2.x == 4.0f && r2.y == -6.0f, "hfma2");
    const float2 r3 = __half22float2(__hadd2(h2a, h2b)), r4 = __half22float2(__hmul2(h2a, h2b)), r5 = __half22float2(__hsub2(h2a, h2b));
    CHECK(r3.x == 4 && r3.y == -2 && r4.x == 3 && r4.y == -8 && r5.x == -2 && r5.y == 6, "half2 arith");
    CHECK(__half2float(hsqrt(__float2half(2.0f))) == (float)H[ref_f2h(sqrt(2.0))], "hsqrt");
    printf("f16 arithmetic: %ld checks\n", g_checks - n0);
}

static void test_bf16() {
    long n0 = g_checks;
    for (unsigned i = 0; i < 0x7f80; ++i) BP[i] = ref_b(i);
    BP[0x7f80] = ldexp(1.0, 128);
    for (unsigned b = 0; b < 65536; ++b) {
        const float f = __bfloat162float(__ushort_as_bfloat16((unsigned short)b));
        CHECK(fb(f) == b << 16, "bf2f bits %04x", b);  // exact, NaN payloads kept
        const double v = ref_b(b);
        if (v != v) {
            CHECK(f != f && __bfloat16_as_ushort(__float2bfloat16(f)) == 0x7fffu, "bf16 NaN %04x", b);
            continue;
        }
        CHECK((double)f == v, "bf2f value %04x", b);
        CHECK(__bfloat16_as_ushort(__float2bfloat16(f)) == b && __bfloat16_as_ushort(__float2bfloat16_rz(f)) == b, "bf roundtrip %04x", b);
        // constructed ties: exactly halfway to the next pattern (same sign), and one ulp around
        if ((b & 0x7fffu) < 0x7f80u) {
            const float tie = bf((b << 16) | 0x8000u);
            const unsigned next = b + 1, even = (b & 1) ? next : b;
            CHECK(__bfloat16_as_ushort(__float2bfloat16_rn(tie)) == even, "bf tie %04x -> %04x", b, __bfloat16_as_ushort(__float2bfloat16_rn(tie)));
            CHECK(__bfloat16_as_ushort(__float2bfloat16(bf((b << 16) | 0x8001u))) == next, "bf above tie %04x", b);
            CHECK(__bfloat16_as_ushort(__float2bfloat16(bf((b << 16) | 0x7fffu))) == b, "bf below tie %04x", b);
            CHECK(__bfloat16_as_ushort(__float2bfloat16_rz(tie)) == b, "bf rz %04x", b);
            CHECK(__bfloat16_as_ushort(__float2bfloat16(tie)) == ref_f2b(tie), "bf ref %04x", b);
        }
    }
    CHECK(__bfloat16_as_ushort(__float2bfloat16(NAN)) == 0x7fffu && __bfloat16_as_ushort(__float2bfloat16(-NAN)) == 0x7fffu, "bf NaN");
    CHECK(__bfloat16_as_ushort(__float2bfloat16(3.4028235e38f)) == 0x7f80u && __bfloat16_as_ushort(__float2bfloat16_rz(3.4028235e38f)) == 0x7f7fu, "bf overflow");
    // arithmetic vs reference (exact double results for mul; sums via the table reference)
    for (int k = 0; k < 300000; ++k) {
        const unsigned a = rnd() & 0xffffu, b = (k & 1) ? ((rnd() & 0x807fu) | ((a & 0x7f80u) ^ ((rnd() % 4) << 7))) : rnd() & 0xffffu;
        const double x = ref_b(a), y = ref_b(b);
        const __nv_bfloat16 ba = __ushort_as_bfloat16((unsigned short)a), bb = __ushort_as_bfloat16((unsigned short)b);
        if (x != x || y != y) { CHECK(__bfloat16_as_ushort(__hadd(ba, bb)) == 0x7fffu, "bf NaN add"); continue; }
        if (fabs(x) == INFINITY || fabs(y) == INFINITY) continue;
        const double p = x * y;  // exact (16 significant bits, exponent in range)
        CHECK(__bfloat16_as_ushort(__hmul(ba, bb)) == (p == 0 ? (signbit(x) != signbit(y) ? 0x8000u : 0u) : ref_f2b(p)), "bf mul %04x %04x", a, b);
        // sum: exact when the exponents are within 40 (the generated pairs are); else skip
        const double s = x + y;
        if (fabs(x) < 1e-300 || fabs(y) < 1e-300 || fabs(log2(fabs(x)) - log2(fabs(y))) < 40) {
            const unsigned want = s == 0 ? ((signbit(x) && signbit(y)) ? 0x8000u : 0u) : ref_f2b(s);
            CHECK(__bfloat16_as_ushort(__hadd(ba, bb)) == want && __bfloat16_as_ushort(ba + bb) == want, "bf add %04x %04x", a, b);
        }
    }
    const __nv_bfloat162 v = __floats2bfloat162_rn(1.5f, -3.0f);
    const float2 w = __bfloat1622float2(v);
    CHECK(w.x == 1.5f && w.y == -3.0f && __low2float(v) == 1.5f && __high2float(v) == -3.0f && __bfloat16_as_ushort(__low2bfloat16(v)) == 0x3fc0u && __bfloat16_as_ushort(__high2bfloat16(v)) == 0xc040u, "bf162");
    const float2 w2 = __bfloat1622float2(__hfma2(v, v, v));
    CHECK(w2.x == 3.75f && w2.y == 6.0f, "bf hfma2");
    // fma rounds once: a*b = 1.5 + 2^-7 + 2^-8 is a bf16 tie; a tiny c decides it (a double
    // rounding through binary64 would lose c and round the tie to even).
    {
        const __nv_bfloat16 fa = __float2bfloat16(1.0f + ldexpf(1, -7)), fb2 = __float2bfloat16(1.5f);
        const float lo = 1.5f + ldexpf(1, -7), hi = 1.5f + ldexpf(1, -6);
        CHECK(__bfloat162float(__hfma(fa, fb2, __float2bfloat16(-ldexpf(1, -100)))) == lo, "bf fma single rounding (below tie)");
        CHECK(__bfloat162float(__hfma(fa, fb2, __float2bfloat16(ldexpf(1, -100)))) == hi, "bf fma single rounding (above tie)");
        CHECK(__bfloat162float(__hfma(fa, fb2, __float2bfloat16(0.0f))) == hi, "bf fma exact tie -> even");
        CHECK(__bfloat162float(__hmul(fa, fb2)) == hi, "bf mul tie -> even");
    }
    printf("bf16: %ld checks\n", g_checks - n0);
}

static void test_integer() {
    long n0 = g_checks;
    // __byte_perm: every selector nibble value (0..15) in every position, several x/y.
    const unsigned xs[4][2] = {{0x03020100u, 0x07060504u}, {0x80ff7f01u, 0xc3a5005au}, {0xdeadbeefu, 0x01234567u}, {0u, 0xffffffffu}};
    for (int t = 0; t < 4; ++t)
        for (unsigned s = 0; s < 65536; ++s) {
            const unsigned x = xs[t][0], y = xs[t][1];
            unsigned char in[8];
            for (int i = 0; i < 4; ++i) { in[i] = (unsigned char)(x >> (8 * i)); in[4 + i] = (unsigned char)(y >> (8 * i)); }
            unsigned want = 0;
            for (int n = 0; n < 4; ++n) {
                const unsigned nib = (s >> (4 * n)) & 15u;
                unsigned char byte = in[nib & 7u];
                if (nib >= 8) byte = (byte >= 128) ? 255 : 0;  // PTX prmt: sign replicate
                want |= (unsigned)byte << (8 * n);
            }
            CHECK(__byte_perm(x, y, s | (rnd() << 16)) == want, "byte_perm %08x %08x %04x", x, y, s);
        }
    CHECK(__byte_perm(0x33221100u, 0x77665544u, 0x3210u) == 0x33221100u && __byte_perm(0x33221100u, 0x77665544u, 0x7654u) == 0x77665544u, "byte_perm identity");
    for (int k = 0; k < 200000; ++k) {
        const unsigned a = rnd(), b = rnd(), c = rnd();
        signed char sa[4], sb[4]; unsigned char ua[4], ub[4];
        memcpy(sa, &a, 4); memcpy(sb, &b, 4); memcpy(ua, &a, 4); memcpy(ub, &b, 4);
        long long sdot = (int)c; unsigned long long udot = c;
        unsigned vsub = 0, vadd = 0, vss = 0, vas = 0, vad = 0, veq = 0;
        for (int i = 0; i < 4; ++i) {
            sdot += sa[i] * sb[i]; udot += ua[i] * ub[i];
            vsub |= (unsigned)(unsigned char)(ua[i] - ub[i]) << (8 * i);
            vadd |= (unsigned)(unsigned char)(ua[i] + ub[i]) << (8 * i);
            int d = sa[i] - sb[i]; d = d < -128 ? -128 : d > 127 ? 127 : d; vss |= (unsigned)(unsigned char)d << (8 * i);
            int e = sa[i] + sb[i]; e = e < -128 ? -128 : e > 127 ? 127 : e; vas |= (unsigned)(unsigned char)e << (8 * i);
            vad |= (unsigned)(ua[i] > ub[i] ? ua[i] - ub[i] : ub[i] - ua[i]) << (8 * i);
            veq |= (ua[i] == ub[i] ? 0xffu : 0u) << (8 * i);
        }
        CHECK(__dp4a((int)a, (int)b, (int)c) == (int)(unsigned)(unsigned long long)sdot, "dp4a s");
        CHECK(__dp4a(a, b, c) == (unsigned)udot, "dp4a u");
        char4 ca; uchar4 cu; memcpy(&ca, &a, 4); memcpy(&cu, &a, 4);
        char4 cb; uchar4 cub; memcpy(&cb, &b, 4); memcpy(&cub, &b, 4);
        CHECK(__dp4a(ca, cb, (int)c) == __dp4a((int)a, (int)b, (int)c) && __dp4a(cu, cub, c) == __dp4a(a, b, c), "dp4a vec");
        CHECK(__vsub4(a, b) == vsub && __vadd4(a, b) == vadd && __vsubss4(a, b) == vss && __vaddss4(a, b) == vas, "vsub4/vadd4/ss");
        CHECK(__vabsdiffu4(a, b) == vad && __vcmpeq4(a, b) == veq && __vcmpeq4(a, a) == 0xffffffffu, "vabsdiff/vcmpeq");
        const long long lo = (long long)(short)a * (signed char)b + (long long)(short)(a >> 16) * (signed char)(b >> 8) + (int)c;
        CHECK(__dp2a_lo((int)a, (int)b, (int)c) == (int)(unsigned)(unsigned long long)lo, "dp2a_lo");
        const long long hi = (long long)(short)a * (signed char)(b >> 16) + (long long)(short)(a >> 16) * (signed char)(b >> 24) + (int)c;
        CHECK(__dp2a_hi((int)a, (int)b, (int)c) == (int)(unsigned)(unsigned long long)hi, "dp2a_hi");
        // bit intrinsics vs loops
        int pc = 0, lz = 0, ff = 0; unsigned rev = 0;
        for (int i = 0; i < 32; ++i) { pc += (a >> i) & 1; rev |= ((a >> i) & 1u) << (31 - i); }
        for (int i = 31; i >= 0 && !((a >> i) & 1); --i) ++lz;
        for (int i = 0; i < 32; ++i) if ((a >> i) & 1) { ff = i + 1; break; }
        CHECK(__popc(a) == pc && __clz((int)a) == lz && __ffs((int)a) == ff && __brev(a) == rev, "bits %08x", a);
        const unsigned long long a64 = ((unsigned long long)a << 32) | b;
        unsigned long long rev64 = 0; int pc64 = 0;
        for (int i = 0; i < 64; ++i) { rev64 |= ((a64 >> i) & 1ull) << (63 - i); pc64 += (int)((a64 >> i) & 1u); }
        CHECK(__brevll(a64) == rev64 && __popcll(a64) == pc64, "bits64");
        const unsigned sh = c & 63u;
        unsigned long long cat = ((unsigned long long)b << 32) | a;  // hi = b, lo = a
        CHECK(__funnelshift_l(a, b, sh) == (unsigned)((cat << (sh & 31)) >> 32) && __funnelshift_r(a, b, sh) == (unsigned)(cat >> (sh & 31)), "funnelshift");
        const unsigned shc = sh > 32 ? 32 : sh;
        CHECK(__funnelshift_lc(a, b, sh) == (unsigned)(shc == 32 ? a : (unsigned)((cat << shc) >> 32)) && __funnelshift_rc(a, b, sh) == (unsigned)(shc == 32 ? b : (unsigned)(cat >> shc)), "funnelshift clamp %u", sh);
        CHECK(__umulhi(a, b) == (unsigned)(((unsigned long long)a * b) >> 32) && __mulhi((int)a, (int)b) == (int)(((long long)(int)a * (int)b) >> 32), "mulhi");
        unsigned long long x = a64, y = ((unsigned long long)c << 32) | a, hi64 = 0;
        {   // schoolbook 32x32 pieces
            const unsigned long long x0 = x & 0xffffffffu, x1 = x >> 32, y0 = y & 0xffffffffu, y1 = y >> 32;
            const unsigned long long p00 = x0 * y0, p01 = x0 * y1, p10 = x1 * y0, p11 = x1 * y1;
            const unsigned long long mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
            hi64 = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
        }
        CHECK(__umul64hi(x, y) == hi64, "umul64hi");
        CHECK(__sad((int)a, (int)b, c) == c + (unsigned)((int)a > (int)b ? (long long)(int)a - (int)b : (long long)(int)b - (int)a), "sad");
    }
    CHECK(__popc(0u) == 0 && __popc(0xffffffffu) == 32 && __popcll(~0ull) == 64 && __popcll(0ull) == 0, "popc edges");
    CHECK(__clz(0) == 32 && __clz(-1) == 0 && __clz(1) == 31 && __clzll(0) == 64 && __clzll(-1) == 0 && __clzll(1) == 63, "clz edges");
    CHECK(__ffs(0) == 0 && __ffs(-1) == 1 && __ffs((int)0x80000000u) == 32 && __ffsll(0) == 0 && __ffsll((long long)0x8000000000000000ull) == 64, "ffs edges");
    CHECK(__brev(0u) == 0 && __brev(~0u) == ~0u && __brev(1u) == 0x80000000u && __brevll(1ull) == 0x8000000000000000ull && __brevll(~0ull) == ~0ull, "brev edges");
    CHECK(__vsub4(0x00010203u, 0x01010101u) == 0xff000102u && __vsubss4(0x80u, 0x01u) == 0x80u && __vaddss4(0x7fu, 0x01u) == 0x7fu, "vsub4 wrap/sat");
    CHECK(__dp4a(0x7f7f7f7f, 0x7f7f7f7f, 0x7fffffff) == (int)(0x7fffffffu + 4u * 127u * 127u), "dp4a wraps");
    CHECK(__dp4a((int)0x80808080u, (int)0x80808080u, 0) == 4 * 128 * 128 && __dp4a(0xffffffffu, 0xffffffffu, 0u) == 4u * 255u * 255u, "dp4a extremes");
    printf("integer intrinsics: %ld checks\n", g_checks - n0);
}

static void test_float_misc() {
    long n0 = g_checks;
    // min/max: CUDA math_functions.hpp overloads; mixed signedness compares as unsigned.
    CHECK((same<decltype(min(-1, 1u)), unsigned int>::v) && min(-1, 1u) == 1u && max(-1, 1u) == 0xffffffffu, "min/max int/unsigned");
    CHECK((same<decltype(min(1u, -1)), unsigned int>::v) && min(1u, -1) == 1u, "min unsigned/int");
    CHECK((same<decltype(max(-1ll, 1ull)), unsigned long long>::v) && max(-1ll, 1ull) == ~0ull && min(-1ll, 1ull) == 1ull, "min/max ll/ull");
    CHECK((same<decltype(min(1, 2)), int>::v) && min(-3, 2) == -3 && max(-3, 2) == 2 && min(-3ll, 2ll) == -3ll, "min/max int");
    CHECK((same<decltype(min(1.0f, 2.0f)), float>::v) && min(1.0f, NAN) == 1.0f && max(NAN, 2.0f) == 2.0f && (same<decltype(max(1.0f, 2.0)), double>::v), "min/max float");
    // float -> int (cvt.rni/rzi/rmi/rpi, saturating, NaN -> 0)
    CHECK(__float2int_rn(2.5f) == 2 && __float2int_rn(3.5f) == 4 && __float2int_rn(-2.5f) == -2 && __float2int_rn(-3.5f) == -4, "f2i rn ties");
    CHECK(__float2int_rz(-2.7f) == -2 && __float2int_rd(-2.1f) == -3 && __float2int_ru(2.1f) == 3 && __float2int_rd(2.9f) == 2, "f2i modes");
    CHECK(__float2int_rn(NAN) == 0 && __float2int_rn(3e9f) == 2147483647 && __float2int_rn(-3e9f) == (-2147483647 - 1) && __float2int_rz(INFINITY) == 2147483647, "f2i saturate");
    CHECK(__float2uint_rn(-1.0f) == 0u && __float2uint_rn(5e9f) == 0xffffffffu && __float2uint_rn(NAN) == 0u && __float2uint_rn(2.5f) == 2u, "f2u");
    CHECK(__float2ll_rn(1e19f) == 0x7fffffffffffffffll && __float2ll_rn(-1e19f) == (-0x7fffffffffffffffll - 1) && __float2ll_rn(2.5f) == 2 && __float2ll_rn(NAN) == 0, "f2ll");
    CHECK(__int2float_rn(16777217) == 16777216.0f && __int2float_rn(16777219) == 16777220.0f && __int2float_rz(16777219) == 16777218.0f && __uint2float_rn(0xffffffffu) == 4294967296.0f, "i2f");
    CHECK(__int_as_float(0x3f800000) == 1.0f && __float_as_int(-2.0f) == (int)0xc0000000u && __float_as_uint(1.0f) == 0x3f800000u && __uint_as_float(0x40000000u) == 2.0f, "as");
    CHECK(__double_as_longlong(1.0) == 0x3ff0000000000000ll && __longlong_as_double(0x4000000000000000ll) == 2.0 && __hiloint2double(0x3ff00000, 0) == 1.0, "as64");
    // __saturatef (libdevice: NaN -> 0, clamp to [+0, 1])
    CHECK(__saturatef(NAN) == 0.0f && __saturatef(-1.0f) == 0.0f && !signbit(__saturatef(-0.0f)) && __saturatef(2.0f) == 1.0f && __saturatef(0.25f) == 0.25f, "saturatef");
    CHECK(__fmaf_rn(1.0f + ldexpf(1, -23), 1.0f - ldexpf(1, -23), -1.0f) == -ldexpf(1, -46), "fmaf exact");
    // Directed f32 ops: r is a float; check the bracketing property exactly.
    for (int k = 0; k < 200000; ++k) {
        const float a = ldexpf((float)(int)(rnd() % 16777216u) * ((rnd() & 1) ? 1.0f : -1.0f), (int)(rnd() % 40) - 20);
        const float b = ldexpf((float)(int)(rnd() % 16777216u) * ((rnd() & 1) ? 1.0f : -1.0f), (int)(rnd() % 40) - 20);
        // exact sum in units of 2^-64 (all operands are multiples of 2^-44; |.| < 2^44)
        const __int128 A = (__int128)ldexp((double)a, 44), B = (__int128)ldexp((double)b, 44), S = A + B;
        const float rz = __fadd_rz(a, b), ru = __fadd_ru(a, b), rd = __fadd_rd(a, b);
        const __int128 RZ = (__int128)ldexp((double)rz, 44), RU = (__int128)ldexp((double)ru, 44), RD = (__int128)ldexp((double)rd, 44);
        const __int128 RDn = (__int128)ldexp((double)nextafterf(rd, INFINITY), 44), RUp = (__int128)ldexp((double)nextafterf(ru, -INFINITY), 44);
        CHECK(RD <= S && S < RDn && RU >= S && S > RUp, "fadd_rd/ru %a %a", a, b);
        CHECK((S >= 0 ? RZ == RD : RZ == RU), "fadd_rz %a %a", a, b);
        CHECK(__fadd_rn(a, b) == a + b, "fadd_rn");
        const double p = (double)a * (double)b;  // exact
        const float mz = __fmul_rz(a, b), mu = __fmul_ru(a, b), md = __fmul_rd(a, b);
        CHECK(md <= p && (double)nextafterf(md, INFINITY) > p && mu >= p && (double)nextafterf(mu, -INFINITY) < p && (p >= 0 ? mz == md : mz == mu), "fmul dir %a %a", a, b);
        if (b != 0) {
            const float qz = __fdiv_rz(a, b), qd = __fdiv_rd(a, b), qu = __fdiv_ru(a, b);
            // sign of (a/b - q) == sign((a - q*b) / b); a - q*b evaluated exactly enough by fma's single rounding
            auto below = [&](float q) { const double r = fma(-(double)q, (double)b, (double)a); return b > 0 ? r >= 0 : r <= 0; };  // q <= a/b
            auto above = [&](float q) { const double r = fma(-(double)q, (double)b, (double)a); return b > 0 ? r <= 0 : r >= 0; };  // q >= a/b
            const bool exact = fma(-(double)qd, (double)b, (double)a) == 0.0;
            CHECK(!exact || qu == qd, "fdiv exact %a %a", a, b);
            CHECK(above(qu) && below(qd) && (qu == qd || nextafterf(qd, INFINITY) == qu), "fdiv ru/rd bracket %a %a", a, b);
            CHECK((a / b >= 0) ? qz == qd : qz == qu, "fdiv_rz %a %a", a, b);
        }
    }
    // ldg & co are loads
    const float4 v4 = make_float4(1, 2, 3, 4);
    CHECK(__ldg(&v4).w == 4.0f && __ldcs(&v4).x == 1.0f, "ldg");
    __half hv = __float2half(3.0f); __stcg(&hv, __float2half(5.0f));
    CHECK(__half2float(__ldg(&hv)) == 5.0f, "stcg/ldg half");
    const dim3 d3(4); const dim3 d3b = make_uint3(1, 2, 3); const uint3 u3 = d3;
    CHECK(d3.x == 4 && d3.y == 1 && d3.z == 1 && d3b.z == 3 && u3.x == 4, "dim3");
    printf("float / misc: %ld checks\n", g_checks - n0);
}

static void test_alignment() {
    long n0 = g_checks;
#define AL(T, A, S) CHECK(alignof(T) == (A) && sizeof(T) == (S), #T " align %zu size %zu", alignof(T), sizeof(T))
    // CUDA C Programming Guide, "Alignment Requirements" (64-bit Linux)
    AL(char1, 1, 1); AL(char2, 2, 2); AL(char3, 1, 3); AL(char4, 4, 4);
    AL(uchar1, 1, 1); AL(uchar2, 2, 2); AL(uchar3, 1, 3); AL(uchar4, 4, 4);
    AL(short1, 2, 2); AL(short2, 4, 4); AL(short3, 2, 6); AL(short4, 8, 8);
    AL(ushort1, 2, 2); AL(ushort2, 4, 4); AL(ushort3, 2, 6); AL(ushort4, 8, 8);
    AL(int1, 4, 4); AL(int2, 8, 8); AL(int3, 4, 12); AL(int4, 16, 16);
    AL(uint1, 4, 4); AL(uint2, 8, 8); AL(uint3, 4, 12); AL(uint4, 16, 16);
    AL(long1, 8, 8); AL(long2, 16, 16); AL(long3, 8, 24); AL(long4, 16, 32);
    AL(ulong1, 8, 8); AL(ulong2, 16, 16); AL(ulong3, 8, 24); AL(ulong4, 16, 32);
    AL(longlong1, 8, 8); AL(longlong2, 16, 16); AL(longlong3, 8, 24); AL(longlong4, 16, 32);
    AL(ulonglong1, 8, 8); AL(ulonglong2, 16, 16); AL(ulonglong3, 8, 24); AL(ulonglong4, 16, 32);
    AL(float1, 4, 4); AL(float2, 8, 8); AL(float3, 4, 12); AL(float4, 16, 16);
    AL(double1, 8, 8); AL(double2, 16, 16); AL(double3, 8, 24); AL(double4, 16, 32);
    AL(__half, 2, 2); AL(__half2, 4, 4); AL(__nv_bfloat16, 2, 2); AL(__nv_bfloat162, 4, 4);
    AL(dim3, 4, 12);
#undef AL
    const char4 c4 = make_char4(-1, 2, -3, 4); const ushort2 u2 = make_ushort2(1, 65535);
    CHECK(c4.x == -1 && c4.w == 4 && u2.y == 65535, "make_");
    printf("alignment: %ld checks\n", g_checks - n0);
}

// Compile-only: expressions engine kernels write must resolve as under nvcc.
static float compile_shapes() {
    half a = 1.5f, b = __float2half(2.0f);
    half2 h2 = {a, b};
    h2 += h2;
    const float f = a;                  // implicit exact conversion
    const float g = (float)b * 2.0f;    // explicit conversion then float arithmetic
    nv_bfloat16 c = 0.5f;
    c = c * c + c;
    nv_bfloat162 c2 = make_bfloat162(c, c);
    const float2 c2f = __bfloat1622float2(c2);
    __half zero = 0;                    // from int
    return f + g + (float)c + c2f.x + (float)zero + __low2float(h2) + (float)(a > b);
}

int main() {
    test_half_conversions();
    test_half_arith();
    test_bf16();
    test_integer();
    test_float_misc();
    test_alignment();
    CHECK(compile_shapes() == 1.5f + 4.0f + 0.75f + 0.75f + 0.0f + 3.0f + 0.0f, "shapes");
    printf("%ld checks, %ld failed\n", g_checks, g_fail);
    if (g_fail) { printf("FAILED\n"); return 1; }
    printf("ALL OK\n");
    return 0;
}
