// Fused attention forward on Hopper's warpgroup Tensor Cores (lesson 16's last rung): the tiled
// algorithm of flash_attention.cu with the machinery of lesson 12b's GEMM ladder.
//   * Q, K, V and O are [heads][N][D] row-major FP16 or BF16 (-DFLASH_BF16=1 builds BF16); D is 64
//     or 128. The TMA reads them through 3-D tensor maps, so rows past N arrive as zeros.
//   * A block owns BR = 128 query rows of one head and has three warpgroups. The producer (one
//     thread of warpgroup 0) copies the Q tile once, then each K and V tile of BC = 128 keys into
//     a ring of STAGES buffers, each guarded by "full" mbarriers (which count the bytes) and an
//     "empty" one (the consumers hand the buffer back).
//   * Two consumer warpgroups own 64 query rows each. Per K/V tile: S = Q K^T with wgmma, both
//     operands read from shared memory; the online softmax on S's registers (the running max and
//     sum per row, FP32; the four lanes that share a row exchange maxima with shuffles); P packed
//     to 16 bits in registers, laid out as wgmma's register A operand; O += P V with wgmma, V read
//     from shared memory, issued together with the next tile's S. O stays in registers, rescaled
//     when a tile raises a row's max.
//   * The producer gives registers back (setmaxnreg) so that the consumers can hold S (64 floats a
//     thread), O (D / 2) and P (32 registers) without spilling.
//   * Causal: the tiles after the block's last row are never loaded, the diagonal one masked.
//   * PINGPONG (the default kernels; "_serial" ones without): the two consumers take turns to
//     issue their products, so one's softmax runs while the other's products do (FlashAttention-3).
// hopper/build.py puts hopper_common.cuh first; NVRTC builds it alone, for sm_90a only.

#ifndef FLASH_BF16
#define FLASH_BF16 0
#endif
#if FLASH_BF16
#define FLASH_TYPES ".bf16.bf16"
#else
#define FLASH_TYPES ".f16.f16"
#endif

namespace flash_hopper {

using namespace hopper;

constexpr int BR = 128;                // query rows per block: two consumer warpgroups of 64
constexpr int BC = 128;                // keys per K/V tile
constexpr int STAGES = 2;              // K/V buffers in the ring
constexpr int ROW = 128;               // bytes of a swizzled row: 64 16-bit values, a TMA box
constexpr int PRODUCER_REGS = 24, CONSUMER_REGS = 240;    // 128 x 24 + 256 x 240 <= 65536
#define FLASH_NEG_INF (__int_as_float(0xff800000u))

// Where things live in shared memory (from a 1024-byte aligned base), for head width D: each tile
// is D / 64 boxes of 64 columns, a box its rows of 128 bytes in the TMA's 128-byte swizzle.
template <int D> struct Layout {
    static constexpr int BOXES = D / 64;
    static constexpr int Q_BOX = BR * ROW, KV_BOX = BC * ROW;       // bytes of one box
    static constexpr int Q_BYTES = BOXES * Q_BOX, KV_BYTES = BOXES * KV_BOX;
    static constexpr int K_AT = Q_BYTES;
    static constexpr int V_AT = K_AT + STAGES * KV_BYTES;
    // then the mbarriers: q_full, k_full[STAGES], v_full[STAGES], empty[STAGES]
    static constexpr int BARRIERS_AT = V_AT + STAGES * KV_BYTES;
    static constexpr int BYTES = 1024 + BARRIERS_AT + 8 * (1 + 3 * STAGES);   // + alignment
};

__device__ __forceinline__ u32 pack_fp16(float lo, float hi) {
    u32 r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
__device__ __forceinline__ u32 pack_bf16(float lo, float hi) {
    u32 r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
__device__ __forceinline__ u32 pack(float lo, float hi) {
    return FLASH_BF16 ? pack_bf16(lo, hi) : pack_fp16(lo, hi);
}

__device__ __forceinline__ float exp2_approx(float x) {      // 2^x; 2^-inf = +0
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ float maxf(float a, float b) { return a > b ? a : b; }

template <int N> __device__ __forceinline__ void fence_floats(float (&d)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i]) :: "memory");
}
template <int N> __device__ __forceinline__ void fence_words(u32 (&a)[N][4]) {
#pragma unroll
    for (int i = 0; i < N; ++i)
#pragma unroll
        for (int e = 0; e < 4; ++e) asm volatile("" : "+r"(a[i][e]) :: "memory");
}

// S (64 x 128) = Q K^T over one k16 step, or += (add): A = 64 rows of Q, B = 128 keys of K, both
// K-major in shared memory (transpose immediates 0, 0).
__device__ __forceinline__ void mma_qk(float (&d)[64], u64 da, u64 db, int add) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32" FLASH_TYPES " {" WGMMA_R64 "}, "
        "%64, %65, p, 1, 1, 0, 0;\n}\n"
        : WGMMA_D64(d)
        : "l"(da), "l"(db), "r"(add));
}

// O (64 x D) += P (64 x 16, four registers a thread, as an mma.sync A fragment) V (16 x D, N-major
// in shared memory: transpose immediate 1).
template <int D> struct MmaPV;

template <> struct MmaPV<64> {
    static __device__ __forceinline__ void run(float (&d)[32], const u32 (&a)[4], u64 db) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n64k16.f32" FLASH_TYPES " {" WGMMA_R32 "}, "
            "{%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
            : WGMMA_D32(d)
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
    }
};

template <> struct MmaPV<128> {
    static __device__ __forceinline__ void run(float (&d)[64], const u32 (&a)[4], u64 db) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n128k16.f32" FLASH_TYPES " {" WGMMA_R64 "}, "
            "{%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
            : WGMMA_D64(d)
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
    }
};

// K-major operand (Q, K): 8-row groups 1024 bytes apart; a k16 step moves 32 bytes along the row.
__device__ __forceinline__ u64 desc_k_major(u32 addr) { return descriptor(addr, 16, 1024); }
// N-major operand (V): 64-column boxes `box_bytes` apart, 8-row (key) groups 1024 bytes apart.
__device__ __forceinline__ u64 desc_n_major(u32 addr, u32 box_bytes) {
    return descriptor(addr, box_bytes, 1024);
}

// The producer: Q once, then K and V tile by tile (K first: S can start before V has landed).
template <int D>
__device__ __forceinline__ void produce(const TensorMap* mq, const TensorMap* mk,
                                        const TensorMap* mv, u32 base, u64* bars, int q0,
                                        int head, int tiles) {
    using L = Layout<D>;
    u64* q_full = bars;
    u64* k_full = bars + 1;
    u64* v_full = k_full + STAGES;
    u64* empty = v_full + STAGES;
    mbar_arrive_expect_tx(smem_addr(q_full), L::Q_BYTES);
    for (int b = 0; b < L::BOXES; ++b)
        tma_load_3d(base + b * L::Q_BOX, mq, smem_addr(q_full), b * 64, q0, head);
    for (int j = 0; j < tiles; ++j) {
        const int s = j % STAGES;
        mbar_wait(smem_addr(&empty[s]), ((j / STAGES) & 1) ^ 1);    // first pass: free
        const u32 k_at = base + L::K_AT + s * L::KV_BYTES, v_at = base + L::V_AT + s * L::KV_BYTES;
        mbar_arrive_expect_tx(smem_addr(&k_full[s]), L::KV_BYTES);
        for (int b = 0; b < L::BOXES; ++b)
            tma_load_3d(k_at + b * L::KV_BOX, mk, smem_addr(&k_full[s]), b * 64, j * BC, head);
        mbar_arrive_expect_tx(smem_addr(&v_full[s]), L::KV_BYTES);
        for (int b = 0; b < L::BOXES; ++b)
            tma_load_3d(v_at + b * L::KV_BOX, mv, smem_addr(&v_full[s]), b * 64, j * BC, head);
    }
}

// S = Q K^T for the warpgroup's 64 rows and one K tile: D / 16 wgmmas m64n128k16, issued, not
// waited for.
template <int D>
__device__ __forceinline__ void issue_qk(float (&sc)[BC / 2], u32 q_rows, u32 k_at) {
    using L = Layout<D>;
    wgmma_fence();
    fence_floats(sc);
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
        mma_qk(sc, desc_k_major(q_rows + (kk / 4) * L::Q_BOX + (kk % 4) * 32),
               desc_k_major(k_at + (kk / 4) * L::KV_BOX + (kk % 4) * 32), kk > 0);
    wgmma_commit();
}

// O += P V for one V tile: BC / 16 wgmmas m64nDk16, P from registers; issued, not waited for.
template <int D>
__device__ __forceinline__ void issue_pv(float (&o)[D / 2], u32 (&pa)[BC / 16][4], u32 v_at) {
    wgmma_fence();
    fence_floats(o);
    fence_words(pa);
#pragma unroll
    for (int kk = 0; kk < BC / 16; ++kk)
        MmaPV<D>::run(o, pa[kk], desc_n_major(v_at + kk * 16 * ROW, Layout<D>::KV_BOX));
    wgmma_commit();
}

// The online softmax of one S tile (raw scores) for a thread's two rows: mask keys past N (and,
// causal, after the row), raise the running max, rescale O and the running sum by 2^(m - m'),
// and turn S into P = 2^(s scale - m' scale), packed as the A operand of BC / 16 k16 steps.
template <int D, bool CAUSAL>
__device__ __forceinline__ void softmax_tile(float (&sc)[BC / 2], float (&o)[D / 2],
                                             u32 (&pa)[BC / 16][4], float (&row_max)[2],
                                             float (&row_sum)[2], int k0, int N, int row_a,
                                             int first_row, float scale_log2, int t) {
    const bool edge = k0 + BC > N || (CAUSAL && k0 + BC - 1 > first_row);
    float tile_max[2] = {FLASH_NEG_INF, FLASH_NEG_INF};
#pragma unroll
    for (int n = 0; n < BC / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            float v = sc[n * 4 + e];
            if (edge) {
                const int key = k0 + n * 8 + 2 * t + (e % 2);
                if (key >= N || (CAUSAL && key > row_a + (e < 2 ? 0 : 8))) v = FLASH_NEG_INF;
            }
            sc[n * 4 + e] = v;
            tile_max[e / 2] = maxf(tile_max[e / 2], v);
        }
    float rescale[2], shift[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        tile_max[h] = maxf(tile_max[h], __shfl_xor_sync(0xffffffffu, tile_max[h], 1));
        tile_max[h] = maxf(tile_max[h], __shfl_xor_sync(0xffffffffu, tile_max[h], 2));
        const float m_new = maxf(row_max[h], tile_max[h]);
        shift[h] = m_new == FLASH_NEG_INF ? 0.f : m_new * scale_log2;     // no key yet: no NaN
        rescale[h] = exp2_approx(row_max[h] * scale_log2 - shift[h]);
        row_max[h] = m_new;
        row_sum[h] *= rescale[h];
    }
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
        o[n * 4 + 0] *= rescale[0]; o[n * 4 + 1] *= rescale[0];
        o[n * 4 + 2] *= rescale[1]; o[n * 4 + 3] *= rescale[1];
    }
#pragma unroll
    for (int n = 0; n < BC / 8; ++n) {
        const float p0 = exp2_approx(fmaf(sc[n * 4 + 0], scale_log2, -shift[0]));
        const float p1 = exp2_approx(fmaf(sc[n * 4 + 1], scale_log2, -shift[0]));
        const float p2 = exp2_approx(fmaf(sc[n * 4 + 2], scale_log2, -shift[1]));
        const float p3 = exp2_approx(fmaf(sc[n * 4 + 3], scale_log2, -shift[1]));
        row_sum[0] += p0 + p1;
        row_sum[1] += p2 + p3;
        pa[n / 2][(n % 2) * 2 + 0] = pack(p0, p1);
        pa[n / 2][(n % 2) * 2 + 1] = pack(p2, p3);
    }
}

// Named barriers 1 and 2 (0 is __syncthreads) order the two consumer warpgroups' wgmma issues:
// a warpgroup issues its next products only after the other has issued its own, so the tensor
// cores run one warpgroup's products while the other computes its softmax (FlashAttention-3's
// "ping-pong"). bar.sync waits for 256 threads: its own 128, and the other's 128 arriving.
__device__ __forceinline__ void my_turn(int part) {
    asm volatile("bar.sync %0, 256;" :: "r"(1 + part) : "memory");
}
__device__ __forceinline__ void your_turn(int part) {
    asm volatile("bar.arrive %0, 256;" :: "r"(2 - part) : "memory");
}

// One consumer warpgroup: 64 query rows (`part` 0 or 1 of the block's 128). Per K/V tile j: the
// softmax of S_j, then O += P_j V_j and S_(j+1) = Q K_(j+1)^T issued together (the tensor cores
// get both at once), then a wait for P V (which frees buffer j) and one for S.
template <int D, bool CAUSAL, bool PINGPONG>
__device__ __forceinline__ void consume(u32 base, u64* bars, u16* O, int N, float scale_log2,
                                        int q0, int head, int tiles, int part) {
    using L = Layout<D>;
    u64* q_full = bars;
    u64* k_full = bars + 1;
    u64* v_full = k_full + STAGES;
    u64* empty = v_full + STAGES;
    const int thread = threadIdx.x % 128, warp = thread / 32, lane = thread % 32;
    const int g = lane / 4, t = lane % 4;             // fragment row group and column pair
    const int row_a = q0 + part * 64 + warp * 16 + g, row_b = row_a + 8;
    const int first_row = q0 + part * 64;
    const u32 q_rows = base + part * 64 * ROW;         // this warpgroup's rows in each Q box
    auto k_at = [&](int j) { return base + L::K_AT + (j % STAGES) * L::KV_BYTES; };
    auto v_at = [&](int j) { return base + L::V_AT + (j % STAGES) * L::KV_BYTES; };
    auto parity = [](int j) { return u32((j / STAGES) & 1); };

    float o[D / 2];                                    // O: 64 rows x D for the warpgroup
#pragma unroll
    for (int i = 0; i < D / 2; ++i) o[i] = 0.f;
    float row_max[2] = {FLASH_NEG_INF, FLASH_NEG_INF};    // raw scores (not yet scaled)
    float row_sum[2] = {0.f, 0.f};                     // this lane's part of l
    float sc[BC / 2];
    u32 pa[BC / 16][4];

    if (PINGPONG && part == 1) your_turn(part);        // warpgroup 0 issues first
    mbar_wait(smem_addr(q_full), 0);
    mbar_wait(smem_addr(&k_full[0]), 0);
    if (PINGPONG) my_turn(part);
    issue_qk<D>(sc, q_rows, k_at(0));
    if (PINGPONG) your_turn(part);
    wgmma_wait<0>();
    fence_floats(sc);
    for (int j = 0; j < tiles; ++j) {
        softmax_tile<D, CAUSAL>(sc, o, pa, row_max, row_sum, j * BC, N, row_a, first_row,
                                scale_log2, t);
        const bool more = j + 1 < tiles;
        mbar_wait(smem_addr(&v_full[j % STAGES]), parity(j));
        if (more) mbar_wait(smem_addr(&k_full[(j + 1) % STAGES]), parity(j + 1));
        if (PINGPONG) my_turn(part);
        issue_pv<D>(o, pa, v_at(j));
        if (more) issue_qk<D>(sc, q_rows, k_at(j + 1));
        if (PINGPONG) your_turn(part);
        if (more) wgmma_wait<1>(); else wgmma_wait<0>();
        fence_floats(o);
        fence_words(pa);
        if (thread == 0) mbar_arrive(smem_addr(&empty[j % STAGES]));    // buffer j is free
        wgmma_wait<0>();
        fence_floats(sc);
    }
    if (PINGPONG && part == 0) my_turn(part);          // match the other's last arrival

    // l: the four lanes of a row hold parts of it; then O / l, written once.
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        row_sum[h] += __shfl_xor_sync(0xffffffffu, row_sum[h], 1);
        row_sum[h] += __shfl_xor_sync(0xffffffffu, row_sum[h], 2);
    }
    const float inv_a = 1.f / row_sum[0], inv_b = 1.f / row_sum[1];
    u16* out = O + (size_t)head * N * D;
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
        const int col = n * 8 + 2 * t;
        if (row_a < N)
            *reinterpret_cast<u32*>(out + (size_t)row_a * D + col) =
                pack(o[n * 4 + 0] * inv_a, o[n * 4 + 1] * inv_a);
        if (row_b < N)
            *reinterpret_cast<u32*>(out + (size_t)row_b * D + col) =
                pack(o[n * 4 + 2] * inv_b, o[n * 4 + 3] * inv_b);
    }
}

template <int D, bool CAUSAL, bool PINGPONG>
__device__ __forceinline__ void forward(const TensorMap* mq, const TensorMap* mk,
                                        const TensorMap* mv, u16* O, int N, float scale_log2) {
    using L = Layout<D>;
    extern __shared__ unsigned char smem_raw[];
    const u32 raw = smem_addr(smem_raw);
    const u32 base = (raw + 1023) & ~1023u;            // the 128-byte swizzle's 1024-byte groups
    u64* bars = reinterpret_cast<u64*>(smem_raw + (base - raw) + L::BARRIERS_AT);
    const int tile = CAUSAL ? gridDim.x - 1 - blockIdx.x : blockIdx.x;    // heavy tiles first
    const int q0 = tile * BR, head = blockIdx.y;
    const int kv_end = CAUSAL ? min(N, q0 + BR) : N;   // tiles after the block's last row: skipped
    const int tiles = (kv_end + BC - 1) / BC;
    if (threadIdx.x == 0) {
        mbar_init(smem_addr(&bars[0]), 1);                                 // q_full
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(smem_addr(&bars[1 + s]), 1);                         // k_full
            mbar_init(smem_addr(&bars[1 + STAGES + s]), 1);                // v_full
            mbar_init(smem_addr(&bars[1 + 2 * STAGES + s]), 2);            // empty: 2 consumers
        }
        fence_barrier_init();
    }
    __syncthreads();
    const int wg = threadIdx.x / 128;
    if (wg == 0) {
        regs_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) produce<D>(mq, mk, mv, base, bars, q0, head, tiles);
    } else {
        regs_inc<CONSUMER_REGS>();
        consume<D, CAUSAL, PINGPONG>(base, bars, O, N, scale_log2, q0, head, tiles, wg - 1);
    }
}

}  // namespace flash_hopper

#if FLASH_BF16
#define FLASH_NAME(x) x##_bf16
#else
#define FLASH_NAME(x) x##_fp16
#endif

#define FLASH_ENTRY(D, CAUSAL, PINGPONG, SUFFIX)                                                  \
extern "C" __global__ void __launch_bounds__(384, 1)                                              \
FLASH_NAME(flash_hopper_d##D##SUFFIX)(const __grid_constant__ TensorMap mq,                       \
                                      const __grid_constant__ TensorMap mk,                       \
                                      const __grid_constant__ TensorMap mv, u16* O, int N,        \
                                      float scale_log2) {                                         \
    flash_hopper::forward<D, CAUSAL, PINGPONG>(&mq, &mk, &mv, O, N, scale_log2);                  \
}

FLASH_ENTRY(64, false, true, )
FLASH_ENTRY(64, true, true, _causal)
FLASH_ENTRY(128, false, true, )
FLASH_ENTRY(128, true, true, _causal)
FLASH_ENTRY(64, false, false, _serial)
FLASH_ENTRY(64, true, false, _causal_serial)
FLASH_ENTRY(128, false, false, _serial)
FLASH_ENTRY(128, true, false, _causal_serial)
