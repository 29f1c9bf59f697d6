// CUDA-on-CPU shim for the host tier: the same kernel sources compiled by the host C++
// compiler. Every CUDA thread of a block is a cooperative fiber on ONE OS thread; blocks run one
// after another, except under the random schedule, where several blocks are in flight at once
// and the scheduler switches between them at sync points (host_main.h). A fiber runs until it reaches a sync point (__syncthreads, a warp collective,
// an atomic, a fence) and then hands control back to the scheduler, which decides which fiber
// runs next (forward, reverse or a seeded random order: a racy kernel then gives different
// outputs under different schedules). Sync points are rendezvous: a barrier releases when every
// live thread of the block waits at it, a warp collective when every named live lane of the warp
// waits at one. When nothing can run and nothing can be released, the block is deadlocked and
// the runner says which threads wait where (no timeout needed).
//
// `__shared__` is a `static thread_local`: every static shared array of the kernel, and nothing
// else, lies in the executable's TLS block, which the runner poisons before each block
// (reading unwritten shared memory then varies between runs) and swaps between blocks in flight;
// `extern __shared__` declarations are rewritten by the runner to point into the per-block
// dynamic shared buffer `nt_dyn_shared_ptr`.
//
// Types (half, bf16, vectors, dim3 when NT_HAVE_DIM3) and math intrinsics come from
// host_types.h, which the runner places before this file.
#pragma once
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <signal.h>
#include <sys/mman.h>
#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#ifndef __global__
#define __global__
#endif
#ifndef __device__
#define __device__
#endif
#ifndef __host__
#define __host__
#endif
#ifndef __forceinline__
#define __forceinline__ inline
#endif
#ifndef __noinline__
#define __noinline__
#endif
#ifndef __restrict__
#define __restrict__ __restrict
#endif
#ifndef __constant__
#define __constant__
#endif
#ifndef __managed__
#define __managed__
#endif
#ifndef __grid_constant__
#define __grid_constant__
#endif
#ifndef __launch_bounds__
#define __launch_bounds__(...)
#endif
#ifndef __align__
#define __align__(n) __attribute__((aligned(n)))
#endif
// Static shared memory is the executable's thread-local storage. A named section cannot hold
// it: g++ ignores `section` for a function-local static of a template instantiation or of an
// inline function (it goes to `.bss` or a COMDAT `.bss._ZZ...`), which made such an array one
// copy for every block. Every `thread_local` variable, in any function, lands in the TLS
// segment (PT_TLS), and CUDA device code has no `thread_local` of its own, so that segment is
// exactly the kernel's static shared memory; the runner finds it (nt_shared_locate) and the
// fibers, all on one OS thread, share it like the threads of one block.
#define __shared__ static thread_local
// The runner's own mutable state lives in the section `nt_rt`: before every run the runner
// puts the program's other static storage (the kernel's `__device__` globals, function-local
// `static`s, `__constant__` tables) back to its image at start-up, as a fresh module load has
// it, and must leave its own state alone while doing so.
#define NT_RT __attribute__((section("nt_rt")))

#ifndef NT_HAVE_DIM3
#define NT_HAVE_DIM3
struct uint3 {
    unsigned x, y, z;
};
struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
    dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    operator uint3() const { return uint3{x, y, z}; }
};
#endif

// The built-in index variables. Plain globals (not thread_local): all fibers share one OS
// thread, and the scheduler stores the running fiber's indices before it switches to it.
// They have external linkage so the compiler reloads them after every (opaque) switch.
NT_RT uint3 threadIdx;
NT_RT uint3 blockIdx;
NT_RT dim3 blockDim;
NT_RT dim3 gridDim;
static const int warpSize = 32;

// Kernel arguments as the runner passes them (the generated per-entry call casts each slot to
// the declared parameter type), and the per-block dynamic shared memory that rewritten
// `extern __shared__` declarations point into.
union nt_arg {
    long long i;
    float f;
    double d;
    void* p;
};
static NT_RT nt_arg nt_argv[64];
static NT_RT unsigned char* nt_dyn_shared_ptr;
// The kernel's static shared memory (the executable's TLS block; see `__shared__`).
static NT_RT char* nt_shared_lo;
static NT_RT size_t nt_shared_len;

// ---------------------------------------------------------------- fibers and the scheduler

enum { NT_READY = 0, NT_BAR = 1, NT_WARP = 2, NT_DONE = 3 };
enum {
    NT_W_SYNC, NT_W_SHFL, NT_W_UP, NT_W_DOWN, NT_W_XOR, NT_W_BALLOT, NT_W_ANY, NT_W_ALL,
    NT_W_MATCH_ANY, NT_W_MATCH_ALL, NT_W_RADD, NT_W_RMIN, NT_W_RMAX, NT_W_RMINU, NT_W_RMAXU,
    NT_W_RAND, NT_W_ROR, NT_W_RXOR
};
static const char* const nt_wop_name[] = {
    "__syncwarp", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
    "__ballot_sync", "__any_sync", "__all_sync", "__match_any_sync", "__match_all_sync",
    "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync", "__reduce_min_sync",
    "__reduce_max_sync", "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync"};

struct nt_fiber {
    void* sp;            // saved stack pointer (x86-64 switch) while not running
#if !defined(__x86_64__)
    ucontext_t uc;
#endif
    unsigned char* stack;  // lowest usable byte (a PROT_NONE guard page lies below)
    uint3 tid;
    uint3 bid;             // its block (several blocks may be in flight)
    unsigned lin;
    int state, op, line, width, arg;
    const char* file;
    unsigned mask, size;
    unsigned long long val, res;
};

#define NT_STACK (256u * 1024u)
static NT_RT nt_fiber* nt_fiber_pool;      // every block slot's fibers, slot after slot
static NT_RT nt_fiber* nt_fibers;          // the running block slot's fibers (one per thread)
static NT_RT unsigned nt_nfibers_alloc;    // how many of the pool have stacks
static NT_RT unsigned nt_nthreads;         // threads of the current block
static NT_RT int nt_cur = -1;              // the running fiber, -1 in the scheduler
static NT_RT long nt_page;
static NT_RT void (*nt_kernel_call)();     // the entry being launched (generated per entry)
#if defined(__x86_64__)
static NT_RT void* nt_sched_sp;
#else
static NT_RT ucontext_t nt_sched_uc;
#endif

#if defined(__x86_64__)
// A minimal context switch: save the callee-saved registers on the current stack, store its
// stack pointer, load the other one, restore. ucontext's swapcontext costs a sigprocmask
// system call per switch, which dominated run time with thousands of barriers per case.
extern "C" void nt_ctx_switch(void** save_sp, void* to_sp);
extern "C" void nt_ctx_entry();
asm(".text\n"
    ".globl nt_ctx_switch\n"
    ".type nt_ctx_switch,@function\n"
    "nt_ctx_switch:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
    "  ret\n"
    ".size nt_ctx_switch,.-nt_ctx_switch\n"
    ".globl nt_ctx_entry\n"
    ".type nt_ctx_entry,@function\n"
    "nt_ctx_entry:\n"
    "  movq %r12, %rdi\n"
    "  call nt_fiber_main\n"
    "  ud2\n"
    ".size nt_ctx_entry,.-nt_ctx_entry\n");
#endif

extern "C" void nt_fiber_main(nt_fiber* f);

// Back to the scheduler (the running fiber's state says why).
static inline void nt_to_sched() {
    nt_fiber* f = &nt_fibers[nt_cur];
#if defined(__x86_64__)
    nt_ctx_switch(&f->sp, nt_sched_sp);
#else
    swapcontext(&f->uc, &nt_sched_uc);
#endif
}

extern "C" void nt_fiber_main(nt_fiber* f) {
    nt_kernel_call();
    f->state = NT_DONE;
    nt_to_sched();
    abort();  // a finished fiber is never resumed
}

#if !defined(__x86_64__)
static void nt_uc_entry(unsigned hi, unsigned lo) {
    nt_fiber_main((nt_fiber*)(((uintptr_t)hi << 32) | (uintptr_t)lo));
}
#endif

// Fresh entry frame on fiber `f`'s stack (every block restarts every fiber).
static void nt_fiber_reset(nt_fiber* f) {
    f->state = NT_READY;
#if defined(__x86_64__)
    uintptr_t top = ((uintptr_t)f->stack + NT_STACK) & ~(uintptr_t)15;
    void** sp = (void**)(top - 72);  // sp = 8 mod 16: nt_ctx_entry's call then aligns the callee
    sp[0] = 0; sp[1] = 0; sp[2] = 0;
    sp[3] = (void*)f;                // r12 -> nt_fiber_main's argument
    sp[4] = 0; sp[5] = 0;
    sp[6] = (void*)nt_ctx_entry;     // `ret` target
    f->sp = (void*)sp;
#else
    getcontext(&f->uc);
    f->uc.uc_stack.ss_sp = f->stack;
    f->uc.uc_stack.ss_size = NT_STACK;
    f->uc.uc_link = 0;
    uintptr_t p = (uintptr_t)f;
    makecontext(&f->uc, (void (*)())nt_uc_entry, 2, (unsigned)(p >> 32), (unsigned)p);
#endif
}

// Whether `a` lies in a fiber stack's guard page (a stack overflow).
static int nt_in_stack_guard(uintptr_t a) {
    for (unsigned i = 0; i < nt_nfibers_alloc; ++i) {
        uintptr_t g = (uintptr_t)nt_fiber_pool[i].stack - (uintptr_t)nt_page;
        if (a >= g && a < (uintptr_t)nt_fiber_pool[i].stack) return 1;
    }
    return 0;
}

#define NT_MAX_FIBERS 2048u  // block slots in flight x threads per block

static void nt_alloc_fibers(unsigned n) {
    if (!nt_page) nt_page = sysconf(_SC_PAGESIZE);
    if (!nt_fiber_pool) nt_fibers = nt_fiber_pool = (nt_fiber*)calloc(NT_MAX_FIBERS, sizeof(nt_fiber));
    for (unsigned i = nt_nfibers_alloc; i < n; ++i) {
        unsigned char* m = (unsigned char*)mmap(0, NT_STACK + nt_page, PROT_READ | PROT_WRITE,
                                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == (unsigned char*)MAP_FAILED) { fprintf(stderr, "ninfer: no memory for fiber stacks\n"); _exit(75); }
        mprotect(m, nt_page, PROT_NONE);
        nt_fiber_pool[i].stack = m + nt_page;
        nt_nfibers_alloc = i + 1;
    }
}

// Yield: the running fiber stays ready; another one may run first (atomics and fences are
// such points, so spin-waits on atomics between threads of a block make progress).
static inline void nt_yield() {
    if (nt_cur < 0) return;
    nt_to_sched();
}

static inline void nt_wait_bar(int kind, int pred, int line, const char* file) {
    if (nt_cur < 0) return;
    nt_fiber* f = &nt_fibers[nt_cur];
    f->state = NT_BAR;
    f->op = kind;
    f->val = pred ? 1 : 0;
    f->line = line;
    f->file = file;
    nt_to_sched();
}

static inline unsigned long long nt_wait_warp(int op, unsigned mask, unsigned long long val, unsigned size,
                                              int arg, int width, int line, const char* file) {
    if (nt_cur < 0) return val;
    nt_fiber* f = &nt_fibers[nt_cur];
    f->state = NT_WARP;
    f->op = op;
    f->mask = mask;
    f->val = val;
    f->size = size;
    f->arg = arg;
    f->width = width;
    f->line = line;
    f->file = file;
    nt_to_sched();
    return f->res;
}

// ---------------------------------------------------------------- block barriers

// Threads that already returned count as arrived (as on hardware since Volta, where exited
// threads no longer take part in bar.sync): `if (tid >= n) return;` before a barrier is a
// common pattern and works on the GPU, so it must not be reported as a deadlock here.
static inline void __syncthreads(int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    nt_wait_bar(0, 0, line, file);
}
static inline int __syncthreads_count(int pred, int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    nt_wait_bar(1, pred, line, file);
    return nt_cur < 0 ? (pred != 0) : (int)nt_fibers[nt_cur].res;
}
static inline int __syncthreads_and(int pred, int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    nt_wait_bar(2, pred, line, file);
    return nt_cur < 0 ? (pred != 0) : (int)nt_fibers[nt_cur].res;
}
static inline int __syncthreads_or(int pred, int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    nt_wait_bar(3, pred, line, file);
    return nt_cur < 0 ? (pred != 0) : (int)nt_fibers[nt_cur].res;
}

// ---------------------------------------------------------------- warp collectives

template <class T>
static inline unsigned long long nt_bits(T v) {
    static_assert(sizeof(T) <= 8, "warp collectives move at most 8 bytes per lane");
    unsigned long long b = 0;
    memcpy(&b, &v, sizeof(T));
    return b;
}
template <class T>
static inline T nt_from_bits(unsigned long long b) {
    T v;
    memcpy((void*)&v, &b, sizeof(T));
    return v;
}

static inline void __syncwarp(unsigned mask = 0xffffffffu, int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    nt_wait_warp(NT_W_SYNC, mask, 0, 0, 0, 32, line, file);
}
template <class T>
static inline T __shfl_sync(unsigned mask, T var, int src, int width = 32, int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    return nt_from_bits<T>(nt_wait_warp(NT_W_SHFL, mask, nt_bits(var), sizeof(T), src, width, line, file));
}
template <class T>
static inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32, int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    return nt_from_bits<T>(nt_wait_warp(NT_W_UP, mask, nt_bits(var), sizeof(T), (int)delta, width, line, file));
}
template <class T>
static inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32, int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    return nt_from_bits<T>(nt_wait_warp(NT_W_DOWN, mask, nt_bits(var), sizeof(T), (int)delta, width, line, file));
}
template <class T>
static inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32, int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    return nt_from_bits<T>(nt_wait_warp(NT_W_XOR, mask, nt_bits(var), sizeof(T), lane_mask, width, line, file));
}
static inline unsigned __ballot_sync(unsigned mask, int pred, int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    return (unsigned)nt_wait_warp(NT_W_BALLOT, mask, pred != 0, 4, 0, 32, line, file);
}
static inline int __any_sync(unsigned mask, int pred, int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    return (int)nt_wait_warp(NT_W_ANY, mask, pred != 0, 4, 0, 32, line, file);
}
static inline int __all_sync(unsigned mask, int pred, int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    return (int)nt_wait_warp(NT_W_ALL, mask, pred != 0, 4, 0, 32, line, file);
}
template <class T>
static inline unsigned __match_any_sync(unsigned mask, T v, int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    return (unsigned)nt_wait_warp(NT_W_MATCH_ANY, mask, nt_bits(v), sizeof(T), 0, 32, line, file);
}
template <class T>
static inline unsigned __match_all_sync(unsigned mask, T v, int* pred, int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    unsigned r = (unsigned)nt_wait_warp(NT_W_MATCH_ALL, mask, nt_bits(v), sizeof(T), 0, 32, line, file);
    *pred = r != 0;
    return r;
}
static inline unsigned __reduce_add_sync(unsigned mask, unsigned v, int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    return (unsigned)nt_wait_warp(NT_W_RADD, mask, v, 4, 0, 32, line, file);
}
static inline int __reduce_add_sync(unsigned mask, int v, int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    return (int)nt_wait_warp(NT_W_RADD, mask, (unsigned)v, 4, 0, 32, line, file);
}
static inline unsigned __reduce_min_sync(unsigned mask, unsigned v, int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    return (unsigned)nt_wait_warp(NT_W_RMINU, mask, v, 4, 0, 32, line, file);
}
static inline int __reduce_min_sync(unsigned mask, int v, int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    return (int)nt_wait_warp(NT_W_RMIN, mask, (unsigned)v, 4, 0, 32, line, file);
}
static inline unsigned __reduce_max_sync(unsigned mask, unsigned v, int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    return (unsigned)nt_wait_warp(NT_W_RMAXU, mask, v, 4, 0, 32, line, file);
}
static inline int __reduce_max_sync(unsigned mask, int v, int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    return (int)nt_wait_warp(NT_W_RMAX, mask, (unsigned)v, 4, 0, 32, line, file);
}
static inline unsigned __reduce_and_sync(unsigned mask, unsigned v, int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    return (unsigned)nt_wait_warp(NT_W_RAND, mask, v, 4, 0, 32, line, file);
}
static inline unsigned __reduce_or_sync(unsigned mask, unsigned v, int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    return (unsigned)nt_wait_warp(NT_W_ROR, mask, v, 4, 0, 32, line, file);
}
static inline unsigned __reduce_xor_sync(unsigned mask, unsigned v, int line = __builtin_LINE(), const char* file = __builtin_FILE()) {
    return (unsigned)nt_wait_warp(NT_W_RXOR, mask, v, 4, 0, 32, line, file);
}

// The warp's live lanes (fibers run one at a time, so "converged" means "not exited").
static inline unsigned __activemask() {
    if (nt_cur < 0) return 1u;
    unsigned w0 = (unsigned)nt_cur & ~31u, m = 0;
    for (unsigned l = 0; l < 32 && w0 + l < nt_nthreads; ++l)
        if (nt_fibers[w0 + l].state != NT_DONE) m |= 1u << l;
    return m;
}
static inline unsigned __lanemask_lt() { return nt_cur < 0 ? 0u : (1u << (nt_cur & 31)) - 1u; }

// ---------------------------------------------------------------- weak visibility
// The weak-visibility schedule (host_main.h runs it when a kernel used an atomic or a fence):
// blocks run one after another, and a block's plain global writes (Out, Scratch, __device__
// storage) stay in the block's own view until its __threadfence() or the kernel's end; other
// blocks read the globally visible copy `g` meanwhile. Atomics act on the visible copy at
// once (they are performed at the device's coherence point), but they do not publish the
// block's earlier plain writes: that is the fence's job (CUDA's memory model: a relaxed atomic
// orders nothing). So a split-K reduction whose last block, picked by an atomic counter, reads
// the partials the other blocks wrote without a fence reads stale values, as it may on a GPU.
struct nt_weak_region {
    unsigned char* p;     // the memory the kernel addresses (the running block's view)
    size_t n;
    unsigned char* g;     // what every block sees (the visible copy)
    unsigned char* pend;  // retired blocks' unpublished writes, applied at the kernel's end
    unsigned char* has;   // 1 where `pend` holds a byte
};
static NT_RT nt_weak_region nt_weak_regions[72];
static NT_RT int nt_weak_n;
static NT_RT int nt_weak_on;
static NT_RT int nt_sync_seen;  // the run used an atomic or a device fence

static nt_weak_region* nt_weak_find(const void* a) {
    const unsigned char* c = (const unsigned char*)a;
    for (int i = 0; i < nt_weak_n; ++i)
        if (c >= nt_weak_regions[i].p && c < nt_weak_regions[i].p + nt_weak_regions[i].n) return &nt_weak_regions[i];
    return 0;
}

// An atomic's result is visible to every block at once.
static inline void nt_weak_publish(const void* a, size_t n) {
    if (!nt_weak_on) return;
    nt_weak_region* r = nt_weak_find(a);
    if (r) memcpy(r->g + ((const unsigned char*)a - r->p), a, n);
}

// __threadfence: the running block's writes so far become visible (blocks run one at a time,
// so the view differs from the visible copy only by this block's own writes).
static inline void nt_weak_fence() {
    if (!nt_weak_on) return;
    for (int i = 0; i < nt_weak_n; ++i) memcpy(nt_weak_regions[i].g, nt_weak_regions[i].p, nt_weak_regions[i].n);
}

// A block retired: its unpublished writes wait for the kernel's end, the next block starts
// from the visible copy.
static void nt_weak_block_end() {
    for (int i = 0; i < nt_weak_n; ++i) {
        nt_weak_region* r = &nt_weak_regions[i];
        for (size_t k = 0; k < r->n; ++k)
            if (r->p[k] != r->g[k]) {
                r->pend[k] = r->p[k];
                r->has[k] = 1;
                r->p[k] = r->g[k];
            }
    }
}

static void nt_weak_begin() {
    for (int i = 0; i < nt_weak_n; ++i) {
        nt_weak_region* r = &nt_weak_regions[i];
        r->g = (unsigned char*)malloc(r->n + 1);
        r->pend = (unsigned char*)malloc(r->n + 1);
        r->has = (unsigned char*)calloc(r->n + 1, 1);
        memcpy(r->g, r->p, r->n);
    }
    nt_weak_on = 1;
}

// The kernel ended: every write is visible (retired blocks' in block order).
static void nt_weak_end() {
    nt_weak_on = 0;
    for (int i = 0; i < nt_weak_n; ++i) {
        nt_weak_region* r = &nt_weak_regions[i];
        for (size_t k = 0; k < r->n; ++k)
            if (r->has[k]) r->p[k] = r->pend[k];
        free(r->g);
        free(r->pend);
        free(r->has);
    }
    nt_weak_n = 0;
}

static void nt_weak_add(void* p, size_t n) {
    if (nt_weak_n < (int)(sizeof nt_weak_regions / sizeof nt_weak_regions[0]) && n) {
        nt_weak_regions[nt_weak_n].p = (unsigned char*)p;
        nt_weak_regions[nt_weak_n].n = n;
        ++nt_weak_n;
    }
}

// ---------------------------------------------------------------- atomics and fences
// Fibers never run at the same time, so a read-modify-write is atomic by construction; each
// atomic first yields so other threads may interleave (and spin-waits make progress).

static inline void nt_sync_point() {
    nt_sync_seen = 1;
    nt_yield();
}

#define NT_ATOMIC(T, NAME, EXPR)                                  \
    static inline T NAME(T* a, T v) {                             \
        nt_sync_point();                                          \
        T o = *a;                                                 \
        *a = (EXPR);                                              \
        nt_weak_publish(a, sizeof(T));                            \
        return o;                                                 \
    }
#define NT_ATOMIC_ALL_INT(NAME, EXPR)                             \
    NT_ATOMIC(int, NAME, EXPR)                                    \
    NT_ATOMIC(unsigned, NAME, EXPR)                               \
    NT_ATOMIC(unsigned long long, NAME, EXPR)                     \
    NT_ATOMIC(long long, NAME, EXPR)
NT_ATOMIC_ALL_INT(atomicAdd, o + v)
NT_ATOMIC(float, atomicAdd, o + v)
NT_ATOMIC(double, atomicAdd, o + v)
NT_ATOMIC_ALL_INT(atomicSub, o - v)
NT_ATOMIC_ALL_INT(atomicExch, v)
NT_ATOMIC(float, atomicExch, v)
NT_ATOMIC_ALL_INT(atomicMin, v < o ? v : o)
NT_ATOMIC_ALL_INT(atomicMax, v > o ? v : o)
NT_ATOMIC_ALL_INT(atomicAnd, o & v)
NT_ATOMIC_ALL_INT(atomicOr, o | v)
NT_ATOMIC_ALL_INT(atomicXor, o ^ v)
NT_ATOMIC(unsigned, atomicInc, (o >= v) ? 0u : o + 1u)
NT_ATOMIC(unsigned, atomicDec, (o == 0u || o > v) ? v : o - 1u)
#undef NT_ATOMIC_ALL_INT
#undef NT_ATOMIC

#define NT_CAS(T)                                                 \
    static inline T atomicCAS(T* a, T cmp, T v) {                 \
        nt_sync_point();                                          \
        T o = *a;                                                 \
        if (o == cmp) *a = v;                                     \
        nt_weak_publish(a, sizeof(T));                            \
        return o;                                                 \
    }
NT_CAS(int)
NT_CAS(unsigned)
NT_CAS(unsigned long long)
NT_CAS(unsigned short)
#undef NT_CAS

// Scoped variants behave the same on one device.
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicCAS_block atomicCAS
#define atomicExch_block atomicExch
#define atomicMax_block atomicMax
#define atomicMin_block atomicMin

// Fences: a device-wide fence is a point where the scheduler may run another block in flight
// (the interleaved schedule), as atomics are, and under the weak-visibility schedule it makes
// the block's writes visible to the other blocks.
static inline void __threadfence() {
    nt_weak_fence();
    nt_sync_point();
}
static inline void __threadfence_system() { __threadfence(); }
static inline void __threadfence_block() {}
static inline void __nanosleep(unsigned) { nt_yield(); }
static NT_RT unsigned long long nt_clock_ticks;
static inline long long clock64() { return (long long)(nt_clock_ticks += 16); }
static inline void __trap() {
    static const char m[] = "ninfer: __trap() called by the kernel\n";
    (void)!write(2, m, sizeof m - 1);
    abort();
}

// __ldg & co., the integer/bit intrinsics and min/max come from host_types.h.
