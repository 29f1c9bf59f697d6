// The host tier's runner `main`, placed after the kernel source and the generated entry table
// (`nt_entries`, `nt_n_entries`). It reads a launch file holding many cases, runs each case
// under several schedules in this one process, and streams records to the parent on the
// protocol fd (the original stdout; the kernel's own printf goes to stderr):
//   B i                        case i begins
//   M i arg kind base len lo hi   a buffer's placement (kind I input, O output, S scratch,
//                              D dynamic shared memory; lo..hi is the whole mapping with its
//                              PROT_NONE guard pages, for a sparse input from its 32-bit wrap
//                              window on) so the parent can classify fault addresses
//   R i run nbytes\n<bytes>    the Out buffer after run `run` (0 forward, 1 reverse, 2 random)
//   G i arg run nbefore firstbefore nafter firstafter   bytes changed around Out/Scratch
//   P i arg where              output changed when only input `arg`'s poison changed
//   X i text                   deadlock (which threads wait where; "synccheck: ..." when a warp
//                              collective's named lanes wait at another collective)
//   W i nbytes                 bytes of static storage (__device__ globals, statics) the forward
//                              run changed (every run starts from the start-up image)
//   V i ndiff firstbyte        weak visibility: the output changed when a block's plain global
//                              writes became visible to other blocks only at its __threadfence
//   U i ndiff firstbyte        initcheck: the forward schedule's output changed when only the
//                              initial contents of shared memory changed (finite vs NaN poison)
//   S i sig addr write thread bx by bz stackoverflow   a fault (then _exit)
//   T i                        the case's time ran out (then _exit)
//   D i                        case i done
// A kernel source may #define names the runner uses (engine shadow headers rename dim3, half,
// ...); below they must mean the shim's types again.
#undef dim3
#undef uint3
#undef half
#include <stdarg.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <ucontext.h>
#include <link.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

extern "C" char __start_nt_rt[] __attribute__((weak));
extern "C" char __stop_nt_rt[] __attribute__((weak));
// The executable's writable static storage (.data and .bss, glibc's crt1 and the linker).
extern "C" char __data_start[] __attribute__((weak));
extern "C" char _end[] __attribute__((weak));

static NT_RT int nt_proto = 1;
static NT_RT volatile long nt_case_idx = -1;
static NT_RT unsigned* nt_order;

// ---------------------------------------------------------------- static storage reset
// A GPU module starts with its __device__ globals as the source initialises them (zero when
// not), and a kernel must not rely on what another block or an earlier launch left there. The
// host process keeps them across runs, so the runner copies the static storage once at
// start-up and puts it back before every run; the runner's own state (section nt_rt) and the
// static shared arrays (thread-local storage, poisoned per block) are left out.

// Finds the kernel's static shared memory: the main program's PT_TLS segment (`__shared__` is
// `static thread_local`, host_shim.h) as this thread sees it. dl_iterate_phdr reports the
// main program first. Size 0 when the kernel has no static shared array; false when a
// segment exists but cannot be located.
static int nt_shared_locate_cb(struct dl_phdr_info* info, size_t, void* ok) {
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        if (info->dlpi_phdr[i].p_type != PT_TLS || info->dlpi_phdr[i].p_memsz == 0) continue;
        nt_shared_lo = (char*)info->dlpi_tls_data;
        nt_shared_len = nt_shared_lo ? (size_t)info->dlpi_phdr[i].p_memsz : 0;
        *(int*)ok = nt_shared_lo != 0;
    }
    return 1;
}

static bool nt_shared_locate() {
    int ok = 1;
    dl_iterate_phdr(nt_shared_locate_cb, &ok);
    return ok;
}

struct nt_span {
    char* p;
    size_t n;
    char* image;
};
static NT_RT nt_span nt_statics[4];
static NT_RT int nt_nstatics;

static void nt_statics_snapshot() {
    if (!__data_start || !_end || _end <= __data_start) return;
    char* hs[2][2];
    int nh = 0;
    if (__start_nt_rt && __stop_nt_rt > __start_nt_rt) { hs[nh][0] = __start_nt_rt; hs[nh][1] = __stop_nt_rt; ++nh; }
    if (nt_shared_len) {
        hs[nh][0] = nt_shared_lo; hs[nh][1] = nt_shared_lo + nt_shared_len; ++nh;
    }
    if (nh == 2 && hs[1][0] < hs[0][0]) {
        char* t0 = hs[0][0];
        char* t1 = hs[0][1];
        hs[0][0] = hs[1][0]; hs[0][1] = hs[1][1];
        hs[1][0] = t0; hs[1][1] = t1;
    }
    char* at = __data_start;
    for (int h = 0; h <= nh; ++h) {
        char* stop = h < nh ? hs[h][0] : _end;
        if (stop > _end) stop = _end;
        if (stop > at && nt_nstatics < 4) {
            nt_span* sp = &nt_statics[nt_nstatics++];
            sp->p = at;
            sp->n = (size_t)(stop - at);
            sp->image = (char*)malloc(sp->n);
            memcpy(sp->image, at, sp->n);
        }
        if (h < nh && hs[h][1] > at) at = hs[h][1];
    }
}

static void nt_statics_restore() {
    for (int i = 0; i < nt_nstatics; ++i) memcpy(nt_statics[i].p, nt_statics[i].image, nt_statics[i].n);
}

// Bytes of static storage that differ from the start-up image.
static size_t nt_statics_changed() {
    size_t c = 0;
    for (int i = 0; i < nt_nstatics; ++i)
        for (size_t k = 0; k < nt_statics[i].n; ++k) c += nt_statics[i].p[k] != nt_statics[i].image[k];
    return c;
}

static void nt_write_raw(const void* p, size_t n) {
    const char* c = (const char*)p;
    while (n) {
        ssize_t w = write(nt_proto, c, n);
        if (w <= 0) _exit(74);
        c += w;
        n -= (size_t)w;
    }
}

// SIGALRM is held while a record is written, so a timeout record never lands inside another.
static void nt_write_all(const void* p, size_t n) {
    sigset_t s, old;
    sigemptyset(&s);
    sigaddset(&s, SIGALRM);
    sigprocmask(SIG_BLOCK, &s, &old);
    nt_write_raw(p, n);
    sigprocmask(SIG_SETMASK, &old, 0);
}

static void nt_rec(const char* fmt, ...) {
    char b[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b, sizeof b - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (n > (int)sizeof b - 2) n = (int)sizeof b - 2;
    b[n++] = '\n';
    nt_write_all(b, (size_t)n);
}

// ---------------------------------------------------------------- async-signal-safe reports

static int nt_put_u(char* b, unsigned long long v, int base) {
    char t[24];
    int n = 0;
    do {
        t[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    for (int i = 0; i < n; ++i) b[i] = t[n - 1 - i];
    return n;
}

static void nt_on_fault(int sig, siginfo_t* si, void* ctx) {
    char b[256];
    int n = 0;
    uintptr_t a = (uintptr_t)si->si_addr;
    int wr = 2;  // unknown
#if defined(__x86_64__) && defined(REG_ERR)
    wr = (((ucontext_t*)ctx)->uc_mcontext.gregs[REG_ERR] & 2) ? 1 : 0;
#else
    (void)ctx;
#endif
    b[n++] = 'S'; b[n++] = ' ';
    n += nt_put_u(b + n, (unsigned long long)nt_case_idx, 10); b[n++] = ' ';
    n += nt_put_u(b + n, (unsigned long long)sig, 10); b[n++] = ' ';
    n += nt_put_u(b + n, (unsigned long long)a, 16); b[n++] = ' ';
    n += nt_put_u(b + n, (unsigned long long)wr, 10); b[n++] = ' ';
    if (nt_cur < 0) { b[n++] = '-'; b[n++] = '1'; } else n += nt_put_u(b + n, (unsigned long long)nt_cur, 10);
    b[n++] = ' ';
    n += nt_put_u(b + n, blockIdx.x, 10); b[n++] = ' ';
    n += nt_put_u(b + n, blockIdx.y, 10); b[n++] = ' ';
    n += nt_put_u(b + n, blockIdx.z, 10); b[n++] = ' ';
    b[n++] = nt_in_stack_guard(a) ? '1' : '0';
    b[n++] = '\n';
    nt_write_raw(b, (size_t)n);
    _exit(70);
}

static void nt_on_alarm(int) {
    char b[32];
    int n = 0;
    b[n++] = 'T'; b[n++] = ' ';
    n += nt_put_u(b + n, (unsigned long long)nt_case_idx, 10);
    b[n++] = '\n';
    nt_write_raw(b, (size_t)n);
    _exit(71);
}

// ---------------------------------------------------------------- scheduling

static unsigned long long nt_rng_next(unsigned long long* s) {
    unsigned long long z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Whether two sync points name one file: __builtin_FILE() of one translation unit is mostly
// one pooled string, so the pointer test settles it without a strcmp (which took ~5% of a
// builtin check's time, comparing every waiting lane with every other).
static inline int nt_same_file(const char* a, const char* b) { return a == b || strcmp(a, b) == 0; }

// Whether two waiting lanes wait at one and the same warp collective.
static int nt_same_collective(const nt_fiber* a, const nt_fiber* b) {
    return a->op == b->op && a->mask == b->mask && a->line == b->line && nt_same_file(a->file, b->file);
}

// Resolves warp collectives whose named live lanes have all arrived; 1 if any lane was released.
static int nt_resolve_warps() {
    int any = 0;
    for (unsigned w0 = 0; w0 < nt_nthreads; w0 += 32) {
        unsigned lanes = nt_nthreads - w0 < 32 ? nt_nthreads - w0 : 32;
        unsigned exist = lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1u);
        unsigned waiting = 0, done = 0;
        for (unsigned l = 0; l < lanes; ++l) {
            int st = nt_fibers[w0 + l].state;
            if (st == NT_WARP) waiting |= 1u << l;
            if (st == NT_DONE) done |= 1u << l;
        }
        if (!waiting) continue;
        unsigned ok = 0;
        for (unsigned l = 0; l < lanes; ++l)
            if ((waiting >> l) & 1u) {
                // Lanes that exited or do not exist (a partial last warp) are not waited for;
                // every other named lane must wait at the same collective: the same intrinsic
                // with the same mask (CUDA's rule for *_sync), at the same call. A named lane
                // waiting at another one never pairs with this one (that would mix values of
                // two different shuffles); when nothing else can move, synccheck reports it.
                unsigned req = nt_fibers[w0 + l].mask & exist & ~done;
                if ((req & ~waiting) != 0) continue;
                int same = 1;
                for (unsigned m = 0; m < lanes && same; ++m)
                    if ((req >> m) & 1u) same = nt_same_collective(&nt_fibers[w0 + m], &nt_fibers[w0 + l]);
                if (same) ok |= 1u << l;
            }
        if (!ok) continue;
        for (unsigned l = 0; l < lanes; ++l) {
            if (!((ok >> l) & 1u)) continue;
            nt_fiber* f = &nt_fibers[w0 + l];
            unsigned part = (f->mask & waiting) | (1u << l);
            unsigned w = (unsigned)f->width;
            if (w == 0 || w > 32 || (w & (w - 1))) w = 32;
            unsigned seg = l & ~(w - 1);
            long src = (long)l;
            unsigned long long r = f->val;
            switch (f->op) {
            case NT_W_SYNC: r = 0; break;
            case NT_W_SHFL: src = (long)seg + (long)(((unsigned)f->arg) & (w - 1)); break;
            case NT_W_UP: src = (l - seg) < (unsigned)f->arg ? (long)l : (long)l - f->arg; break;
            case NT_W_DOWN: src = (l - seg) + (unsigned)f->arg >= w ? (long)l : (long)l + f->arg; break;
            case NT_W_XOR: src = (long)(l ^ (unsigned)f->arg); if (src >= (long)(seg + w)) src = l; break;
            default: break;
            }
            if (f->op >= NT_W_SHFL && f->op <= NT_W_XOR) {
                // A source lane that is not there (exited, absent, outside the segment) yields
                // the caller's own value, as the hardware does for out-of-range lanes.
                if (src >= 0 && src < (long)lanes && ((waiting >> src) & 1u)) r = nt_fibers[w0 + src].val;
            } else if (f->op != NT_W_SYNC) {
                unsigned ballot = 0, eq = 0, cnt = 0;
                unsigned long long sum = 0, mn = 0, mx = 0, an = ~0ull, orr = 0, xr = 0;
                long long smn = 0, smx = 0;
                int first = 1;
                for (unsigned m = 0; m < lanes; ++m) {
                    if (!((part >> m) & 1u)) continue;
                    unsigned long long v = nt_fibers[w0 + m].val;
                    if (v) ballot |= 1u << m;
                    if (v == f->val) eq |= 1u << m;
                    ++cnt;
                    sum += v;
                    an &= v; orr |= v; xr ^= v;
                    long long sv = (long long)(int)(unsigned)v;
                    if (first || (unsigned)v < (unsigned)mn) mn = (unsigned)v;
                    if (first || (unsigned)v > (unsigned)mx) mx = (unsigned)v;
                    if (first || sv < smn) smn = sv;
                    if (first || sv > smx) smx = sv;
                    first = 0;
                }
                switch (f->op) {
                case NT_W_BALLOT: r = ballot; break;
                case NT_W_ANY: r = ballot != 0; break;
                case NT_W_ALL: r = ballot == part; break;
                case NT_W_MATCH_ANY: r = eq; break;
                case NT_W_MATCH_ALL: r = eq == part ? part : 0; break;
                case NT_W_RADD: r = (unsigned)sum; break;
                case NT_W_RMINU: r = mn; break;
                case NT_W_RMAXU: r = mx; break;
                case NT_W_RMIN: r = (unsigned)(int)smn; break;
                case NT_W_RMAX: r = (unsigned)(int)smx; break;
                case NT_W_RAND: r = (unsigned)an; break;
                case NT_W_ROR: r = (unsigned)orr; break;
                case NT_W_RXOR: r = (unsigned)xr; break;
                default: break;
                }
                (void)cnt;
            }
            f->res = r;
        }
        for (unsigned l = 0; l < lanes; ++l)
            if ((ok >> l) & 1u) nt_fibers[w0 + l].state = NT_READY;
        any = 1;
    }
    return any;
}

// Releases the block barrier when every live thread waits at the same __syncthreads call.
static int nt_resolve_bar() {
    int first = -1;
    unsigned cnt = 0;
    for (unsigned i = 0; i < nt_nthreads; ++i) {
        nt_fiber* f = &nt_fibers[i];
        if (f->state == NT_DONE) continue;
        if (f->state != NT_BAR) return 0;
        if (first < 0) first = (int)i;
        else if (f->line != nt_fibers[first].line || !nt_same_file(f->file, nt_fibers[first].file)) return 0;
        cnt += (unsigned)f->val;
    }
    if (first < 0) return 0;
    unsigned live = 0;
    for (unsigned i = 0; i < nt_nthreads; ++i) live += nt_fibers[i].state == NT_BAR;
    for (unsigned i = 0; i < nt_nthreads; ++i) {
        nt_fiber* f = &nt_fibers[i];
        if (f->state != NT_BAR) continue;
        f->res = f->op == 1 ? cnt : f->op == 2 ? (cnt == live) : f->op == 3 ? (cnt != 0) : 0;
        f->state = NT_READY;
    }
    return 1;
}

static int nt_same_wait(const nt_fiber* a, const nt_fiber* b) {
    if (a->state != b->state) return 0;
    if (a->state == NT_DONE || a->state == NT_READY) return 1;
    if (a->line != b->line || !nt_same_file(a->file, b->file)) return 0;
    if (a->state == NT_WARP && (a->op != b->op || a->mask != b->mask)) return 0;
    return 1;
}

static void nt_lane_range(char* b, size_t cap, unsigned bits) {
    size_t n = 0;
    b[0] = 0;
    for (unsigned l = 0; l < 32 && n + 16 < cap;) {
        if (!((bits >> l) & 1u)) { ++l; continue; }
        unsigned e = l;
        while (e + 1 < 32 && ((bits >> (e + 1)) & 1u)) ++e;
        n += (size_t)snprintf(b + n, cap - n, n ? ",%u" : "%u", l);
        if (e > l) n += (size_t)snprintf(b + n, cap - n, "-%u", e);
        l = e + 1;
    }
}

// synccheck: a warp collective some of whose named, live lanes wait at another collective or
// at a block barrier (they never arrive at this one: a full-mask *_sync in a divergent
// branch). Writes the report and returns 1 when the stuck block shows one.
static int nt_synccheck_text(char* out, size_t cap) {
    for (unsigned w0 = 0; w0 < nt_nthreads; w0 += 32) {
        unsigned lanes = nt_nthreads - w0 < 32 ? nt_nthreads - w0 : 32;
        unsigned exist = lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1u);
        for (unsigned l = 0; l < lanes; ++l) {
            const nt_fiber* f = &nt_fibers[w0 + l];
            if (f->state != NT_WARP) continue;
            unsigned elsewhere = 0;
            const nt_fiber* g = 0;
            for (unsigned m = 0; m < lanes; ++m) {
                const nt_fiber* o = &nt_fibers[w0 + m];
                if (!(((f->mask & exist) >> m) & 1u) || o->state == NT_DONE) continue;
                if (o->state == NT_BAR || (o->state == NT_WARP && !nt_same_collective(o, f))) {
                    elsewhere |= 1u << m;
                    if (!g) g = o;
                }
            }
            if (!elsewhere) continue;
            char lr[160];
            nt_lane_range(lr, sizeof lr, elsewhere);
            char there[256];
            if (g->state == NT_BAR) snprintf(there, sizeof there, "__syncthreads (%s:%d)", g->file, g->line);
            else snprintf(there, sizeof there, "%s mask 0x%08x (%s:%d)", nt_wop_name[g->op], g->mask, g->file, g->line);
            snprintf(out, cap,
                     "synccheck: block (%u,%u,%u) warp %u: %s mask 0x%08x (%s:%d) names lanes %s, which never "
                     "arrive at it: they wait at %s instead (a warp collective whose named lanes do not all "
                     "reach it, e.g. a full-mask *_sync inside a divergent branch)",
                     blockIdx.x, blockIdx.y, blockIdx.z, w0 / 32, nt_wop_name[f->op], f->mask, f->file, f->line, lr,
                     there);
            for (char* c = out; *c; ++c)
                if (*c == '\n') *c = ' ';
            return 1;
        }
    }
    return 0;
}

// Says which threads of the stuck block wait where.
static void nt_deadlock_text(char* out, size_t cap) {
    if (nt_synccheck_text(out, cap)) return;
    size_t n = 0;
    int bar_lines = 0, warps = 0, exited = 0;
    for (unsigned i = 0; i < nt_nthreads; ++i) {
        if (nt_fibers[i].state == NT_WARP) warps = 1;
        if (nt_fibers[i].state == NT_DONE) exited = 1;
    }
    for (unsigned i = 0; i < nt_nthreads; ++i)
        if (nt_fibers[i].state == NT_BAR && (i == 0 || !nt_same_wait(&nt_fibers[i], &nt_fibers[i - 1]))) ++bar_lines;
    const char* why = warps ? "a warp collective waits for lanes that wait elsewhere"
                      : bar_lines > 1 ? "threads wait at different __syncthreads calls"
                                      : "no thread can proceed";
    n += (size_t)snprintf(out + n, cap - n, "block (%u,%u,%u) of %ux%ux%u threads: %s:", blockIdx.x, blockIdx.y,
                          blockIdx.z, blockDim.x, blockDim.y, blockDim.z, why);
    (void)exited;
    unsigned i = 0;
    int groups = 0;
    while (i < nt_nthreads && n + 200 < cap) {
        unsigned j = i;
        while (j + 1 < nt_nthreads && nt_same_wait(&nt_fibers[j + 1], &nt_fibers[i])) ++j;
        const nt_fiber* f = &nt_fibers[i];
        const nt_fiber* g = &nt_fibers[j];
        if (++groups > 12) {
            n += (size_t)snprintf(out + n, cap - n, "; ...");
            break;
        }
        n += (size_t)snprintf(out + n, cap - n, "%s threads %u-%u ((%u,%u,%u)-(%u,%u,%u)) ", groups > 1 ? ";" : "",
                              i, j, f->tid.x, f->tid.y, f->tid.z, g->tid.x, g->tid.y, g->tid.z);
        if (f->state == NT_DONE) n += (size_t)snprintf(out + n, cap - n, "have exited");
        else if (f->state == NT_BAR)
            n += (size_t)snprintf(out + n, cap - n, "wait at __syncthreads (%s:%d)", f->file, f->line);
        else if (f->state == NT_WARP)
            n += (size_t)snprintf(out + n, cap - n, "wait at %s mask 0x%08x (%s:%d)", nt_wop_name[f->op], f->mask,
                                  f->file, f->line);
        else n += (size_t)snprintf(out + n, cap - n, "are runnable");
        i = j + 1;
    }
    for (size_t k = 0; k < n; ++k)
        if (out[k] == '\n') out[k] = ' ';
}

// One round of the running block slot: every ready fiber runs once, until its next sync
// point, in the policy's order (0 forward, 1 reverse, 2 seeded random). How many ran.
static unsigned nt_round(int policy, unsigned long long* rng) {
    unsigned m = 0;
    for (unsigned i = 0; i < nt_nthreads; ++i)
        if (nt_fibers[i].state == NT_READY) nt_order[m++] = i;
    if (!m) return 0;
    if (policy == 1)
        for (unsigned a = 0, b = m - 1; a < b; ++a, --b) {
            unsigned t = nt_order[a]; nt_order[a] = nt_order[b]; nt_order[b] = t;
        }
    else if (policy == 2)
        for (unsigned a = m - 1; a > 0; --a) {
            unsigned b = (unsigned)(nt_rng_next(rng) % (a + 1));
            unsigned t = nt_order[a]; nt_order[a] = nt_order[b]; nt_order[b] = t;
        }
    for (unsigned k = 0; k < m; ++k) {
        nt_fiber* f = &nt_fibers[nt_order[k]];
        nt_cur = (int)nt_order[k];
        threadIdx = f->tid;
        blockIdx = f->bid;
#if defined(__x86_64__)
        nt_ctx_switch(&nt_sched_sp, f->sp);
#else
        swapcontext(&nt_sched_uc, &f->uc);
#endif
        nt_cur = -1;
    }
    return m;
}

// The running slot is stuck or done: releases a barrier or warp collective if one can go.
// 0 progress, 1 all its threads have exited, 2 deadlock (msg says where).
static int nt_unblock(char* msg, size_t cap) {
    int live = 0;
    for (unsigned i = 0; i < nt_nthreads; ++i) live |= nt_fibers[i].state != NT_DONE;
    if (!live) return 1;
    if (nt_resolve_warps() || nt_resolve_bar()) return 0;
    nt_deadlock_text(msg, cap);
    return 2;
}

// Starts block `b` in the running slot: fresh fibers, poisoned shared memory.
static void nt_start_block(unsigned long long b, const unsigned* grid, unsigned dyn, unsigned char poison) {
    uint3 bid = uint3{(unsigned)(b % grid[0]), (unsigned)((b / grid[0]) % grid[1]),
                      (unsigned)(b / ((unsigned long long)grid[0] * grid[1]))};
    for (unsigned i = 0; i < nt_nthreads; ++i) {
        nt_fibers[i].bid = bid;
        nt_fiber_reset(&nt_fibers[i]);
    }
    blockIdx = bid;
    if (nt_shared_len) memset(nt_shared_lo, poison, nt_shared_len);
    if (dyn) memset(nt_dyn_shared_ptr, poison, dyn);
}

// Blocks in flight under the interleaved schedule: each slot has its own fibers, and its own
// copy of the block's shared memory while another slot runs (static __shared__ arrays have
// one address, so the running slot's contents are swapped in).
struct nt_slot {
    int busy;
    unsigned char* save;
};
static NT_RT nt_slot nt_slots[8];
static NT_RT int nt_live_slot;

static void nt_enter_slot(int s, unsigned dyn) {
    nt_fibers = nt_fiber_pool + (size_t)s * nt_nthreads;
    if (s == nt_live_slot) return;
    size_t shared_len = nt_shared_len;
    unsigned char* out = nt_slots[nt_live_slot].save;
    unsigned char* in = nt_slots[s].save;
    if (shared_len) {
        memcpy(out, nt_shared_lo, shared_len);
        memcpy(nt_shared_lo, in, shared_len);
    }
    if (dyn) {
        memcpy(out + shared_len, nt_dyn_shared_ptr, dyn);
        memcpy(nt_dyn_shared_ptr, in + shared_len, dyn);
    }
    nt_live_slot = s;
}

// The interleaved schedule: up to `w` blocks (in the order `perm`) in flight; at each step a
// seeded random slot runs one round, so blocks switch at barriers, warp collectives, atomics
// and fences, and a global scratch buffer two blocks share, or a block reading another's
// output, gives another result than the sequential schedules. 0, or 1 on deadlock.
static int nt_run_interleaved(unsigned long long nb, const unsigned long long* perm, unsigned w, const unsigned* grid,
                              unsigned dyn, unsigned long long* rng, unsigned char poison, char* msg, size_t cap) {
    size_t shared_len = nt_shared_len;
    for (unsigned s = 0; s < w; ++s) {
        nt_slots[s].busy = 0;
        nt_slots[s].save = (unsigned char*)malloc(shared_len + dyn + 1);
    }
    nt_live_slot = 0;
    unsigned long long next = 0;
    unsigned active = 0;
    int rc = 0;
    for (;;) {
        for (unsigned s = 0; s < w && next < nb; ++s)
            if (!nt_slots[s].busy) {
                nt_enter_slot((int)s, dyn);
                nt_start_block(perm[next++], grid, dyn, poison);
                nt_slots[s].busy = 1;
                ++active;
            }
        if (!active) break;
        unsigned pick = (unsigned)(nt_rng_next(rng) % active), s = 0;
        for (;; ++s)
            if (nt_slots[s].busy && pick-- == 0) break;
        nt_enter_slot((int)s, dyn);
        blockIdx = nt_fibers[0].bid;
        if (nt_round(2, rng)) continue;
        int u = nt_unblock(msg, cap);
        if (u == 1) {
            nt_slots[s].busy = 0;
            --active;
        } else if (u == 2) {
            rc = 1;
            break;
        }
    }
    for (unsigned s = 0; s < w; ++s) free(nt_slots[s].save);
    nt_fibers = nt_fiber_pool;
    return rc;
}

static int nt_run_grid(int entry, const unsigned* grid, const unsigned* block, unsigned dyn, int policy,
                       unsigned long long seed, unsigned char shared_poison, char* msg, size_t cap) {
    gridDim = dim3(grid[0], grid[1], grid[2]);
    blockDim = dim3(block[0], block[1], block[2]);
    nt_nthreads = block[0] * block[1] * block[2];
    unsigned long long nb = (unsigned long long)grid[0] * grid[1] * grid[2];
    // Blocks in flight: several under the random schedule (as many as fit, at most 4).
    unsigned w = policy == 2 ? 4 : 1;
    while (w > 1 && ((unsigned long long)w > nb || w * nt_nthreads > NT_MAX_FIBERS)) --w;
    nt_alloc_fibers(w * nt_nthreads);
    for (unsigned i = 0; i < w * nt_nthreads; ++i) {
        unsigned t = i % nt_nthreads;
        nt_fiber_pool[i].tid = uint3{t % block[0], (t / block[0]) % block[1], t / (block[0] * block[1])};
        nt_fiber_pool[i].lin = t;
    }
    nt_fibers = nt_fiber_pool;
    nt_kernel_call = nt_entries[entry];
    unsigned long long rng = seed;
    // Block order follows the schedule too (reverse / a seeded permutation), so blocks that
    // race on global memory give different outputs.
    static NT_RT unsigned long long* perm;
    static NT_RT unsigned long long perm_n;
    if (policy == 2) {
        if (perm_n < nb) {
            free(perm);
            perm = (unsigned long long*)malloc(nb * sizeof *perm);
            perm_n = nb;
        }
        for (unsigned long long i = 0; i < nb; ++i) perm[i] = i;
        for (unsigned long long i = nb - 1; i > 0; --i) {
            unsigned long long j = nt_rng_next(&rng) % (i + 1), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        if (w > 1) return nt_run_interleaved(nb, perm, w, grid, dyn, &rng, shared_poison, msg, cap);
    }
    for (unsigned long long k = 0; k < nb; ++k) {
        unsigned long long b = policy == 0 ? k : policy == 1 ? nb - 1 - k : perm[k];
        nt_start_block(b, grid, dyn, shared_poison);
        for (;;) {
            if (nt_round(policy, &rng)) continue;
            int u = nt_unblock(msg, cap);
            if (u == 1) {
                if (nt_weak_on) nt_weak_block_end();
                break;
            }
            if (u == 2) return 1;
        }
    }
    return 0;
}

// ---------------------------------------------------------------- buffers

struct nt_buf {
    int kind;             // 0 In, 1 Out, 2 Scratch, 3 sparse In
    unsigned char* lo;    // mapping start (a guard page)
    size_t map_len;
    unsigned char* wlo;   // accessible data pages
    unsigned char* whi;
    unsigned char* base;  // what the kernel gets
    size_t len;
    const unsigned char* src;
    unsigned long long nruns;  // sparse In: (offset, length, bytes padded to 8) records at src
    unsigned char* wrap;       // sparse In: the guard window where 32-bit-wrapped offsets land
    size_t wrap_len;
};

static unsigned char nt_out_pattern(const nt_buf* b, unsigned char* p) {
    if (b->len % 4) return 0xa5;
    static const unsigned char pat[4] = {0xa5, 0xa5, 0xa5, 0x7f};  // 0x7fa5a5a5 little-endian
    return pat[(size_t)(p - b->wlo) % 4];  // wlo is page aligned and base = wlo + 1024: same phase
}

static void nt_fill_writable(nt_buf* b) {
    if (b->len % 4 == 0) {
        unsigned* w = (unsigned*)b->wlo;
        for (size_t i = 0; i < (size_t)(b->whi - b->wlo) / 4; ++i) w[i] = 0x7fa5a5a5u;
    } else {
        memset(b->wlo, 0xa5, (size_t)(b->whi - b->wlo));
    }
    if (b->kind == 2) memset(b->base, 0, b->len);
}

// Changed bytes outside [base, base+len): count and the offset of the one farthest from the
// buffer before it, and the first after it.
static void nt_check_guard(const nt_buf* b, size_t* nbefore, size_t* firstbefore, size_t* nafter, size_t* firstafter) {
    *nbefore = *firstbefore = *nafter = *firstafter = 0;
    for (unsigned char* p = b->wlo; p < b->base; ++p)
        if (*p != nt_out_pattern(b, p)) {
            if (!*nbefore) *firstbefore = (size_t)(b->base - p);
            ++*nbefore;
        }
    for (unsigned char* p = b->base + b->len; p < b->whi; ++p)
        if (*p != nt_out_pattern(b, p)) {
            if (!*nafter) *firstafter = (size_t)(p - (b->base + b->len));
            ++*nafter;
        }
}

static void nt_set_input_slack(nt_buf* b, unsigned char before, unsigned char after) {
    mprotect(b->wlo, (size_t)(b->whi - b->wlo), PROT_READ | PROT_WRITE);
    memset(b->wlo, before, (size_t)(b->base - b->wlo));
    memset(b->base + b->len, after, (size_t)(b->whi - (b->base + b->len)));
    mprotect(b->wlo, (size_t)(b->whi - b->wlo), PROT_READ);
}

// Moves an input so that it STARTS at its page (right after the leading guard page): reads
// before the start then fault even when their bytes do not change the output. Used for the
// input-poison run; the other runs keep the end at the trailing guard page.
static void nt_place_at_start(long ci, unsigned arg, nt_buf* b, unsigned char poison) {
    mprotect(b->wlo, (size_t)(b->whi - b->wlo), PROT_READ | PROT_WRITE);
    memmove(b->wlo, b->base, b->len);
    b->base = b->wlo;
    memset(b->base + b->len, poison, (size_t)(b->whi - (b->base + b->len)));
    mprotect(b->wlo, (size_t)(b->whi - b->wlo), PROT_READ);
    nt_rec("M %ld %u I %lx %zu %lx %lx", ci, arg, (unsigned long)b->base, b->len, (unsigned long)b->lo,
           (unsigned long)(b->lo + b->map_len));
}

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0  // a hint then; nt_place_sparse checks where the window landed
#endif

// A sparse input (a table past 2^31 bytes of which the case gathers a few rows): one
// PROT_NONE, MAP_NORESERVE mapping (no memory behind it), whose pages holding a run are made
// readable and filled: reading any other row faults, and untouched pages are never allocated.
// When the table passes 2^31 bytes, a second PROT_NONE window 2^31 bytes before its start
// catches a row offset computed in a signed 32-bit int (base + (int)off lands there).
static void nt_place_sparse(nt_buf* b) {
    size_t pg = (size_t)nt_page, len16 = (b->len + 15) / 16 * 16;
    size_t npages = (len16 + pg - 1) / pg;
    if (!npages) npages = 1;
    b->map_len = (npages + 2) * pg;
    b->lo = (unsigned char*)mmap(0, b->map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (b->lo == (unsigned char*)MAP_FAILED) {
        fprintf(stderr, "ninfer: cannot reserve %zu bytes for a sparse input\n", b->map_len);
        _exit(75);
    }
    b->wlo = b->lo + pg;
    b->whi = b->lo + (npages + 1) * pg;
    b->base = b->whi - len16;
    b->wrap = 0;
    b->wrap_len = 0;
    const unsigned long long two31 = 1ull << 31;
    if (b->len > two31 && (uintptr_t)b->base > two31) {
        // base + off - 2^32 for off in (2^31, len): [base - 2^31, base + len - 2^32).
        uintptr_t w0 = ((uintptr_t)b->base - two31) & ~(uintptr_t)(pg - 1);
        size_t wl = ((uintptr_t)b->base + b->len - (1ull << 32) - w0 + 2 * pg) & ~(pg - 1);
        void* w = mmap((void*)w0, wl, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
                       -1, 0);
        if (w == (void*)w0) {
            b->wrap = (unsigned char*)w;
            b->wrap_len = wl;
        } else if (w != MAP_FAILED) {
            munmap(w, wl);  // an old kernel ignoring the flag put it elsewhere
        }
    }
    const unsigned char* p = b->src;
    for (unsigned long long r = 0; r < b->nruns; ++r) {
        unsigned long long off, n;
        memcpy(&off, p, 8);
        memcpy(&n, p + 8, 8);
        p += 16;
        if (n) {
            uintptr_t a = ((uintptr_t)b->base + off) & ~(uintptr_t)(pg - 1);
            uintptr_t e = ((uintptr_t)b->base + off + n + pg - 1) & ~(uintptr_t)(pg - 1);
            mprotect((void*)a, e - a, PROT_READ | PROT_WRITE);
            memcpy(b->base + off, p, n);
            mprotect((void*)a, e - a, PROT_READ);
        }
        p += (n + 7) / 8 * 8;
    }
}

static void nt_place(nt_buf* b) {
    if (b->kind == 3) {
        nt_place_sparse(b);
        return;
    }
    size_t pg = (size_t)nt_page;
    size_t span = b->kind == 0 ? (b->len + 15) / 16 * 16 : 1024 + b->len + 1024;
    size_t npages = (span + pg - 1) / pg;
    if (!npages) npages = 1;
    b->map_len = (npages + 2) * pg;
    b->lo = (unsigned char*)mmap(0, b->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b->lo == (unsigned char*)MAP_FAILED) {
        fprintf(stderr, "ninfer: cannot map %zu bytes\n", b->map_len);
        _exit(75);
    }
    b->wlo = b->lo + pg;
    b->whi = b->lo + (npages + 1) * pg;
    mprotect(b->lo, pg, PROT_NONE);
    mprotect(b->whi, pg, PROT_NONE);
    if (b->kind == 0) {
        // Inputs end (rounded up to 16) right at the trailing guard page.
        b->base = b->whi - (b->len + 15) / 16 * 16;
        if (b->len) memcpy(b->base, b->src, b->len);
        nt_set_input_slack(b, 0xa5, 0xa5);
    } else {
        b->base = b->wlo + 1024;
        nt_fill_writable(b);
    }
}

// ---------------------------------------------------------------- main

struct nt_reader {
    const unsigned char* p;
    const unsigned char* end;
    unsigned long long u64() {
        unsigned long long v = 0;
        if (p + 8 > end) { fprintf(stderr, "ninfer: launch file truncated\n"); _exit(76); }
        memcpy(&v, p, 8);
        p += 8;
        return v;
    }
};

// The weak-visibility run (nt_run_case), when every schedule agreed and the forward run used
// an atomic or a fence (without them, blocks cannot hand each other data the schedules would
// not already show racing): blocks in order, each one's plain writes visible to the others
// only from its __threadfence() on (host_shim.h). An output that differs from the forward
// run's was read by another block before it was published. 1 when it reported.
static int nt_weak_check(long ci, int entry, const unsigned* grid, const unsigned* block, unsigned dyn,
                         unsigned long long seed, nt_buf* bufs, unsigned nargs, int out_arg,
                         const unsigned char* first_out, size_t out_len, char* msg, size_t msg_cap) {
    for (unsigned i = 0; i < nargs; ++i)
        if (bufs[i].kind == 1 || bufs[i].kind == 2) nt_fill_writable(&bufs[i]);
    nt_statics_restore();
    for (unsigned i = 0; i < nargs; ++i)
        if (bufs[i].kind == 1 || bufs[i].kind == 2) nt_weak_add(bufs[i].wlo, (size_t)(bufs[i].whi - bufs[i].wlo));
    for (int i = 0; i < nt_nstatics; ++i) nt_weak_add(nt_statics[i].p, nt_statics[i].n);
    nt_weak_begin();
    int stuck = nt_run_grid(entry, grid, block, dyn, 0, seed, 0xc3, msg, msg_cap);
    nt_weak_end();
    size_t nd = 0, first = 0;
    for (size_t k = 0; k < out_len && !stuck; ++k)
        if (first_out[k] != bufs[out_arg].base[k]) {
            if (!nd) first = k;
            ++nd;
        }
    if (!nd && !stuck) return 0;
    nt_rec("V %ld %zu %zu", ci, nd, first);
    return 1;
}

// The checks after the schedule runs (nt_run_case).
// One more forward run checks two things at once (the common case costs one run): every
// input moved to start at its page (reads before the start fault) with other bytes in its
// slack (reads past an input change the output), and shared memory starting as NaN bytes
// instead of 0xc3 (initcheck). Only an output that changes is told apart by further runs:
// the NaN poison alone, then each input's slack before/after alone. When the schedules
// already disagree (a race, reported as such), shared memory keeps its finite poison.
static void nt_poison_checks(long ci, int entry, const unsigned* grid, const unsigned* block, unsigned dyn,
                             unsigned long long seed, nt_buf* bufs, unsigned nargs, int out_arg,
                             const unsigned char* first_out, size_t out_len, int agree, char* msg, size_t msg_cap) {
    const unsigned char finite_poison = 0xc3, nan_poison = 0xff;
    int failed = 0;
    int ninputs = 0, combined = 0, attributed = 0;
    for (unsigned i = 0; i < nargs; ++i)
        if (bufs[i].kind == 0) {
            ++ninputs;
            nt_place_at_start(ci, i, &bufs[i], 0xa5);
            nt_argv[i].p = bufs[i].base;
        }
    for (int pass = -2; pass < (int)nargs * 2; ++pass) {
        // pass -2: both; -1: shared poison alone; then input pass/2, after (even) or before (odd).
        int target = pass < 0 ? -1 : pass / 2, after = pass < 0 ? 1 : pass % 2 == 0;
        if ((target >= 0 && bufs[target].kind != 0) || (pass == -1 && !agree)) continue;
        for (unsigned i = 0; i < nargs; ++i)
            if (bufs[i].kind == 0) {
                int hit = pass == -2 || target == (int)i;
                nt_set_input_slack(&bufs[i], hit && (pass == -2 || !after) ? 0x5a : 0xa5,
                                   hit && (pass == -2 || after) ? 0x5a : 0xa5);
            }
        for (unsigned i = 0; i < nargs; ++i)
            if (bufs[i].kind == 1 || bufs[i].kind == 2) nt_fill_writable(&bufs[i]);
        nt_statics_restore();
        unsigned char sp = pass < 0 && agree ? nan_poison : finite_poison;
        int stuck = nt_run_grid(entry, grid, block, dyn, 0, seed, sp, msg, msg_cap);
        if (stuck && pass >= 0) break;
        size_t nd = 0, first = 0;
        for (size_t k = 0; k < out_len && !stuck; ++k)
            if (first_out[k] != bufs[out_arg].base[k]) {
                if (!nd) first = k;
                ++nd;
            }
        if (pass == -2) {
            if (!nd && !stuck) break;  // the common case: one extra run
            combined = 1;
        } else if (pass == -1) {
            if (nd || stuck) {  // stuck: its control flow depends on the garbage
                nt_rec("U %ld %zu %zu", ci, nd, first);
                failed = 1;
                break;
            }
            if (!ninputs) break;
        } else if (nd) {
            nt_rec("P %ld %d %s", ci, target, after ? "after" : "before");
            attributed = 1;
            break;
        }
    }
    if (combined && !attributed && !failed && ninputs) nt_rec("P %ld -1 around", ci);
}

static void nt_run_case(long ci, nt_reader& rd, int skip) {
    int entry = (int)rd.u64();
    unsigned long long timeout_ms = rd.u64(), seed = rd.u64(), flags = rd.u64();
    unsigned grid[3], block[3];
    for (int i = 0; i < 3; ++i) grid[i] = (unsigned)rd.u64();
    for (int i = 0; i < 3; ++i) block[i] = (unsigned)rd.u64();
    unsigned dyn = (unsigned)rd.u64();
    unsigned nargs = (unsigned)rd.u64();
    if (nargs > 64) { fprintf(stderr, "ninfer: too many arguments\n"); _exit(76); }
    nt_buf bufs[64];
    int out_arg = -1;
    for (unsigned i = 0; i < nargs; ++i) {
        unsigned long long kind = rd.u64(), v = rd.u64();
        bufs[i].kind = -1;
        bufs[i].wrap = 0;
        bufs[i].wrap_len = 0;
        if (kind == 6) {
            bufs[i].kind = 3;
            bufs[i].len = (size_t)v;
            bufs[i].nruns = rd.u64();
            bufs[i].src = rd.p;
            for (unsigned long long r = 0; r < bufs[i].nruns; ++r) {
                rd.u64();
                rd.p += (rd.u64() + 7) / 8 * 8;
                if (rd.p > rd.end) { fprintf(stderr, "ninfer: launch file truncated\n"); _exit(76); }
            }
        } else if (kind <= 2) {
            bufs[i].kind = (int)kind;
            bufs[i].len = (size_t)v;
            if (kind == 0) {
                bufs[i].src = rd.p;
                rd.p += (v + 7) / 8 * 8;
            }
            if (kind == 1) out_arg = (int)i;
        } else if (kind == 3) {
            nt_argv[i].i = (long long)(int)(unsigned)v;
        } else if (kind == 4) {
            nt_argv[i].i = (long long)v;
        } else {
            unsigned bits = (unsigned)v;
            float f;
            memcpy(&f, &bits, 4);
            nt_argv[i].i = 0;
            nt_argv[i].f = f;
        }
    }
    if (skip) return;
    nt_case_idx = ci;
    nt_rec("B %ld", ci);
    for (unsigned i = 0; i < nargs; ++i)
        if (bufs[i].kind >= 0) {
            nt_place(&bufs[i]);
            nt_argv[i].p = bufs[i].base;
            unsigned char* lo = bufs[i].wrap ? bufs[i].wrap : bufs[i].lo;
            nt_rec("M %ld %u %c %lx %zu %lx %lx", ci, i, "IOSI"[bufs[i].kind], (unsigned long)bufs[i].base, bufs[i].len,
                   (unsigned long)lo, (unsigned long)(bufs[i].lo + bufs[i].map_len));
        }
    // Dynamic shared memory ends right before a guard page as well.
    size_t pg = (size_t)nt_page, dspan = ((size_t)dyn + 15) / 16 * 16;
    size_t dpages = (dspan + pg - 1) / pg;
    if (!dpages) dpages = 1;
    size_t dmap = (dpages + 2) * pg;
    unsigned char* dlo = (unsigned char*)mmap(0, dmap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(dlo, pg, PROT_NONE);
    mprotect(dlo + (dpages + 1) * pg, pg, PROT_NONE);
    nt_dyn_shared_ptr = dlo + (dpages + 1) * pg - dspan;
    nt_rec("M %ld 4294967295 D %lx %u %lx %lx", ci, (unsigned long)nt_dyn_shared_ptr, dyn, (unsigned long)dlo,
           (unsigned long)(dlo + dmap));

    struct itimerval tv;
    memset(&tv, 0, sizeof tv);
    tv.it_value.tv_sec = (time_t)(timeout_ms / 1000);
    tv.it_value.tv_usec = (suseconds_t)((timeout_ms % 1000) * 1000);
    setitimer(ITIMER_REAL, &tv, 0);

    static NT_RT char msg[4096];
    unsigned char* first_out = 0;
    size_t out_len = out_arg >= 0 ? bufs[out_arg].len : 0;
    // Every schedule starts shared memory with the same finite poison, so a difference between
    // schedules is the order's doing (a race); nt_poison_checks then changes only the
    // poison, to NaN bytes (0xff: NaN as f32, f16 and bf16, -1 as integers), so an output that
    // depends on shared memory the kernel never wrote changes there (0 x NaN is NaN).
    const unsigned char shared_poison[3] = {0xc3, 0xc3, 0xc3};
    int nruns = (flags & 1) ? 1 : 3;
    int failed = 0, agree = 1, synced = 0;
    for (int run = 0; run < nruns && !failed; ++run) {
        nt_sync_seen = 0;
        for (unsigned i = 0; i < nargs; ++i)
            if (bufs[i].kind == 1 || bufs[i].kind == 2) nt_fill_writable(&bufs[i]);
        nt_statics_restore();
        if (nt_run_grid(entry, grid, block, dyn, run, seed, shared_poison[run], msg, sizeof msg)) {
            nt_rec("X %ld %s", ci, msg);
            failed = 1;
            break;
        }
        for (unsigned i = 0; i < nargs; ++i)
            if (bufs[i].kind == 1 || bufs[i].kind == 2) {
                size_t nb, fb, na, fa;
                nt_check_guard(&bufs[i], &nb, &fb, &na, &fa);
                if (nb || na) {
                    nt_rec("G %ld %u %d %zu %zu %zu %zu", ci, i, run, nb, fb, na, fa);
                    failed = 1;
                }
            }
        if (failed) break;
        if (out_arg >= 0) {
            char h[96];
            int n = snprintf(h, sizeof h, "R %ld %d %zu\n", ci, run, out_len);
            nt_write_all(h, (size_t)n);
            nt_write_all(bufs[out_arg].base, out_len);
            if (run == 0) {
                first_out = (unsigned char*)malloc(out_len + 1);
                memcpy(first_out, bufs[out_arg].base, out_len);
            } else if (memcmp(first_out, bufs[out_arg].base, out_len) != 0) {
                agree = 0;
            }
        }
        if (run == 0) {
            synced = nt_sync_seen;
            size_t w = nt_statics_changed();
            if (w) nt_rec("W %ld %zu", ci, w);
        }
    }
    if (!failed && agree && synced && out_arg >= 0 && first_out)
        failed = nt_weak_check(ci, entry, grid, block, dyn, seed, bufs, nargs, out_arg, first_out, out_len, msg,
                               sizeof msg);
    if (!failed && out_arg >= 0 && first_out)
        nt_poison_checks(ci, entry, grid, block, dyn, seed, bufs, nargs, out_arg, first_out, out_len, agree, msg,
                         sizeof msg);
    free(first_out);
    memset(&tv, 0, sizeof tv);
    setitimer(ITIMER_REAL, &tv, 0);
    for (unsigned i = 0; i < nargs; ++i)
        if (bufs[i].kind >= 0) {
            munmap(bufs[i].lo, bufs[i].map_len);
            if (bufs[i].wrap) munmap(bufs[i].wrap, bufs[i].wrap_len);
        }
    munmap(dlo, dmap);
    nt_rec("D %ld", ci);
    nt_case_idx = -1;
}

int main(int argc, char** argv) {
    if (argc != 3) return 2;
    // The protocol keeps the original stdout; the kernel's printf goes to stderr.
    nt_proto = dup(1);
    dup2(2, 1);
#if defined(__linux__)
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) _exit(77);
#endif
    nt_page = sysconf(_SC_PAGESIZE);
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) return 2;
    struct stat st;
    if (fstat(fd, &st) != 0) return 2;
    unsigned char* data = (unsigned char*)malloc((size_t)st.st_size + 8);
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, data + got, (size_t)st.st_size - got);
        if (r <= 0) return 2;
        got += (size_t)r;
    }
    close(fd);
    long start = atol(argv[2]);

    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_sp = malloc(1 << 16);
    ss.ss_size = 1 << 16;
    sigaltstack(&ss, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = nt_on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, 0);
    sigaction(SIGBUS, &sa, 0);
    sigaction(SIGFPE, &sa, 0);
    sigaction(SIGILL, &sa, 0);
    struct sigaction al;
    memset(&al, 0, sizeof al);
    al.sa_handler = nt_on_alarm;
    al.sa_flags = SA_ONSTACK;
    sigaction(SIGALRM, &al, 0);

    nt_order = (unsigned*)malloc(1024 * sizeof(unsigned));
    nt_alloc_fibers(1);
    if (!nt_shared_locate()) {
        fprintf(stderr, "ninfer host runner: the kernel's static shared memory (the executable's TLS segment) was not found: dl_iterate_phdr gave no dlpi_tls_data\n");
        return 3;
    }
    nt_statics_snapshot();
    nt_reader rd{data, data + st.st_size};
    if (st.st_size < 16 || memcmp(data, "NTLAUNCH", 8) != 0) return 2;
    rd.p += 8;
    long ncases = (long)rd.u64();
    for (long ci = 0; ci < ncases; ++ci) nt_run_case(ci, rd, ci < start);
    return 0;
}
