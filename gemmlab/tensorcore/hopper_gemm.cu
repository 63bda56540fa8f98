// The Hopper GEMM ladder of lesson 12, part 2: C = alpha A B + beta C_in on the H100/H200's
// warpgroup Tensor Cores (wgmma), one kernel per step of the ladder.
//
//   A: M x K, B: K x N, both row-major 16-bit (FP16 or BF16, passed as raw bit patterns);
//   C: M x N float32, row-major. FP32 accumulation. K and N are multiples of 8 (16-byte rows, which
//   the Tensor Memory Accelerator needs); hopper.py pads other shapes before the launch.
//
// Every step computes the same 128 x 256 output tile per thread block from 64-deep K slices:
//   stage "wgmma"       2 warpgroups copy A and B tiles into shared memory with ordinary loads and
//                       stores, wait at a barrier, and issue wgmma; one buffer, no overlap.
//   stage "tma"         + the Tensor Memory Accelerator copies tiles (one thread issues them) into a
//                       ring of STAGES buffers, each guarded by an mbarrier that counts bytes.
//   stage "ws"          + warp specialisation: a producer warpgroup only issues copies, two
//                       consumer warpgroups only compute; "empty" mbarriers hand slots back.
//   stage "persistent"  + one block per SM walks many output tiles in a grouped order, so the
//                       producer loads the next tile while the consumers store the last one.
//
// Shared-memory layout: the 128-byte swizzle that the TMA writes and wgmma reads. A row of 64
// 16-bit values is 128 bytes; inside each 1024-byte group of 8 rows, the 16-byte chunk c of row r
// sits at chunk position c ^ (r % 8), so the 8 rows of a column of chunks hit 8 different banks.
// A tile (K-major): 128 rows of 64 values. B tile (N-major): four boxes of 64 rows (k) x 64 columns.
// No headers: the source compiles with NVRTC as well as nvcc (sm_90a).

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;

// cuTensorMapEncodeTiled's output, opaque here: 128 bytes, 64-byte aligned, passed by value.
struct __align__(64) TensorMap { u64 opaque[16]; };

namespace hopper {

constexpr int BM = 128;                        // output rows per block (2 consumer warpgroups)
constexpr int BN = 256;                        // output columns per block (one m64n256 wgmma)
constexpr int BK = 64;                         // K slice per stage: one 128-byte swizzled row
constexpr int WG_ROWS = 64;                    // rows per consumer warpgroup
constexpr int B_BOX = 64;                      // columns of B per TMA box (128-byte swizzle)
constexpr int A_TILE_BYTES = BM * BK * 2;      // 16 KiB
constexpr int B_BOX_BYTES = BK * B_BOX * 2;    //  8 KiB
constexpr int B_TILE_BYTES = BK * BN * 2;      // 32 KiB
constexpr int STAGE_BYTES = A_TILE_BYTES + B_TILE_BYTES;
constexpr int ACC = BN / 2;                    // FP32 accumulators per thread for m64n256

// ---- addresses, barriers, copies -----------------------------------------------------------

__device__ __forceinline__ u32 smem_addr(const void* p) {
    u32 a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}

__device__ __forceinline__ void mbar_init(u32 bar, u32 count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(count) : "memory");
}

// One arrival that also announces `bytes` more to come from the copy engine.
__device__ __forceinline__ void mbar_arrive_expect_tx(u32 bar, u32 bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 :: "r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_arrive(u32 bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
}

// Wait until the barrier's phase with this parity has completed.
__device__ __forceinline__ void mbar_wait(u32 bar, u32 parity) {
    asm volatile(
        "{\n"
        ".reg .pred done;\n"
        "WAIT:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra WAIT;\n"
        "}\n" :: "r"(bar), "r"(parity) : "memory");
}

// TMA: copy the box at coordinates (c0 innermost, c1) of the tensor into shared memory; the
// barrier's transaction count drops by the box's bytes when it lands (zeros outside the tensor).
__device__ __forceinline__ void tma_load(u32 dst, const TensorMap* map, u32 bar, int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];"
        :: "r"(dst), "l"(reinterpret_cast<u64>(map)), "r"(c0), "r"(c1), "r"(bar) : "memory");
}

// Ordinary stores to shared memory become visible to wgmma (the async proxy) after this fence.
__device__ __forceinline__ void fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

__device__ __forceinline__ void fence_barrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

template <int REGS> __device__ __forceinline__ void regs_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" :: "n"(REGS));
}

template <int REGS> __device__ __forceinline__ void regs_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" :: "n"(REGS));
}

// ---- wgmma ---------------------------------------------------------------------------------

// Shared-memory matrix descriptor, 128-byte swizzle: start address, leading and stride byte
// offsets (all >> 4), swizzle mode 1 in bits 62-63. Tiles start on 1024-byte boundaries.
__device__ __forceinline__ u64 descriptor(u32 addr, u32 leading, u32 stride) {
    return (u64)((addr & 0x3FFFF) >> 4) | ((u64)((leading & 0x3FFFF) >> 4) << 16)
         | ((u64)((stride & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}

// A, K-major: 8-row groups 1024 bytes apart (the leading offset is unused when swizzled).
__device__ __forceinline__ u64 desc_a(u32 addr) { return descriptor(addr, 16, 1024); }
// B, N-major: 64-column boxes B_BOX_BYTES apart, 8-row (k) groups 1024 bytes apart.
__device__ __forceinline__ u64 desc_b(u32 addr) { return descriptor(addr, B_BOX_BYTES, 1024); }

__device__ __forceinline__ void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int N> __device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory");
}

// Tell the compiler the accumulators may change here, so no read of them moves across a wait.
__device__ __forceinline__ void fence_accumulators(float (&d)[ACC]) {
#pragma unroll
    for (int i = 0; i < ACC; ++i) asm volatile("" : "+f"(d[i]) :: "memory");
}

// d += A (64 x 16, K-major) B (16 x 256, N-major): 128 accumulator operands, so hopper.py
// writes this function out (the input format is part of the instruction).
// @WGMMA@

// One 64-deep K slice for a consumer warpgroup: four k16 steps. In the A tile a k16 step moves
// 32 bytes along the swizzled row; in a B box it moves 16 rows of 128 bytes.
__device__ __forceinline__ void mma_slice(float (&d)[ACC], u32 a_tile, u32 b_tile) {
    const u64 da = desc_a(a_tile), db = desc_b(b_tile);
#pragma unroll
    for (int k = 0; k < BK / 16; ++k)
        wgmma_m64n256k16(d, da + ((k * 32) >> 4), db + ((k * 16 * 128) >> 4));
}

// ---- tiles and the epilogue ----------------------------------------------------------------

__device__ __forceinline__ unsigned char* align_1024(unsigned char* p) {
    return reinterpret_cast<unsigned char*>((reinterpret_cast<u64>(p) + 1023) & ~u64(1023));
}

// Output tile `t` in a grouped order: GROUP_M tile rows advance together along N, so the blocks
// running at one time share the same few strips of A and B in L2.
__device__ __forceinline__ void tile_coords(int t, int tiles_m, int tiles_n, int group_m,
                                            int& tm, int& tn) {
    const int per_group = group_m * tiles_n;
    const int first_m = (t / per_group) * group_m;
    const int rows = min(tiles_m - first_m, group_m);
    tm = first_m + (t % per_group) % rows;
    tn = (t % per_group) / rows;
}

// Write one warpgroup's 64 x 256 accumulators: warp w owns rows 16w..16w+15; lane l holds, for
// each 8-column chunk j, (row l/4, cols 8j + 2(l%4) + {0,1}) and the same 8 rows further down.
__device__ __forceinline__ void store_tile(const float (&d)[ACC], const float* C_in, float* C_out,
                                           int M, int N, int ldc, float alpha, float beta,
                                           int row0, int col0, int thread_in_wg) {
    const int warp = thread_in_wg / 32, lane = thread_in_wg % 32;
    const int r_base = row0 + 16 * warp + lane / 4;
    const int c_base = col0 + 2 * (lane % 4);
    const bool even_ldc = (ldc & 1) == 0;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int r = r_base + 8 * half, c = c_base + 8 * j;
            if (r >= M) continue;
            float v0 = alpha * d[4 * j + 2 * half], v1 = alpha * d[4 * j + 2 * half + 1];
            const long long at = (long long)r * ldc + c;
            if (even_ldc && c + 1 < N) {               // one 8-byte store
                if (beta != 0.f) { v0 += beta * C_in[at]; v1 += beta * C_in[at + 1]; }
                float2 pair;
                pair.x = v0;
                pair.y = v1;
                *reinterpret_cast<float2*>(C_out + at) = pair;
            } else {                                   // odd ldc: rows start 4 bytes off
                if (c < N) C_out[at] = beta != 0.f ? v0 + beta * C_in[at] : v0;
                if (c + 1 < N) C_out[at + 1] = beta != 0.f ? v1 + beta * C_in[at + 1] : v1;
            }
        }
    }
}

__device__ __forceinline__ void zero(float (&d)[ACC]) {
#pragma unroll
    for (int i = 0; i < ACC; ++i) d[i] = 0.f;
}

// Issue the TMA copies of K slice `k_tile` of output tile (tm, tn) into one stage buffer.
__device__ __forceinline__ void load_stage(u32 stage, u32 full, const TensorMap* map_a,
                                           const TensorMap* map_b, int tm, int tn, int k_tile) {
    mbar_arrive_expect_tx(full, STAGE_BYTES);
    tma_load(stage, map_a, full, k_tile * BK, tm * BM);
#pragma unroll
    for (int box = 0; box < BN / B_BOX; ++box)
        tma_load(stage + A_TILE_BYTES + box * B_BOX_BYTES, map_b, full, tn * BN + box * B_BOX,
                 k_tile * BK);
}

// ---- stage "wgmma": plain copies, one buffer -----------------------------------------------

// Copy one K slice with 16-byte loads into the swizzled layout; zeros outside the matrices.
// All of a thread's loads are issued before its first store, so their latencies overlap (a
// load-store, load-store loop would pay one full memory latency per chunk).
constexpr int PLAIN_THREADS = 256;
constexpr int A_CHUNKS = BM * (BK / 8) / PLAIN_THREADS;        // 4 per thread
constexpr int B_CHUNKS = BK * (BN / 8) / PLAIN_THREADS;        // 8 per thread

__device__ __forceinline__ void copy_slice(unsigned char* sA, unsigned char* sB, const u16* A,
                                           const u16* B, int M, int Np, int Kp, int m0, int n0,
                                           int k0) {
    const uint4 zero4 = {0u, 0u, 0u, 0u};
    uint4 a[A_CHUNKS], b[B_CHUNKS];
#pragma unroll
    for (int j = 0; j < A_CHUNKS; ++j) {                         // A: 128 rows x 8 chunks
        const int i = threadIdx.x + j * PLAIN_THREADS, r = i / 8, c = i % 8;
        a[j] = (m0 + r < M && k0 + 8 * c < Kp)
             ? *reinterpret_cast<const uint4*>(A + (long long)(m0 + r) * Kp + k0 + 8 * c) : zero4;
    }
#pragma unroll
    for (int j = 0; j < B_CHUNKS; ++j) {                         // B: 64 rows x 32 chunks
        const int i = threadIdx.x + j * PLAIN_THREADS, k = i / (BN / 8), c = i % (BN / 8);
        b[j] = (k0 + k < Kp && n0 + 8 * c < Np)
             ? *reinterpret_cast<const uint4*>(B + (long long)(k0 + k) * Np + n0 + 8 * c) : zero4;
    }
#pragma unroll
    for (int j = 0; j < A_CHUNKS; ++j) {
        const int i = threadIdx.x + j * PLAIN_THREADS, r = i / 8, c = i % 8;
        *reinterpret_cast<uint4*>(sA + r * 128 + ((c ^ (r % 8)) * 16)) = a[j];
    }
#pragma unroll
    for (int j = 0; j < B_CHUNKS; ++j) {
        const int i = threadIdx.x + j * PLAIN_THREADS, k = i / (BN / 8), c = i % (BN / 8);
        *reinterpret_cast<uint4*>(sB + (c / 8) * B_BOX_BYTES + k * 128 + (((c % 8) ^ (k % 8)) * 16))
            = b[j];
    }
}

__device__ __forceinline__ void kernel_plain(const u16* A, const u16* B, const float* C_in,
                                             float* C_out, int M, int N, int Np, int Kp,
                                             float alpha, float beta) {
    extern __shared__ unsigned char smem_raw[];
    unsigned char* sA = align_1024(smem_raw);
    unsigned char* sB = sA + A_TILE_BYTES;
    const int wg = threadIdx.x / 128;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    float d[ACC];
    zero(d);
    for (int k0 = 0; k0 < Kp; k0 += BK) {
        __syncthreads();                       // every warpgroup finished reading the old slice
        copy_slice(sA, sB, A, B, M, Np, Kp, m0, n0, k0);
        fence_proxy_async();
        __syncthreads();
        wgmma_fence();
        fence_accumulators(d);
        mma_slice(d, smem_addr(sA + wg * WG_ROWS * 128), smem_addr(sB));
        wgmma_commit();
        wgmma_wait<0>();
        fence_accumulators(d);
    }
    store_tile(d, C_in, C_out, M, N, N, alpha, beta, m0 + wg * WG_ROWS, n0, threadIdx.x % 128);
}

// ---- stage "tma": TMA copies into a ring of STAGES buffers, mbarrier per buffer -------------

template <int STAGES>
__device__ __forceinline__ void kernel_tma(const TensorMap* map_a, const TensorMap* map_b,
                                           const float* C_in, float* C_out, int M, int N,
                                           int Kp, float alpha, float beta) {
    extern __shared__ unsigned char smem_raw[];
    unsigned char* stages = align_1024(smem_raw);
    u64* full = reinterpret_cast<u64*>(stages + STAGES * STAGE_BYTES);
    const u32 base = smem_addr(stages);
    const int wg = threadIdx.x / 128;
    const int tm = blockIdx.y, tn = blockIdx.x;
    const int k_tiles = (Kp + BK - 1) / BK;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) mbar_init(smem_addr(&full[s]), 1);
        fence_barrier_init();
    }
    __syncthreads();
    if (threadIdx.x == 0)                      // prologue: fill the ring
        for (int s = 0; s < STAGES && s < k_tiles; ++s)
            load_stage(base + s * STAGE_BYTES, smem_addr(&full[s]), map_a, map_b, tm, tn, s);
    float d[ACC];
    zero(d);
    for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % STAGES;
        mbar_wait(smem_addr(&full[s]), (kt / STAGES) & 1);
        wgmma_fence();
        fence_accumulators(d);
        mma_slice(d, base + s * STAGE_BYTES + wg * WG_ROWS * 128, base + s * STAGE_BYTES + A_TILE_BYTES);
        wgmma_commit();
        wgmma_wait<0>();
        fence_accumulators(d);
        __syncthreads();                       // both warpgroups are done with buffer s
        if (threadIdx.x == 0 && kt + STAGES < k_tiles)
            load_stage(base + s * STAGE_BYTES, smem_addr(&full[s]), map_a, map_b, tm, tn,
                       kt + STAGES);
    }
    store_tile(d, C_in, C_out, M, N, N, alpha, beta, tm * BM + wg * WG_ROWS, tn * BN,
               threadIdx.x % 128);
}

// ---- stages "ws" and "persistent": producer and consumer warpgroups ------------------------

// The producer's loop: wait until a buffer is empty, then fill it. `first_tile`, `tile_step`
// walk the output tiles of this block (one tile for "ws", many for "persistent").
template <int STAGES>
__device__ __forceinline__ void produce(const TensorMap* map_a, const TensorMap* map_b, u32 base,
                                        u64* full, u64* empty, int first_tile, int tile_step,
                                        int tiles_m, int tiles_n, int group_m, int k_tiles) {
    int it = 0;                                // slices issued so far (across tiles)
    for (int t = first_tile; t < tiles_m * tiles_n; t += tile_step) {
        int tm, tn;
        tile_coords(t, tiles_m, tiles_n, group_m, tm, tn);
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
            const int s = it % STAGES;
            mbar_wait(smem_addr(&empty[s]), ((it / STAGES) & 1) ^ 1);   // first pass: free
            load_stage(base + s * STAGE_BYTES, smem_addr(&full[s]), map_a, map_b, tm, tn, kt);
        }
    }
}

// A consumer warpgroup's loop: compute each slice as it lands, keep one wgmma group in flight,
// hand the previous buffer back once its group has finished, store each finished tile.
template <int STAGES>
__device__ __forceinline__ void consume(u32 base, u64* full, u64* empty, int consumer,
                                        const float* C_in, float* C_out, int M, int N, float alpha,
                                        float beta, int first_tile, int tile_step, int tiles_m,
                                        int tiles_n, int group_m, int k_tiles) {
    const int thread_in_wg = threadIdx.x % 128;
    const bool signals = thread_in_wg == 0;
    int it = 0;
    float d[ACC];
    for (int t = first_tile; t < tiles_m * tiles_n; t += tile_step) {
        int tm, tn;
        tile_coords(t, tiles_m, tiles_n, group_m, tm, tn);
        zero(d);
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
            const int s = it % STAGES;
            mbar_wait(smem_addr(&full[s]), (it / STAGES) & 1);
            wgmma_fence();
            fence_accumulators(d);
            mma_slice(d, base + s * STAGE_BYTES + consumer * WG_ROWS * 128,
                      base + s * STAGE_BYTES + A_TILE_BYTES);
            wgmma_commit();
            wgmma_wait<1>();                   // the previous slice's group is done...
            fence_accumulators(d);
            if (kt > 0 && signals) mbar_arrive(smem_addr(&empty[(it - 1) % STAGES]));  // ...free it
        }
        wgmma_wait<0>();
        fence_accumulators(d);
        if (k_tiles > 0 && signals) mbar_arrive(smem_addr(&empty[(it - 1) % STAGES]));
        store_tile(d, C_in, C_out, M, N, N, alpha, beta, tm * BM + consumer * WG_ROWS, tn * BN,
                   thread_in_wg);
    }
}

template <int STAGES, int PRODUCER_REGS, int CONSUMER_REGS>
__device__ __forceinline__ void kernel_specialised(const TensorMap* map_a, const TensorMap* map_b,
                                                   const float* C_in, float* C_out, int M, int N,
                                                   int Kp, float alpha, float beta,
                                                   int first_tile, int tile_step, int group_m) {
    extern __shared__ unsigned char smem_raw[];
    unsigned char* stages = align_1024(smem_raw);
    u64* full = reinterpret_cast<u64*>(stages + STAGES * STAGE_BYTES);
    u64* empty = full + STAGES;
    const u32 base = smem_addr(stages);
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int k_tiles = (Kp + BK - 1) / BK;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(smem_addr(&full[s]), 1);         // the producer's arrival (+ the bytes)
            mbar_init(smem_addr(&empty[s]), 2);        // one arrival per consumer warpgroup
        }
        fence_barrier_init();
    }
    __syncthreads();
    const int wg = threadIdx.x / 128;
    if (wg == 0) {                             // producer: one thread issues every copy
        regs_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0)
            produce<STAGES>(map_a, map_b, base, full, empty, first_tile, tile_step, tiles_m,
                            tiles_n, group_m, k_tiles);
    } else {
        regs_inc<CONSUMER_REGS>();
        consume<STAGES>(base, full, empty, wg - 1, C_in, C_out, M, N, alpha, beta, first_tile,
                        tile_step, tiles_m, tiles_n, group_m, k_tiles);
    }
}

}  // namespace hopper

// ---- entry points, one per ladder step; hopper.py instantiates them per input format ----------

#define HOPPER_ENTRY_POINTS(FMT)                                                                  \
extern "C" __global__ void __launch_bounds__(hopper::PLAIN_THREADS, 1)                             \
hopper_wgmma_##FMT(const u16* A, const u16* B, const float* C_in, float* C_out, int M, int N,    \
                   int Np, int Kp, float alpha, float beta) {                                     \
    hopper::kernel_plain(A, B, C_in, C_out, M, N, Np, Kp, alpha, beta);                           \
}                                                                                                 \
extern "C" __global__ void __launch_bounds__(256, 1)                                              \
hopper_tma_##FMT(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b,\
                 const float* C_in, float* C_out, int M, int N, int Kp, float alpha, float beta) { \
    hopper::kernel_tma<HOPPER_STAGES>(&map_a, &map_b, C_in, C_out, M, N, Kp, alpha, beta);        \
}                                                                                                 \
extern "C" __global__ void __launch_bounds__(384, 1)                                              \
hopper_ws_##FMT(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, \
                const float* C_in, float* C_out, int M, int N, int Kp, float alpha, float beta) {  \
    const int tiles_n = (N + hopper::BN - 1) / hopper::BN;                                        \
    hopper::kernel_specialised<HOPPER_STAGES, 24, 240>(&map_a, &map_b, C_in, C_out, M, N, Kp,     \
        alpha, beta, blockIdx.y * tiles_n + blockIdx.x, 1 << 30, 1);                              \
}                                                                                                 \
extern "C" __global__ void __launch_bounds__(384, 1)                                              \
hopper_persistent_##FMT(const __grid_constant__ TensorMap map_a,                                  \
                        const __grid_constant__ TensorMap map_b, const float* C_in, float* C_out, \
                        int M, int N, int Kp, float alpha, float beta, int group_m) {             \
    hopper::kernel_specialised<HOPPER_STAGES, 24, 240>(&map_a, &map_b, C_in, C_out, M, N, Kp,     \
        alpha, beta, blockIdx.x, gridDim.x, group_m);                                             \
}
