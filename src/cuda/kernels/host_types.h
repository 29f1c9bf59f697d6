// CUDA device-side types and intrinsics for the host tier (the CUDA-on-CPU shim): __half,
// __nv_bfloat16, the vector types, integer SIMD/bit intrinsics, float intrinsics, __ldg & co.,
// min/max, so that engine kernels (llama.cpp's ggml-cuda, ...) compile unchanged with the host
// C++ compiler and compute the values the device computes.
//
// Prepended before host_shim.h by the driver. Self-contained: only <math.h>, <stdint.h>,
// <string.h>, <stddef.h>. It defines no execution-model names (threadIdx/blockIdx/blockDim/
// gridDim, __syncthreads, __shfl_*, atomics, __global__/__shared__): host_shim.h owns those.
// Internal helpers are prefixed `ntt_` (common.cuh uses `nt_`).
//
// Semantics follow the CUDA Math API reference (sections "Half Precision Intrinsics",
// "Bfloat16 Precision Intrinsics", "Integer Intrinsics", "Single Precision Intrinsics",
// "Type Casting Intrinsics"), cuda_fp16.hpp / cuda_bf16.hpp and the PTX ISA instructions they
// compile to (cvt, prmt, dp4a, add/mul/fma.f16, ...). Exact (bit-for-bit) unless a comment says
// "approximate":
//   * f16/bf16 conversions and arithmetic: exact, correctly rounded (RNE unless named), with
//     subnormals; NaN results are the canonical NaN 0x7fff that cvt/add.f16 produce on the device.
//   * __hdiv/__h2div, hsqrt: correctly rounded here; the device sequence (rcp.approx + one
//     correction step) is documented as round-to-nearest and agrees except possibly in rare ties.
//   * __expf/__logf/__sinf/__cosf/__powf/__exp10f/__log2f/__log10f/__tanf, rsqrtf, hexp/hlog/
//     hrsqrt/hrcp, __fdividef: APPROXIMATE on the device (MUFU, ~2 ulp); here computed from the libm
//     functions along the same formula (e.g. __expf(x) = exp2(x * log2(e)) with the product
//     rounded to f32 as ex2.approx sees it). Not bit-exact against a GPU.
//   * Plain f32 arithmetic (a + b, __fadd_rn, ...) is IEEE on both sides; NaN *payloads* of f32
//     results are the host's (the device returns 0x7fffffff).
#pragma once
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <stddef.h>

// ---------------------------------------------------------------------------------------------
// Qualifier macros (host_shim.h defines the same ones; identical redefinitions are legal).
#ifndef __host__
#define __host__
#endif
#ifndef __device__
#define __device__
#endif
#ifndef __forceinline__
#define __forceinline__ inline
#endif
#ifndef __align__
// GNU attribute rather than alignas: it is accepted everywhere nvcc accepts __align__
// (struct tag position, and after `static` in a __shared__ variable declaration).
#define __align__(n) __attribute__((aligned(n)))
#endif
#ifndef __constant__
// File-scope `__constant__ float tbl[4] = {...};` is an ordinary (mutable) global here.
#define __constant__
#endif
#ifndef __CUDACC__
// Not defined on purpose: sources that test __CUDACC__ / __CUDA_ARCH__ take their host paths.
#endif

// math_constants.h subset
#ifndef CUDART_INF_F
#define CUDART_INF_F __builtin_huge_valf()
#define CUDART_NAN_F __builtin_nanf("")
#define CUDART_INF __builtin_huge_val()
#define CUDART_NAN __builtin_nan("")
#define CUDART_PI_F 3.141592654f
#define CUDART_PI 3.1415926535897931e+0
#define CUDART_ZERO_F 0.0f
#define CUDART_ONE_F 1.0f
#define CUDART_MAX_NORMAL_F 3.40282347e+38f
#define CUDART_MIN_DENORM_F 1.40129846e-45f
#endif
#ifndef INFINITY
#define INFINITY __builtin_huge_valf()
#endif

// ---------------------------------------------------------------------------------------------
// Bit casts and the generic exact rounding machinery.
static inline uint32_t ntt_fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float ntt_bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint64_t ntt_dbits(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
static inline double ntt_bitsd(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }

enum { NTT_RN = 0, NTT_RZ = 1, NTT_RU = 2, NTT_RD = 3 };

// Rounds the double v to the binary format with P significand bits (hidden bit included) and
// EB exponent bits, in mode `mode`; returns the format's bit pattern (sign at bit P-1+EB).
// Exact: one rounding of v. Subnormal targets are rounded on their fixed grid. Overflow gives
// Inf or the largest finite value as IEEE 754 §7.4 prescribes per mode. NaN gives the canonical
// NaN with every significand bit set (0x7fff for f16/bf16, 0x7fffffff for f32: what cvt.rn.f16.f32,
// cvt.rn.bf16.f32 and the f32 ALU return on NVIDIA GPUs).
static inline uint32_t ntt_round(double v, int P, int EB, int mode) {
    const uint64_t b = ntt_dbits(v);
    const uint32_t neg = (uint32_t)(b >> 63);
    const uint32_t sign = neg << (P - 1 + EB);
    const uint32_t expmask = (1u << EB) - 1u;
    const uint32_t inf = expmask << (P - 1);
    const uint64_t a = b & 0x7fffffffffffffffull;
    if (a > 0x7ff0000000000000ull) return inf | ((1u << (P - 1)) - 1u);
    if (a == 0x7ff0000000000000ull) return sign | inf;
    if (a == 0) return sign;
    const int bias = (int)(expmask >> 1);
    const int emin = 1 - bias;
    const int de = (int)(a >> 52);
    uint64_t m = a & 0xfffffffffffffull;
    int e, lg;
    if (de == 0) { e = -1074; lg = 63 - __builtin_clzll(m) - 1074; }
    else { m |= 1ull << 52; e = de - 1075; lg = de - 1023; }
    const uint32_t maxfin = inf - 1u;
    if (lg > bias) {  // |v| >= 2^(emax+1): overflows in every mode
        if (mode == NTT_RN) return sign | inf;
        if (mode == NTT_RZ) return sign | maxfin;
        if (mode == NTT_RU) return sign | (neg ? maxfin : inf);
        return sign | (neg ? inf : maxfin);
    }
    const int le = lg < emin ? emin : lg;
    const int q = le - (P - 1);  // exponent of the target ulp at |v|
    const int shift = q - e;
    uint64_t keep;
    if (shift <= 0) {
        keep = m << (-shift);
    } else {
        uint64_t rem, half;
        if (shift >= 64) { keep = 0; rem = 1; half = 2; }  // below half an ulp, inexact
        else { keep = m >> shift; rem = m & ((1ull << shift) - 1u); half = 1ull << (shift - 1); }
        bool up;
        if (mode == NTT_RN) up = rem > half || (rem == half && (keep & 1u));
        else if (mode == NTT_RZ) up = false;
        else if (mode == NTT_RU) up = rem != 0 && !neg;
        else up = rem != 0 && neg;
        keep += up ? 1u : 0u;
    }
    // Normal: ((le + bias - 1) << (P-1)) + keep (keep carries the hidden bit; a carry to 2^P bumps
    // the exponent). Subnormal range: le + bias - 1 == 0, and keep == 2^(P-1) is the smallest normal.
    const uint32_t mag = ((uint32_t)(le + bias - 1) << (P - 1)) + (uint32_t)keep;
    if (mag >= inf) {
        if (mode == NTT_RN) return sign | inf;
        if (mode == NTT_RZ) return sign | maxfin;
        if (mode == NTT_RU) return sign | (neg ? maxfin : inf);
        return sign | (neg ? inf : maxfin);
    }
    return sign | mag;
}

// Round-to-odd of the exact value s + err (|err| <= ulp(s)/2, e.g. from TwoSum): a double
// from which one further rounding to any format with <= 51 significand bits, in any mode, is
// the correct rounding of s + err (Boldo & Melquiond, "Emulation of FMA and correctly rounded
// sums: proved algorithms using rounding to odd", IEEE TC 2008).
static inline double ntt_odd(double s, double err) {
    if (err == 0.0 || !(s - s == 0.0)) return s;
    uint64_t b = ntt_dbits(s);
    if (b & 1u) return s;
    const bool away = (err > 0.0) == (s > 0.0);
    return ntt_bitsd(away ? b + 1u : b - 1u);
}
// Knuth's TwoSum: s + err == a + b exactly (no overflow).
static inline double ntt_two_sum(double a, double b, double* err) {
    const double s = a + b;
    const double bb = s - a;
    *err = (a - (s - bb)) + (b - bb);
    return s;
}
// Exact a*b + c of operands whose product is exact in double (f16, bf16, f32 inputs), rounded
// once to (P, EB) in `mode`.
static inline uint32_t ntt_fma_round(double a, double b, double c, int P, int EB, int mode) {
    const double p = a * b;  // exact: at most 48 significant bits, no over/underflow
    double err;
    const double s = ntt_two_sum(p, c, &err);
    if (s != s) return ntt_round(s, P, EB, mode);
    if (s == 0.0 && err == 0.0) {
        // Exact zero: IEEE 754 §6.3 sign rules (x + (-x) is +0, or -0 when rounding down).
        if (p == 0.0 && c == 0.0 && __builtin_signbit(p) == __builtin_signbit(c)) return ntt_round(c, P, EB, mode);
        return ntt_round(mode == NTT_RD ? -0.0 : 0.0, P, EB, mode);
    }
    return ntt_round(ntt_odd(s, err), P, EB, mode);
}

// ---------------------------------------------------------------------------------------------
// dim3 / uint3 (the shim may provide them instead: it tests NT_HAVE_DIM3).
#ifndef NT_HAVE_DIM3
#define NT_HAVE_DIM3
struct uint3 { unsigned int x, y, z; };
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};
static inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) { uint3 r; r.x = x; r.y = y; r.z = z; return r; }
#endif

// ---------------------------------------------------------------------------------------------
// Vector types: CUDA C Programming Guide, "Built-in Vector Types", table "Alignment
// Requirements" (LP64: long is 8 bytes).
#define NTT_V1(T, B, A) struct __attribute__((aligned(A))) T { B x; }; \
    static inline T make_##T(B x) { T r; r.x = x; return r; }
#define NTT_V2(T, B, A) struct __attribute__((aligned(A))) T { B x, y; }; \
    static inline T make_##T(B x, B y) { T r; r.x = x; r.y = y; return r; }
#define NTT_V3(T, B, A) struct __attribute__((aligned(A))) T { B x, y, z; }; \
    static inline T make_##T(B x, B y, B z) { T r; r.x = x; r.y = y; r.z = z; return r; }
#define NTT_V4(T, B, A) struct __attribute__((aligned(A))) T { B x, y, z, w; }; \
    static inline T make_##T(B x, B y, B z, B w) { T r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }
NTT_V1(char1, signed char, 1) NTT_V2(char2, signed char, 2) NTT_V3(char3, signed char, 1) NTT_V4(char4, signed char, 4)
NTT_V1(uchar1, unsigned char, 1) NTT_V2(uchar2, unsigned char, 2) NTT_V3(uchar3, unsigned char, 1) NTT_V4(uchar4, unsigned char, 4)
NTT_V1(short1, short, 2) NTT_V2(short2, short, 4) NTT_V3(short3, short, 2) NTT_V4(short4, short, 8)
NTT_V1(ushort1, unsigned short, 2) NTT_V2(ushort2, unsigned short, 4) NTT_V3(ushort3, unsigned short, 2) NTT_V4(ushort4, unsigned short, 8)
NTT_V1(int1, int, 4) NTT_V2(int2, int, 8) NTT_V3(int3, int, 4) NTT_V4(int4, int, 16)
NTT_V1(uint1, unsigned int, 4) NTT_V2(uint2, unsigned int, 8) NTT_V4(uint4, unsigned int, 16)
NTT_V1(long1, long, 8) NTT_V2(long2, long, 16) NTT_V3(long3, long, 8) NTT_V4(long4, long, 16)
NTT_V1(ulong1, unsigned long, 8) NTT_V2(ulong2, unsigned long, 16) NTT_V3(ulong3, unsigned long, 8) NTT_V4(ulong4, unsigned long, 16)
NTT_V1(longlong1, long long, 8) NTT_V2(longlong2, long long, 16) NTT_V3(longlong3, long long, 8) NTT_V4(longlong4, long long, 16)
NTT_V1(ulonglong1, unsigned long long, 8) NTT_V2(ulonglong2, unsigned long long, 16) NTT_V3(ulonglong3, unsigned long long, 8) NTT_V4(ulonglong4, unsigned long long, 16)
NTT_V1(float1, float, 4) NTT_V2(float2, float, 8) NTT_V3(float3, float, 4) NTT_V4(float4, float, 16)
NTT_V1(double1, double, 8) NTT_V2(double2, double, 16) NTT_V3(double3, double, 8) NTT_V4(double4, double, 16)
#undef NTT_V1
#undef NTT_V2
#undef NTT_V3
#undef NTT_V4

// ---------------------------------------------------------------------------------------------
// __half (cuda_fp16.hpp layout: one unsigned short `__x`, 2-byte aligned; public here).
static inline unsigned short ntt_f2h(float f, int mode) {
    return (unsigned short)ntt_round((double)f, 11, 5, mode);  // float -> double is exact
}
// f16 bits -> f32, exact (cvt.f32.f16). NaN keeps sign and payload with the quiet bit set (the
// IEEE 754 conversion; cuda_fp16.hpp's host fallback returns 0x7fffffff instead).
static inline float ntt_h2f(unsigned short h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t ex = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (ex == 0x1f) return ntt_bitsf(sign | 0x7f800000u | (man << 13) | (man ? 0x400000u : 0u));
    if (ex == 0) {
        if (man == 0) return ntt_bitsf(sign);
        const int s = __builtin_clz(man) - 21;  // normalize: leading one to bit 10
        return ntt_bitsf(sign | ((uint32_t)(113 - s) << 23) | (((man << s) & 0x3ffu) << 13));
    }
    return ntt_bitsf(sign | ((ex + 112u) << 23) | (man << 13));
}

struct __attribute__((aligned(2))) __half_raw { unsigned short x; };
struct __attribute__((aligned(4))) __half2_raw { unsigned short x, y; };

struct __attribute__((aligned(2))) __half {
    unsigned short __x;
    __half() = default;
    __half(const __half_raw& r) : __x(r.x) {}
    __half& operator=(const __half_raw& r) { __x = r.x; return *this; }
    operator __half_raw() const { __half_raw r; r.x = __x; return r; }
    // !__CUDA_NO_HALF_CONVERSIONS__ set of cuda_fp16.hpp (nvcc): construct from float/double and
    // the integer types (RN), convert to float (exact), to the integer types (RZ, saturating),
    // to bool (nonzero, -0 is false).
    __half(float f) : __x(ntt_f2h(f, NTT_RN)) {}
    __half(double d) : __x((unsigned short)ntt_round(d, 11, 5, NTT_RN)) {}
    __half(short v) : __x(ntt_f2h((float)v, NTT_RN)) {}
    __half(unsigned short v) : __x(ntt_f2h((float)v, NTT_RN)) {}
    __half(int v) : __x((unsigned short)ntt_round((double)v, 11, 5, NTT_RN)) {}
    __half(unsigned int v) : __x((unsigned short)ntt_round((double)v, 11, 5, NTT_RN)) {}
    __half(long long v) : __x((unsigned short)ntt_round((double)v, 11, 5, NTT_RN)) {}  // |v| >= 2^53 is Inf anyway
    __half(unsigned long long v) : __x((unsigned short)ntt_round((double)v, 11, 5, NTT_RN)) {}
    operator float() const { return ntt_h2f(__x); }
    __half& operator=(float f) { __x = ntt_f2h(f, NTT_RN); return *this; }
    __half& operator=(double d) { __x = (unsigned short)ntt_round(d, 11, 5, NTT_RN); return *this; }
    operator short() const;
    operator unsigned short() const;
    operator int() const;
    operator unsigned int() const;
    operator long long() const;
    operator unsigned long long() const;
    operator bool() const { return (__x & 0x7fffu) != 0; }
};
struct __attribute__((aligned(4))) __half2 {
    __half x, y;
    __half2() = default;
    __half2(const __half& a, const __half& b) : x(a), y(b) {}
    __half2(const __half2_raw& r) { x.__x = r.x; y.__x = r.y; }
    __half2& operator=(const __half2_raw& r) { x.__x = r.x; y.__x = r.y; return *this; }
    operator __half2_raw() const { __half2_raw r; r.x = x.__x; r.y = y.__x; return r; }
};
typedef __half half;
typedef __half2 half2;

// Float -> integer conversions with CUDA's cvt semantics: saturate to the destination range,
// NaN -> 0 (PTX ISA, cvt: "for float-to-integer conversions, the result is clamped to the
// destination range by default"; cuda_fp16.hpp's host fallbacks map NaN to 0).
#define NTT_F2I(NAME, T, TMIN, TMAX, RND) \
    static inline T NAME(float f) { \
        if (f != f) return (T)0; \
        const double r = RND((double)f); \
        if (r <= (double)(TMIN)) return (T)(TMIN); \
        if (r >= (double)(TMAX)) return (T)(TMAX); \
        return (T)r; \
    }
#define NTT_D2I(NAME, T, TMIN, TMAX, RND) \
    static inline T NAME(double f) { \
        if (f != f) return (T)0; \
        const double r = RND(f); \
        if (r <= (double)(TMIN)) return (T)(TMIN); \
        if (r >= (double)(TMAX)) return (T)(TMAX); \
        return (T)r; \
    }
NTT_F2I(__float2int_rn, int, -2147483647 - 1, 2147483647, rint)
NTT_F2I(__float2int_rz, int, -2147483647 - 1, 2147483647, trunc)
NTT_F2I(__float2int_rd, int, -2147483647 - 1, 2147483647, floor)
NTT_F2I(__float2int_ru, int, -2147483647 - 1, 2147483647, ceil)
NTT_F2I(__float2uint_rn, unsigned int, 0u, 4294967295u, rint)
NTT_F2I(__float2uint_rz, unsigned int, 0u, 4294967295u, trunc)
NTT_F2I(__float2uint_rd, unsigned int, 0u, 4294967295u, floor)
NTT_F2I(__float2uint_ru, unsigned int, 0u, 4294967295u, ceil)
NTT_F2I(ntt_f2s16_rz, short, -32768, 32767, trunc)
NTT_F2I(ntt_f2u16_rz, unsigned short, 0, 65535, trunc)
NTT_D2I(__double2int_rn, int, -2147483647 - 1, 2147483647, rint)
NTT_D2I(__double2int_rz, int, -2147483647 - 1, 2147483647, trunc)
NTT_D2I(__double2int_rd, int, -2147483647 - 1, 2147483647, floor)
NTT_D2I(__double2int_ru, int, -2147483647 - 1, 2147483647, ceil)
NTT_D2I(__double2uint_rn, unsigned int, 0u, 4294967295u, rint)
NTT_D2I(__double2uint_rz, unsigned int, 0u, 4294967295u, trunc)
#undef NTT_F2I
#undef NTT_D2I
// 64-bit: 2^63 and 2^64 are exact doubles; anything >= them saturates.
#define NTT_F2LL(NAME, ARG, RND) \
    static inline long long NAME(ARG f) { \
        if (f != f) return 0; \
        const double r = RND((double)f); \
        if (r >= 9223372036854775808.0) return 0x7fffffffffffffffll; \
        if (r < -9223372036854775808.0) return -0x7fffffffffffffffll - 1; \
        return (long long)r; \
    }
#define NTT_F2ULL(NAME, ARG, RND) \
    static inline unsigned long long NAME(ARG f) { \
        if (f != f) return 0; \
        const double r = RND((double)f); \
        if (r >= 18446744073709551616.0) return 0xffffffffffffffffull; \
        if (r <= 0.0) return 0; \
        return (unsigned long long)r; \
    }
NTT_F2LL(__float2ll_rn, float, rint) NTT_F2LL(__float2ll_rz, float, trunc)
NTT_F2LL(__float2ll_rd, float, floor) NTT_F2LL(__float2ll_ru, float, ceil)
NTT_F2ULL(__float2ull_rn, float, rint) NTT_F2ULL(__float2ull_rz, float, trunc)
NTT_F2ULL(__float2ull_rd, float, floor) NTT_F2ULL(__float2ull_ru, float, ceil)
NTT_F2LL(__double2ll_rn, double, rint) NTT_F2LL(__double2ll_rz, double, trunc)
NTT_F2ULL(__double2ull_rn, double, rint) NTT_F2ULL(__double2ull_rz, double, trunc)
#undef NTT_F2LL
#undef NTT_F2ULL

inline __half::operator short() const { return ntt_f2s16_rz(ntt_h2f(__x)); }
inline __half::operator unsigned short() const { return ntt_f2u16_rz(ntt_h2f(__x)); }
inline __half::operator int() const { return __float2int_rz(ntt_h2f(__x)); }
inline __half::operator unsigned int() const { return __float2uint_rz(ntt_h2f(__x)); }
inline __half::operator long long() const { return __float2ll_rz(ntt_h2f(__x)); }
inline __half::operator unsigned long long() const { return __float2ull_rz(ntt_h2f(__x)); }

static inline __half ntt_hraw(unsigned int bits) { __half h; h.__x = (unsigned short)bits; return h; }

// Conversions (cvt.rn/rz/rm/rp.f16.f32: exact rounding; NaN -> 0x7fff; Math API: "__float2half:
// converts float number a to half precision in round-to-nearest-even mode").
static inline __half __float2half(float a) { return ntt_hraw(ntt_f2h(a, NTT_RN)); }
static inline __half __float2half_rn(float a) { return ntt_hraw(ntt_f2h(a, NTT_RN)); }
static inline __half __float2half_rz(float a) { return ntt_hraw(ntt_f2h(a, NTT_RZ)); }
static inline __half __float2half_rd(float a) { return ntt_hraw(ntt_f2h(a, NTT_RD)); }
static inline __half __float2half_ru(float a) { return ntt_hraw(ntt_f2h(a, NTT_RU)); }
static inline __half __double2half(double a) { return ntt_hraw(ntt_round(a, 11, 5, NTT_RN)); }
static inline float __half2float(__half a) { return ntt_h2f(a.__x); }
static inline __half __int2half_rn(int i) { return ntt_hraw(ntt_round((double)i, 11, 5, NTT_RN)); }
static inline __half __int2half_rz(int i) { return ntt_hraw(ntt_round((double)i, 11, 5, NTT_RZ)); }
static inline __half __uint2half_rn(unsigned int i) { return ntt_hraw(ntt_round((double)i, 11, 5, NTT_RN)); }
static inline __half __short2half_rn(short i) { return ntt_hraw(ntt_round((double)i, 11, 5, NTT_RN)); }
static inline __half __ushort2half_rn(unsigned short i) { return ntt_hraw(ntt_round((double)i, 11, 5, NTT_RN)); }
static inline __half __ll2half_rn(long long i) { return ntt_hraw(ntt_round((double)i, 11, 5, NTT_RN)); }
static inline int __half2int_rn(__half h) { return __float2int_rn(ntt_h2f(h.__x)); }
static inline int __half2int_rz(__half h) { return __float2int_rz(ntt_h2f(h.__x)); }
static inline int __half2int_rd(__half h) { return __float2int_rd(ntt_h2f(h.__x)); }
static inline int __half2int_ru(__half h) { return __float2int_ru(ntt_h2f(h.__x)); }
static inline unsigned int __half2uint_rn(__half h) { return __float2uint_rn(ntt_h2f(h.__x)); }
static inline unsigned int __half2uint_rz(__half h) { return __float2uint_rz(ntt_h2f(h.__x)); }
static inline short __half2short_rz(__half h) { return ntt_f2s16_rz(ntt_h2f(h.__x)); }
static inline unsigned short __half_as_ushort(__half h) { return h.__x; }
static inline short __half_as_short(__half h) { return (short)h.__x; }
static inline __half __ushort_as_half(unsigned short u) { return ntt_hraw(u); }
static inline __half __short_as_half(short s) { return ntt_hraw((unsigned short)s); }

static inline __half2 make_half2(__half x, __half y) { return __half2(x, y); }
static inline __half2 __halves2half2(__half a, __half b) { return __half2(a, b); }
static inline __half2 __half2half2(__half a) { return __half2(a, a); }
static inline __half2 __float2half2_rn(float a) { const __half h = __float2half_rn(a); return __half2(h, h); }
static inline __half2 __floats2half2_rn(float a, float b) { return __half2(__float2half_rn(a), __float2half_rn(b)); }
static inline __half2 __float22half2_rn(float2 a) { return __floats2half2_rn(a.x, a.y); }
static inline float2 __half22float2(__half2 a) { return make_float2(ntt_h2f(a.x.__x), ntt_h2f(a.y.__x)); }
static inline __half __low2half(__half2 a) { return a.x; }
static inline __half __high2half(__half2 a) { return a.y; }
static inline float __low2float(__half2 a) { return ntt_h2f(a.x.__x); }
static inline float __high2float(__half2 a) { return ntt_h2f(a.y.__x); }
static inline __half2 __low2half2(__half2 a) { return __half2(a.x, a.x); }
static inline __half2 __high2half2(__half2 a) { return __half2(a.y, a.y); }
static inline __half2 __lows2half2(__half2 a, __half2 b) { return __half2(a.x, b.x); }
static inline __half2 __highs2half2(__half2 a, __half2 b) { return __half2(a.y, b.y); }
static inline __half2 __lowhigh2highlow(__half2 a) { return __half2(a.y, a.x); }

// ---------------------------------------------------------------------------------------------
// __nv_bfloat16 (cuda_bf16.hpp layout: unsigned short `__x`, 2-byte aligned).
// f32 -> bf16 RNE on the bits (cvt.rn.bf16.f32); identical to ntt_round(f, 8, 8, RN) for every
// non-NaN input, including overflow to Inf and subnormals. NaN -> 0x7fff (cuda_bf16.hpp).
static inline unsigned short ntt_f2bf(float f) {
    const uint32_t u = ntt_fbits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;
    return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static inline float ntt_bf2f(unsigned short b) { return ntt_bitsf((uint32_t)b << 16); }  // exact, keeps NaN payloads

struct __attribute__((aligned(2))) __nv_bfloat16_raw { unsigned short x; };
struct __attribute__((aligned(4))) __nv_bfloat162_raw { unsigned short x, y; };
struct __attribute__((aligned(2))) __nv_bfloat16 {
    unsigned short __x;
    __nv_bfloat16() = default;
    __nv_bfloat16(const __nv_bfloat16_raw& r) : __x(r.x) {}
    __nv_bfloat16& operator=(const __nv_bfloat16_raw& r) { __x = r.x; return *this; }
    operator __nv_bfloat16_raw() const { __nv_bfloat16_raw r; r.x = __x; return r; }
    __nv_bfloat16(float f) : __x(ntt_f2bf(f)) {}
    __nv_bfloat16(double d) : __x((unsigned short)ntt_round(d, 8, 8, NTT_RN)) {}
    __nv_bfloat16(short v) : __x(ntt_f2bf((float)v)) {}
    __nv_bfloat16(unsigned short v) : __x(ntt_f2bf((float)v)) {}
    __nv_bfloat16(int v) : __x((unsigned short)ntt_round((double)v, 8, 8, NTT_RN)) {}
    __nv_bfloat16(unsigned int v) : __x((unsigned short)ntt_round((double)v, 8, 8, NTT_RN)) {}
    __nv_bfloat16(long long v) : __x((unsigned short)ntt_round((double)v, 8, 8, NTT_RN)) {}
    __nv_bfloat16(unsigned long long v) : __x((unsigned short)ntt_round((double)v, 8, 8, NTT_RN)) {}
    operator float() const { return ntt_bf2f(__x); }
    __nv_bfloat16& operator=(float f) { __x = ntt_f2bf(f); return *this; }
    __nv_bfloat16& operator=(double d) { __x = (unsigned short)ntt_round(d, 8, 8, NTT_RN); return *this; }
    operator short() const { return ntt_f2s16_rz(ntt_bf2f(__x)); }
    operator unsigned short() const { return ntt_f2u16_rz(ntt_bf2f(__x)); }
    operator int() const { return __float2int_rz(ntt_bf2f(__x)); }
    operator unsigned int() const { return __float2uint_rz(ntt_bf2f(__x)); }
    operator long long() const { return __float2ll_rz(ntt_bf2f(__x)); }
    operator unsigned long long() const { return __float2ull_rz(ntt_bf2f(__x)); }
    operator bool() const { return (__x & 0x7fffu) != 0; }
};
struct __attribute__((aligned(4))) __nv_bfloat162 {
    __nv_bfloat16 x, y;
    __nv_bfloat162() = default;
    __nv_bfloat162(const __nv_bfloat16& a, const __nv_bfloat16& b) : x(a), y(b) {}
    __nv_bfloat162(const __nv_bfloat162_raw& r) { x.__x = r.x; y.__x = r.y; }
    __nv_bfloat162& operator=(const __nv_bfloat162_raw& r) { x.__x = r.x; y.__x = r.y; return *this; }
    operator __nv_bfloat162_raw() const { __nv_bfloat162_raw r; r.x = x.__x; r.y = y.__x; return r; }
};
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

static inline __nv_bfloat16 ntt_bfraw(unsigned int bits) { __nv_bfloat16 h; h.__x = (unsigned short)bits; return h; }
static inline __nv_bfloat16 __float2bfloat16(float a) { return ntt_bfraw(ntt_f2bf(a)); }
static inline __nv_bfloat16 __float2bfloat16_rn(float a) { return ntt_bfraw(ntt_f2bf(a)); }
// cvt.rz.bf16.f32: truncation; NaN -> 0x7fff.
static inline __nv_bfloat16 __float2bfloat16_rz(float a) {
    const uint32_t u = ntt_fbits(a);
    return ntt_bfraw((u & 0x7fffffffu) > 0x7f800000u ? 0x7fffu : (u >> 16));
}
static inline __nv_bfloat16 __float2bfloat16_rd(float a) { return ntt_bfraw(ntt_round((double)a, 8, 8, NTT_RD)); }
static inline __nv_bfloat16 __float2bfloat16_ru(float a) { return ntt_bfraw(ntt_round((double)a, 8, 8, NTT_RU)); }
static inline __nv_bfloat16 __double2bfloat16(double a) { return ntt_bfraw(ntt_round(a, 8, 8, NTT_RN)); }
static inline float __bfloat162float(__nv_bfloat16 a) { return ntt_bf2f(a.__x); }
static inline __nv_bfloat16 __int2bfloat16_rn(int i) { return ntt_bfraw(ntt_round((double)i, 8, 8, NTT_RN)); }
static inline int __bfloat162int_rn(__nv_bfloat16 h) { return __float2int_rn(ntt_bf2f(h.__x)); }
static inline int __bfloat162int_rz(__nv_bfloat16 h) { return __float2int_rz(ntt_bf2f(h.__x)); }
static inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }
static inline short __bfloat16_as_short(__nv_bfloat16 h) { return (short)h.__x; }
static inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) { return ntt_bfraw(u); }
static inline __nv_bfloat16 __short_as_bfloat16(short s) { return ntt_bfraw((unsigned short)s); }
static inline __nv_bfloat162 make_bfloat162(__nv_bfloat16 x, __nv_bfloat16 y) { return __nv_bfloat162(x, y); }
static inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat162(a, b); }
static inline __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 a) { return __nv_bfloat162(a, a); }
static inline __nv_bfloat162 __float2bfloat162_rn(float a) { const __nv_bfloat16 h = __float2bfloat16_rn(a); return __nv_bfloat162(h, h); }
static inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return __nv_bfloat162(__float2bfloat16_rn(a), __float2bfloat16_rn(b)); }
static inline __nv_bfloat162 __float22bfloat162_rn(float2 a) { return __floats2bfloat162_rn(a.x, a.y); }
static inline float2 __bfloat1622float2(__nv_bfloat162 a) { return make_float2(ntt_bf2f(a.x.__x), ntt_bf2f(a.y.__x)); }
static inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 a) { return a.x; }
static inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 a) { return a.y; }
static inline float __low2float(__nv_bfloat162 a) { return ntt_bf2f(a.x.__x); }
static inline float __high2float(__nv_bfloat162 a) { return ntt_bf2f(a.y.__x); }
static inline __nv_bfloat162 __lows2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(a.x, b.x); }
static inline __nv_bfloat162 __highs2bfloat162(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(a.y, b.y); }
static inline __nv_bfloat162 __low2bfloat162(__nv_bfloat162 a) { return __nv_bfloat162(a.x, a.x); }
static inline __nv_bfloat162 __high2bfloat162(__nv_bfloat162 a) { return __nv_bfloat162(a.y, a.y); }
static inline __nv_bfloat162 __lowhigh2highlow(__nv_bfloat162 a) { return __nv_bfloat162(a.y, a.x); }

// ---------------------------------------------------------------------------------------------
// Half / bfloat16 arithmetic. add/sub/mul/div/fma.f16 and .bf16 (or the fma.rn.bf16-based
// sequences of sm_80) round the exact result once, RNE, with subnormals. Computed here in
// double: sums and products of two f16 are exact in double, and for the others (bf16 sums,
// quotients, square roots) double rounding through binary64 is innocuous because 53 >= 2p+2
// (Figueroa, "When is double rounding innocuous?", SIGNUM 1995). fma uses TwoSum + round-to-odd.
#define NTT_HALF_OPS(H, H2, P, EB, TOF) \
    static inline H ntt_mk(H, uint32_t bits) { H h; h.__x = (unsigned short)bits; return h; } \
    static inline H __hadd(H a, H b) { return ntt_mk(H(), ntt_round((double)TOF(a.__x) + (double)TOF(b.__x), P, EB, NTT_RN)); } \
    static inline H __hsub(H a, H b) { return ntt_mk(H(), ntt_round((double)TOF(a.__x) - (double)TOF(b.__x), P, EB, NTT_RN)); } \
    static inline H __hmul(H a, H b) { return ntt_mk(H(), ntt_round((double)TOF(a.__x) * (double)TOF(b.__x), P, EB, NTT_RN)); } \
    static inline H __hdiv(H a, H b) { return ntt_mk(H(), ntt_round((double)TOF(a.__x) / (double)TOF(b.__x), P, EB, NTT_RN)); } \
    static inline H __hfma(H a, H b, H c) { return ntt_mk(H(), ntt_fma_round(TOF(a.__x), TOF(b.__x), TOF(c.__x), P, EB, NTT_RN)); } \
    static inline H ntt_sat(H a) { /* _sat: clamp to [0, 1], NaN -> +0 */ \
        const float f = TOF(a.__x); return f != f || f <= 0.0f ? ntt_mk(H(), 0) : f >= 1.0f ? H(1.0f) : a; } \
    static inline H __hadd_sat(H a, H b) { return ntt_sat(__hadd(a, b)); } \
    static inline H __hsub_sat(H a, H b) { return ntt_sat(__hsub(a, b)); } \
    static inline H __hmul_sat(H a, H b) { return ntt_sat(__hmul(a, b)); } \
    static inline H __hfma_sat(H a, H b, H c) { return ntt_sat(__hfma(a, b, c)); } \
    static inline H __hfma_relu(H a, H b, H c) { /* negative -> +0, NaN -> canonical NaN */ \
        const H r = __hfma(a, b, c); const float f = TOF(r.__x); \
        return f != f ? ntt_mk(H(), 0x7fff) : f < 0.0f ? ntt_mk(H(), 0) : r; } \
    static inline H __hneg(H a) { return ntt_mk(H(), a.__x ^ 0x8000u); } \
    static inline H __habs(H a) { return ntt_mk(H(), a.__x & 0x7fffu); } \
    static inline bool __hisnan(H a) { return TOF(a.__x) != TOF(a.__x); } \
    static inline int __hisinf(H a) { /* -1 for -Inf, 1 for +Inf, else 0 */ \
        return (a.__x & 0x7fffu) == (((1u << EB) - 1u) << (P - 1)) ? ((a.__x & 0x8000u) ? -1 : 1) : 0; } \
    static inline bool __heq(H a, H b) { return TOF(a.__x) == TOF(b.__x); } \
    static inline bool __hne(H a, H b) { /* ordered: false if either is NaN */ \
        const float x = TOF(a.__x), y = TOF(b.__x); return x < y || x > y; } \
    static inline bool __hlt(H a, H b) { return TOF(a.__x) < TOF(b.__x); } \
    static inline bool __hle(H a, H b) { return TOF(a.__x) <= TOF(b.__x); } \
    static inline bool __hgt(H a, H b) { return TOF(a.__x) > TOF(b.__x); } \
    static inline bool __hge(H a, H b) { return TOF(a.__x) >= TOF(b.__x); } \
    static inline bool __hequ(H a, H b) { return !__hne(a, b); } \
    static inline bool __hneu(H a, H b) { return !__heq(a, b); } \
    static inline bool __hltu(H a, H b) { return !__hge(a, b); } \
    static inline bool __hleu(H a, H b) { return !__hgt(a, b); } \
    static inline bool __hgtu(H a, H b) { return !__hle(a, b); } \
    static inline bool __hgeu(H a, H b) { return !__hlt(a, b); } \
    /* __hmax/__hmin (max.f16): NaN operands are ignored, both NaN -> canonical NaN; +0 > -0. */ \
    static inline H ntt_maxmin(H a, H b, bool want_max, bool nan_prop) { \
        const float x = TOF(a.__x), y = TOF(b.__x); \
        if (x != x || y != y) { if (nan_prop || (x != x && y != y)) return ntt_mk(H(), 0x7fff); return x != x ? b : a; } \
        if (x == y) { const bool an = (a.__x & 0x8000u) != 0; return want_max ? (an ? b : a) : (an ? a : b); } \
        return (x > y) == want_max ? a : b; } \
    static inline H __hmax(H a, H b) { return ntt_maxmin(a, b, true, false); } \
    static inline H __hmin(H a, H b) { return ntt_maxmin(a, b, false, false); } \
    static inline H __hmax_nan(H a, H b) { return ntt_maxmin(a, b, true, true); } \
    static inline H __hmin_nan(H a, H b) { return ntt_maxmin(a, b, false, true); } \
    static inline H2 __hadd2(H2 a, H2 b) { return H2(__hadd(a.x, b.x), __hadd(a.y, b.y)); } \
    static inline H2 __hsub2(H2 a, H2 b) { return H2(__hsub(a.x, b.x), __hsub(a.y, b.y)); } \
    static inline H2 __hmul2(H2 a, H2 b) { return H2(__hmul(a.x, b.x), __hmul(a.y, b.y)); } \
    static inline H2 __h2div(H2 a, H2 b) { return H2(__hdiv(a.x, b.x), __hdiv(a.y, b.y)); } \
    static inline H2 __hfma2(H2 a, H2 b, H2 c) { return H2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); } \
    static inline H2 __hadd2_sat(H2 a, H2 b) { return H2(__hadd_sat(a.x, b.x), __hadd_sat(a.y, b.y)); } \
    static inline H2 __hmul2_sat(H2 a, H2 b) { return H2(__hmul_sat(a.x, b.x), __hmul_sat(a.y, b.y)); } \
    static inline H2 __hfma2_sat(H2 a, H2 b, H2 c) { return H2(__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y)); } \
    static inline H2 __hfma2_relu(H2 a, H2 b, H2 c) { return H2(__hfma_relu(a.x, b.x, c.x), __hfma_relu(a.y, b.y, c.y)); } \
    static inline H2 __hneg2(H2 a) { return H2(__hneg(a.x), __hneg(a.y)); } \
    static inline H2 __habs2(H2 a) { return H2(__habs(a.x), __habs(a.y)); } \
    static inline H2 __hmax2(H2 a, H2 b) { return H2(__hmax(a.x, b.x), __hmax(a.y, b.y)); } \
    static inline H2 __hmin2(H2 a, H2 b) { return H2(__hmin(a.x, b.x), __hmin(a.y, b.y)); } \
    static inline H2 __hmax2_nan(H2 a, H2 b) { return H2(__hmax_nan(a.x, b.x), __hmax_nan(a.y, b.y)); } \
    static inline H2 __hmin2_nan(H2 a, H2 b) { return H2(__hmin_nan(a.x, b.x), __hmin_nan(a.y, b.y)); } \
    static inline H2 __hisnan2(H2 a) { /* 1.0 per NaN lane */ \
        return H2(__hisnan(a.x) ? H(1.0f) : ntt_mk(H(), 0), __hisnan(a.y) ? H(1.0f) : ntt_mk(H(), 0)); } \
    static inline bool __hbeq2(H2 a, H2 b) { return __heq(a.x, b.x) && __heq(a.y, b.y); } \
    static inline bool __hbne2(H2 a, H2 b) { return __hne(a.x, b.x) && __hne(a.y, b.y); } \
    static inline bool __hblt2(H2 a, H2 b) { return __hlt(a.x, b.x) && __hlt(a.y, b.y); } \
    static inline bool __hble2(H2 a, H2 b) { return __hle(a.x, b.x) && __hle(a.y, b.y); } \
    static inline bool __hbgt2(H2 a, H2 b) { return __hgt(a.x, b.x) && __hgt(a.y, b.y); } \
    static inline bool __hbge2(H2 a, H2 b) { return __hge(a.x, b.x) && __hge(a.y, b.y); } \
    static inline bool __hbneu2(H2 a, H2 b) { return __hneu(a.x, b.x) && __hneu(a.y, b.y); } \
    /* C++ operators (cuda_fp16.hpp / cuda_bf16.hpp, nvcc): != is the unordered __hneu. */ \
    static inline H operator+(const H& a, const H& b) { return __hadd(a, b); } \
    static inline H operator-(const H& a, const H& b) { return __hsub(a, b); } \
    static inline H operator*(const H& a, const H& b) { return __hmul(a, b); } \
    static inline H operator/(const H& a, const H& b) { return __hdiv(a, b); } \
    static inline H& operator+=(H& a, const H& b) { a = __hadd(a, b); return a; } \
    static inline H& operator-=(H& a, const H& b) { a = __hsub(a, b); return a; } \
    static inline H& operator*=(H& a, const H& b) { a = __hmul(a, b); return a; } \
    static inline H& operator/=(H& a, const H& b) { a = __hdiv(a, b); return a; } \
    static inline H& operator++(H& a) { a = __hadd(a, H(1.0f)); return a; } \
    static inline H& operator--(H& a) { a = __hsub(a, H(1.0f)); return a; } \
    static inline H operator++(H& a, int) { const H r = a; a = __hadd(a, H(1.0f)); return r; } \
    static inline H operator--(H& a, int) { const H r = a; a = __hsub(a, H(1.0f)); return r; } \
    static inline H operator+(const H& a) { return a; } \
    static inline H operator-(const H& a) { return __hneg(a); } \
    static inline bool operator==(const H& a, const H& b) { return __heq(a, b); } \
    static inline bool operator!=(const H& a, const H& b) { return __hneu(a, b); } \
    static inline bool operator<(const H& a, const H& b) { return __hlt(a, b); } \
    static inline bool operator<=(const H& a, const H& b) { return __hle(a, b); } \
    static inline bool operator>(const H& a, const H& b) { return __hgt(a, b); } \
    static inline bool operator>=(const H& a, const H& b) { return __hge(a, b); } \
    static inline H2 operator+(const H2& a, const H2& b) { return __hadd2(a, b); } \
    static inline H2 operator-(const H2& a, const H2& b) { return __hsub2(a, b); } \
    static inline H2 operator*(const H2& a, const H2& b) { return __hmul2(a, b); } \
    static inline H2 operator/(const H2& a, const H2& b) { return __h2div(a, b); } \
    static inline H2& operator+=(H2& a, const H2& b) { a = __hadd2(a, b); return a; } \
    static inline H2& operator-=(H2& a, const H2& b) { a = __hsub2(a, b); return a; } \
    static inline H2& operator*=(H2& a, const H2& b) { a = __hmul2(a, b); return a; } \
    static inline H2& operator/=(H2& a, const H2& b) { a = __h2div(a, b); return a; } \
    static inline H2 operator+(const H2& a) { return a; } \
    static inline H2 operator-(const H2& a) { return __hneg2(a); } \
    static inline bool operator==(const H2& a, const H2& b) { return __hbeq2(a, b); } \
    static inline bool operator!=(const H2& a, const H2& b) { return __hbneu2(a, b); } \
    static inline bool operator<(const H2& a, const H2& b) { return __hblt2(a, b); } \
    static inline bool operator<=(const H2& a, const H2& b) { return __hble2(a, b); } \
    static inline bool operator>(const H2& a, const H2& b) { return __hbgt2(a, b); } \
    static inline bool operator>=(const H2& a, const H2& b) { return __hbge2(a, b); }
NTT_HALF_OPS(__half, __half2, 11, 5, ntt_h2f)
NTT_HALF_OPS(__nv_bfloat16, __nv_bfloat162, 8, 8, ntt_bf2f)
#undef NTT_HALF_OPS

// Half math functions. hsqrt: correctly rounded. The rest are MUFU approximations on the
// device (ex2/lg2/rsqrt/rcp.approx.f16 or f32 then cvt): APPROXIMATE here (libm, then RNE).
static inline __half hsqrt(__half a) { return ntt_hraw(ntt_round(sqrt((double)ntt_h2f(a.__x)), 11, 5, NTT_RN)); }
static inline __half hrsqrt(__half a) { return __float2half(1.0f / sqrtf(ntt_h2f(a.__x))); }
static inline __half hrcp(__half a) { return __float2half(1.0f / ntt_h2f(a.__x)); }
static inline __half hexp(__half a) { return __float2half(expf(ntt_h2f(a.__x))); }
static inline __half hexp2(__half a) { return __float2half(exp2f(ntt_h2f(a.__x))); }
static inline __half hlog(__half a) { return __float2half(logf(ntt_h2f(a.__x))); }
static inline __half hlog2(__half a) { return __float2half(log2f(ntt_h2f(a.__x))); }
static inline __half hfloor(__half a) { return __float2half(floorf(ntt_h2f(a.__x))); }
static inline __half hceil(__half a) { return __float2half(ceilf(ntt_h2f(a.__x))); }
static inline __half htrunc(__half a) { return __float2half(truncf(ntt_h2f(a.__x))); }
static inline __half hrint(__half a) { return __float2half(rintf(ntt_h2f(a.__x))); }
static inline __half2 h2sqrt(__half2 a) { return __half2(hsqrt(a.x), hsqrt(a.y)); }
static inline __half2 h2exp(__half2 a) { return __half2(hexp(a.x), hexp(a.y)); }
static inline __half2 h2rsqrt(__half2 a) { return __half2(hrsqrt(a.x), hrsqrt(a.y)); }
static inline __nv_bfloat16 hsqrt(__nv_bfloat16 a) { return ntt_bfraw(ntt_round(sqrt((double)ntt_bf2f(a.__x)), 8, 8, NTT_RN)); }
static inline __nv_bfloat16 hexp(__nv_bfloat16 a) { return __float2bfloat16(expf(ntt_bf2f(a.__x))); }
static inline __nv_bfloat16 hrsqrt(__nv_bfloat16 a) { return __float2bfloat16(1.0f / sqrtf(ntt_bf2f(a.__x))); }

// ---------------------------------------------------------------------------------------------
// Reinterpretation and integer <-> float conversions (Math API "Type Casting Intrinsics").
static inline float __int_as_float(int x) { return ntt_bitsf((uint32_t)x); }
static inline int __float_as_int(float x) { return (int)ntt_fbits(x); }
static inline float __uint_as_float(unsigned int x) { return ntt_bitsf(x); }
static inline unsigned int __float_as_uint(float x) { return ntt_fbits(x); }
static inline double __longlong_as_double(long long x) { return ntt_bitsd((uint64_t)x); }
static inline long long __double_as_longlong(double x) { return (long long)ntt_dbits(x); }
static inline int __double2hiint(double x) { return (int)(ntt_dbits(x) >> 32); }
static inline int __double2loint(double x) { return (int)(uint32_t)ntt_dbits(x); }
static inline double __hiloint2double(int hi, int lo) { return ntt_bitsd(((uint64_t)(uint32_t)hi << 32) | (uint32_t)lo); }
static inline float __int2float_rn(int x) { return ntt_bitsf(ntt_round((double)x, 24, 8, NTT_RN)); }
static inline float __int2float_rz(int x) { return ntt_bitsf(ntt_round((double)x, 24, 8, NTT_RZ)); }
static inline float __int2float_rd(int x) { return ntt_bitsf(ntt_round((double)x, 24, 8, NTT_RD)); }
static inline float __int2float_ru(int x) { return ntt_bitsf(ntt_round((double)x, 24, 8, NTT_RU)); }
static inline float __uint2float_rn(unsigned int x) { return ntt_bitsf(ntt_round((double)x, 24, 8, NTT_RN)); }
static inline float __uint2float_rz(unsigned int x) { return ntt_bitsf(ntt_round((double)x, 24, 8, NTT_RZ)); }
static inline float __ll2float_rn(long long x) { return (float)x; }    // one IEEE RN rounding
static inline float __ull2float_rn(unsigned long long x) { return (float)x; }
static inline double __int2double_rn(int x) { return (double)x; }
static inline double __uint2double_rn(unsigned int x) { return (double)x; }
static inline double __ll2double_rn(long long x) { return (double)x; }
static inline float __double2float_rn(double x) { return ntt_bitsf(ntt_round(x, 24, 8, NTT_RN)); }
static inline float __double2float_rz(double x) { return ntt_bitsf(ntt_round(x, 24, 8, NTT_RZ)); }
static inline float __double2float_rd(double x) { return ntt_bitsf(ntt_round(x, 24, 8, NTT_RD)); }
static inline float __double2float_ru(double x) { return ntt_bitsf(ntt_round(x, 24, 8, NTT_RU)); }

// ---------------------------------------------------------------------------------------------
// Integer intrinsics (Math API "Integer Intrinsics"; PTX popc, clz, bfind, brev, shf, prmt, dp4a).
static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned int)x); }
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }          // 1-based, 0 for 0
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned int __brev(unsigned int x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}
static inline unsigned long long __brevll(unsigned long long x) {
    return ((unsigned long long)__brev((unsigned int)x) << 32) | __brev((unsigned int)(x >> 32));
}
// __funnelshift_l(lo, hi, s): the high 32 bits of (hi:lo) << (s & 31); _lc clamps s to 32.
// __funnelshift_r(lo, hi, s): the low 32 bits of (hi:lo) >> (s & 31); _rc clamps s to 32.
static inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int s) {
    return (unsigned int)((((uint64_t)hi << 32 | lo) << (s & 31u)) >> 32);
}
static inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int s) {
    s = s > 32u ? 32u : s;
    return (unsigned int)((((uint64_t)hi << 32 | lo) << s) >> 32);
}
static inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int s) {
    return (unsigned int)(((uint64_t)hi << 32 | lo) >> (s & 31u));
}
static inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int s) {
    s = s > 32u ? 32u : s;
    return (unsigned int)(((uint64_t)hi << 32 | lo) >> s);
}
static inline unsigned int __umulhi(unsigned int a, unsigned int b) { return (unsigned int)(((uint64_t)a * b) >> 32); }
static inline int __mulhi(int a, int b) { return (int)(((int64_t)a * b) >> 32); }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
// __mul24: low 32 bits of the product of the sign-extended low 24 bits of a and b.
static inline int __mul24(int a, int b) {
    const int64_t x = (int64_t)((int32_t)((uint32_t)a << 8) >> 8), y = (int64_t)((int32_t)((uint32_t)b << 8) >> 8);
    return (int)(uint32_t)(uint64_t)(x * y);
}
static inline unsigned int __umul24(unsigned int a, unsigned int b) { return (unsigned int)((uint64_t)(a & 0xffffffu) * (b & 0xffffffu)); }
static inline unsigned int __sad(int x, int y, unsigned int z) { return z + (unsigned int)(x > y ? (int64_t)x - y : (int64_t)y - x); }
static inline unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) { return z + (x > y ? x - y : y - x); }
static inline int __hadd(int x, int y) { return (int)(((int64_t)x + y) >> 1); }          // (x + y) >> 1, no overflow
static inline int __rhadd(int x, int y) { return (int)(((int64_t)x + y + 1) >> 1); }
static inline unsigned int __uhadd(unsigned int x, unsigned int y) { return (unsigned int)(((uint64_t)x + y) >> 1); }
static inline unsigned int __urhadd(unsigned int x, unsigned int y) { return (unsigned int)(((uint64_t)x + y + 1) >> 1); }

// __byte_perm(x, y, s) = prmt.b32 (default mode): bytes 0-3 of x then 0-3 of y form input[0..7];
// result byte n = input[s<4n+2:4n>] (Math API). Bit 4n+3 of the selector, which the Math API
// calls unused, is PRMT's sign-replicate flag (PTX ISA, prmt: "msb defines if the byte value
// should be copied, or if the sign (msb of the byte) should be replicated"): honoured here as
// the hardware does. Upper 16 bits of s are ignored.
static inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
    const uint64_t in = ((uint64_t)y << 32) | x;
    unsigned int r = 0;
    for (int n = 0; n < 4; ++n) {
        const unsigned int sel = (s >> (4 * n)) & 0xfu;
        unsigned int b = (unsigned int)(in >> (8 * (sel & 7u))) & 0xffu;
        if (sel & 8u) b = (b & 0x80u) ? 0xffu : 0u;
        r |= b << (8 * n);
    }
    return r;
}

// __dp4a: four 8-bit products summed into c (dp4a.s32.s32 / dp4a.u32.u32); wraps mod 2^32.
static inline int __dp4a(int a, int b, int c) {
    uint32_t acc = (uint32_t)c;
    for (int i = 0; i < 32; i += 8) acc += (uint32_t)((int)(signed char)(a >> i) * (int)(signed char)(b >> i));
    return (int)acc;
}
static inline unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c) {
    for (int i = 0; i < 32; i += 8) c += ((a >> i) & 0xffu) * ((b >> i) & 0xffu);
    return c;
}
static inline int __dp4a(char4 a, char4 b, int c) {
    return (int)((uint32_t)c + (uint32_t)(a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w));
}
static inline unsigned int __dp4a(uchar4 a, uchar4 b, unsigned int c) {
    return c + (unsigned int)(a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w);
}
// __dp2a_lo/_hi: two 16-bit halves of a times bytes 0,1 (lo) or 2,3 (hi) of b, plus c.
static inline int __dp2a_lo(int a, int b, int c) {
    return (int)((uint32_t)c + (uint32_t)((int)(short)a * (int)(signed char)b + (int)(short)(a >> 16) * (int)(signed char)(b >> 8)));
}
static inline int __dp2a_hi(int a, int b, int c) {
    return (int)((uint32_t)c + (uint32_t)((int)(short)a * (int)(signed char)(b >> 16) + (int)(short)(a >> 16) * (int)(signed char)(b >> 24)));
}
static inline unsigned int __dp2a_lo(unsigned int a, unsigned int b, unsigned int c) {
    return c + (a & 0xffffu) * (b & 0xffu) + (a >> 16) * ((b >> 8) & 0xffu);
}
static inline unsigned int __dp2a_hi(unsigned int a, unsigned int b, unsigned int c) {
    return c + (a & 0xffffu) * ((b >> 16) & 0xffu) + (a >> 16) * (b >> 24);
}

// SIMD-in-a-word (Math API "SIMD Intrinsics"): per byte (…4) or per halfword (…2).
#define NTT_SIMD(NAME, LANES, EXPR) \
    static inline unsigned int NAME(unsigned int a, unsigned int b) { \
        const int W = 32 / LANES; const unsigned int M = (1u << W) - 1u; unsigned int r = 0; \
        for (int i = 0; i < 32; i += W) { \
            const unsigned int ua = (a >> i) & M, ub = (b >> i) & M; \
            const int sa = (int)(ua ^ (1u << (W - 1))) - (1 << (W - 1)), sb = (int)(ub ^ (1u << (W - 1))) - (1 << (W - 1)); \
            const int smax = (1 << (W - 1)) - 1, smin = -(1 << (W - 1)); \
            (void)sa; (void)sb; (void)smax; (void)smin; \
            r |= ((unsigned int)(EXPR) & M) << i; \
        } \
        return r; \
    }
#define NTT_CLAMP(v, lo, hi) ((v) < (lo) ? (lo) : (v) > (hi) ? (hi) : (v))
NTT_SIMD(__vadd4, 4, ua + ub)
NTT_SIMD(__vsub4, 4, ua - ub)
NTT_SIMD(__vaddss4, 4, NTT_CLAMP(sa + sb, smin, smax))
NTT_SIMD(__vsubss4, 4, NTT_CLAMP(sa - sb, smin, smax))
NTT_SIMD(__vaddus4, 4, NTT_CLAMP((int)(ua + ub), 0, (int)M))
NTT_SIMD(__vsubus4, 4, NTT_CLAMP((int)ua - (int)ub, 0, (int)M))
NTT_SIMD(__vabsdiffu4, 4, ua > ub ? ua - ub : ub - ua)
NTT_SIMD(__vabsdiffs4, 4, sa > sb ? sa - sb : sb - sa)
NTT_SIMD(__vavgu4, 4, (ua + ub + 1) >> 1)
NTT_SIMD(__vmaxs4, 4, sa > sb ? sa : sb)
NTT_SIMD(__vmins4, 4, sa < sb ? sa : sb)
NTT_SIMD(__vmaxu4, 4, ua > ub ? ua : ub)
NTT_SIMD(__vminu4, 4, ua < ub ? ua : ub)
NTT_SIMD(__vcmpeq4, 4, ua == ub ? M : 0u)
NTT_SIMD(__vcmpne4, 4, ua != ub ? M : 0u)
NTT_SIMD(__vcmpges4, 4, sa >= sb ? M : 0u)
NTT_SIMD(__vcmpgts4, 4, sa > sb ? M : 0u)
NTT_SIMD(__vcmples4, 4, sa <= sb ? M : 0u)
NTT_SIMD(__vcmplts4, 4, sa < sb ? M : 0u)
NTT_SIMD(__vcmpgeu4, 4, ua >= ub ? M : 0u)
NTT_SIMD(__vcmpgtu4, 4, ua > ub ? M : 0u)
NTT_SIMD(__vcmpleu4, 4, ua <= ub ? M : 0u)
NTT_SIMD(__vcmpltu4, 4, ua < ub ? M : 0u)
NTT_SIMD(__vseteq4, 4, ua == ub ? 1u : 0u)
NTT_SIMD(__vsetne4, 4, ua != ub ? 1u : 0u)
NTT_SIMD(__vadd2, 2, ua + ub)
NTT_SIMD(__vsub2, 2, ua - ub)
NTT_SIMD(__vaddss2, 2, NTT_CLAMP(sa + sb, smin, smax))
NTT_SIMD(__vsubss2, 2, NTT_CLAMP(sa - sb, smin, smax))
NTT_SIMD(__vabsdiffu2, 2, ua > ub ? ua - ub : ub - ua)
NTT_SIMD(__vabsdiffs2, 2, sa > sb ? sa - sb : sb - sa)
NTT_SIMD(__vmaxs2, 2, sa > sb ? sa : sb)
NTT_SIMD(__vmins2, 2, sa < sb ? sa : sb)
NTT_SIMD(__vcmpeq2, 2, ua == ub ? M : 0u)
#undef NTT_SIMD
#undef NTT_CLAMP
static inline unsigned int __vabs4(unsigned int a) { return __vabsdiffs4(a, 0u); }
static inline unsigned int __vneg4(unsigned int a) { return __vsub4(0u, a); }
static inline unsigned int __vabsss4(unsigned int a) {  // |a| per signed byte, saturating (-128 -> 127)
    unsigned int r = 0;
    for (int i = 0; i < 32; i += 8) { int v = (int)(signed char)(a >> i); v = v < 0 ? -v : v; r |= (unsigned int)(v > 127 ? 127 : v) << i; }
    return r;
}

// ---------------------------------------------------------------------------------------------
// Single / double precision intrinsics (Math API "Single Precision Intrinsics").
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }          // approximate on the device (2 ulp)
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float __fdividef(float x, float y) { return x / y; }       // device: x * rcp.approx(y), 2 ulp; 0 for 2^126<|y|<2^128
static inline float fdividef(float x, float y) { return x / y; }
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __fsqrt_rn(float x) { return sqrtf(x); }
static inline float __frsqrt_rn(float x) { return ntt_bitsf(ntt_round(1.0 / sqrt((double)x), 24, 8, NTT_RN)); }  // innocuous double rounding (53 >= 50)
static inline float __fadd_rn(float a, float b) { return a + b; }       // never contracted into an FMA (ISO C++ mode: -ffp-contract=off)
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }  // libm fmaf: exact single rounding
static inline float __fmaf_ieee_rn(float a, float b, float c) { return fmaf(a, b, c); }
// Directed-rounding f32 operations: exact (product exact in double; sums via TwoSum and
// round-to-odd; quotients via the exact remainder fma(-q, b, a)).
static inline float ntt_fadd_dir(float a, float b, int mode) {
    if (!(a - a == 0.0f) || !(b - b == 0.0f)) return a + b;  // Inf/NaN operands: as IEEE
    return ntt_bitsf(ntt_fma_round((double)a, 1.0, (double)b, 24, 8, mode));
}
static inline float ntt_fmul_dir(float a, float b, int mode) {
    const double p = (double)a * (double)b;
    if (!(p - p == 0.0)) return a * b;
    return ntt_bitsf(ntt_round(p, 24, 8, mode));
}
static inline float ntt_fma_dir(float a, float b, float c, int mode) {
    if (!(a - a == 0.0f) || !(b - b == 0.0f) || !(c - c == 0.0f)) return fmaf(a, b, c);
    return ntt_bitsf(ntt_fma_round((double)a, (double)b, (double)c, 24, 8, mode));
}
static inline float ntt_fdiv_dir(float a, float b, int mode) {
    const double q = (double)a / (double)b;
    if (!(q - q == 0.0) || q == 0.0) return a / b;
    const double r = fma(-q, (double)b, (double)a);  // exact remainder: a - q*b
    const double err = (r == 0.0) ? 0.0 : ((r > 0.0) == (b > 0.0) ? 1.0 : -1.0);  // sign of a/b - q
    return ntt_bitsf(ntt_round(ntt_odd(q, err), 24, 8, mode));
}
static inline float __fadd_rz(float a, float b) { return ntt_fadd_dir(a, b, NTT_RZ); }
static inline float __fadd_ru(float a, float b) { return ntt_fadd_dir(a, b, NTT_RU); }
static inline float __fadd_rd(float a, float b) { return ntt_fadd_dir(a, b, NTT_RD); }
static inline float __fsub_rz(float a, float b) { return ntt_fadd_dir(a, -b, NTT_RZ); }
static inline float __fsub_ru(float a, float b) { return ntt_fadd_dir(a, -b, NTT_RU); }
static inline float __fsub_rd(float a, float b) { return ntt_fadd_dir(a, -b, NTT_RD); }
static inline float __fmul_rz(float a, float b) { return ntt_fmul_dir(a, b, NTT_RZ); }
static inline float __fmul_ru(float a, float b) { return ntt_fmul_dir(a, b, NTT_RU); }
static inline float __fmul_rd(float a, float b) { return ntt_fmul_dir(a, b, NTT_RD); }
static inline float __fmaf_rz(float a, float b, float c) { return ntt_fma_dir(a, b, c, NTT_RZ); }
static inline float __fmaf_ru(float a, float b, float c) { return ntt_fma_dir(a, b, c, NTT_RU); }
static inline float __fmaf_rd(float a, float b, float c) { return ntt_fma_dir(a, b, c, NTT_RD); }
static inline float __fdiv_rz(float a, float b) { return ntt_fdiv_dir(a, b, NTT_RZ); }
static inline float __fdiv_ru(float a, float b) { return ntt_fdiv_dir(a, b, NTT_RU); }
static inline float __fdiv_rd(float a, float b) { return ntt_fdiv_dir(a, b, NTT_RD); }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dsub_rn(double a, double b) { return a - b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
static inline double __drcp_rn(double a) { return 1.0 / a; }
static inline double __dsqrt_rn(double a) { return sqrt(a); }
static inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
// __saturatef: clamp to [+0, 1]; NaN -> 0 (libdevice __nv_saturatef).
static inline float __saturatef(float x) { return x != x || x <= 0.0f ? 0.0f : x >= 1.0f ? 1.0f : x; }
// APPROXIMATE fast-math intrinsics (MUFU on the device; formulas as the device evaluates them).
// glibc's <math.h> already declares extern "C" __expf, __logf, ... (its internal aliases), so
// the CUDA names are function-like macros onto ntt_ functions (math.h is included above, and
// its include guard keeps a later #include from seeing the macros).
static inline float ntt_expf(float x) { return exp2f(x * 1.442695041f); }     // ex2.approx(x * log2 e)
static inline float ntt_exp10f(float x) { return exp2f(x * 3.321928094f); }   // ex2.approx(x * log2 10)
static inline float ntt_logf(float x) { return log2f(x) * 0.693147181f; }     // lg2.approx(x) * ln 2
static inline float ntt_log2f(float x) { return log2f(x); }
static inline float ntt_log10f(float x) { return log2f(x) * 0.301029996f; }
static inline float ntt_powf(float x, float y) { return exp2f(y * log2f(x)); }
static inline float ntt_sinf(float x) { return sinf(x); }
static inline float ntt_cosf(float x) { return cosf(x); }
static inline float ntt_tanf(float x) { return sinf(x) / cosf(x); }
static inline void ntt_sincosf(float x, float* s, float* c) { *s = sinf(x); *c = cosf(x); }
#define __expf(x) ntt_expf(x)
#define __exp10f(x) ntt_exp10f(x)
#define __logf(x) ntt_logf(x)
#define __log2f(x) ntt_log2f(x)
#define __log10f(x) ntt_log10f(x)
#define __powf(x, y) ntt_powf(x, y)
#define __sinf(x) ntt_sinf(x)
#define __cosf(x) ntt_cosf(x)
#define __tanf(x) ntt_tanf(x)
#define __sincosf(x, s, c) ntt_sincosf(x, s, c)
#if !defined(__USE_GNU)
static inline float exp10f(float x) { return exp2f(x * 3.321928094f); }
static inline double exp10(double x) { return pow(10.0, x); }
#endif

// ---------------------------------------------------------------------------------------------
// Cache-hinted loads and stores: plain accesses (one coherent memory here).
template <class T> static inline T __ldg(const T* p) { return *p; }
template <class T> static inline T __ldcg(const T* p) { return *p; }
template <class T> static inline T __ldca(const T* p) { return *p; }
template <class T> static inline T __ldcs(const T* p) { return *p; }
template <class T> static inline T __ldlu(const T* p) { return *p; }
template <class T> static inline T __ldcv(const T* p) { return *p; }
template <class T> static inline void __stcg(T* p, T v) { *p = v; }
template <class T> static inline void __stcs(T* p, T v) { *p = v; }
template <class T> static inline void __stwb(T* p, T v) { *p = v; }
template <class T> static inline void __stwt(T* p, T v) { *p = v; }

// ---------------------------------------------------------------------------------------------
// min / max (CUDA math_functions.hpp): mixed signed/unsigned operands of one width compare as
// unsigned, as the C usual arithmetic conversions do; float/double pairs use fmin/fmax.
#define NTT_MINMAX(R, A, B) \
    static inline R min(A a, B b) { return (R)a < (R)b ? (R)a : (R)b; } \
    static inline R max(A a, B b) { return (R)a > (R)b ? (R)a : (R)b; }
NTT_MINMAX(int, int, int)
NTT_MINMAX(unsigned int, unsigned int, unsigned int)
NTT_MINMAX(unsigned int, int, unsigned int)
NTT_MINMAX(unsigned int, unsigned int, int)
NTT_MINMAX(long, long, long)
NTT_MINMAX(unsigned long, unsigned long, unsigned long)
NTT_MINMAX(unsigned long, long, unsigned long)
NTT_MINMAX(unsigned long, unsigned long, long)
NTT_MINMAX(long long, long long, long long)
NTT_MINMAX(unsigned long long, unsigned long long, unsigned long long)
NTT_MINMAX(unsigned long long, long long, unsigned long long)
NTT_MINMAX(unsigned long long, unsigned long long, long long)
#undef NTT_MINMAX
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }
static inline double min(float a, double b) { return fmin((double)a, b); }
static inline double max(float a, double b) { return fmax((double)a, b); }
static inline double min(double a, float b) { return fmin(a, (double)b); }
static inline double max(double a, float b) { return fmax(a, (double)b); }
static inline unsigned int umin(unsigned int a, unsigned int b) { return a < b ? a : b; }
static inline unsigned int umax(unsigned int a, unsigned int b) { return a > b ? a : b; }
static inline long long llmin(long long a, long long b) { return a < b ? a : b; }
static inline long long llmax(long long a, long long b) { return a > b ? a : b; }
static inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
static inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }

// Memory fences come from host_shim.h: they are scheduling points there (another block in
// flight may run at a __threadfence).
