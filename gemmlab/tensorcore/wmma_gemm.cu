// Tensor Core GEMM with WMMA: C_out = alpha * A B + beta * C_in.
//
// A (M x K) and B (K x N) are row-major FP16 or BF16; C_in and C_out are row-major FP32.
// The structure follows lesson 12:
//   * a block computes a BM x BN tile of C, walking along K in BK-wide tiles of A and B that are
//     copied into shared memory with cp.async, STAGES buffers deep (2 = ping-pong): the copies of
//     the next tiles are in flight while the warps run the MMAs of the current one;
//   * each warp owns a (BM / WARPS_M) x (BN / WARPS_N) piece of the tile, held as FM x FN
//     accumulator fragments of 16 x 16 that stay in registers for the whole K loop and are
//     written to global memory once, at the end;
//   * inside a shared tile, the A/B fragments of the next 16-wide K step are loaded into registers
//     while the MMAs of the current step run (register double buffering, FRAG_DB).
// Edges: rows of A past M, columns of B past N and K past its end are zero-filled by cp.async
// (src-size 0), and the stores of C are guarded, so any M, N works. The 16-byte copies need K and
// N to be multiples of 8 with 16-byte aligned rows: the Python launcher pads them when they are not.
// The Python side appends one extern "C" wrapper per configuration (see kernel.py).

#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

namespace gemmlab_wmma {

using namespace nvcuda;

constexpr int FRAG = 16;      // m16n16k16 fragments
constexpr int VEC = 8;        // 16-bit elements per 16-byte copy
constexpr int SMEM_PAD = 8;   // elements of padding per shared row: rows start in different banks

// The 32-bit shared-memory address of a generic pointer (inline PTX: works under NVRTC and nvcc).
__device__ __forceinline__ unsigned shared_address(const void* p) {
    unsigned address;
    asm("{ .reg .u64 s; cvta.to.shared.u64 s, %1; cvt.u32.u64 %0, s; }" : "=r"(address) : "l"(p));
    return address;
}

// One 16-byte asynchronous copy global -> shared. When `valid` is false nothing is read and the
// 16 bytes of shared memory are filled with zeros (the edge of the matrix).
__device__ __forceinline__ void copy16_async(void* dst, const void* src, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(shared_address(dst)), "l"(src), "r"(valid ? 16 : 0) : "memory");
}

__device__ __forceinline__ void commit_copies() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Wait until at most N committed groups of copies are still in flight.
template <int N>
__device__ __forceinline__ void wait_copies() {
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
}

template <typename T, typename AccT, int BM, int BN, int BK, int WARPS_M, int WARPS_N,
          int STAGES, bool FRAG_DB>
struct Gemm {
    static constexpr int THREADS = 32 * WARPS_M * WARPS_N;
    static constexpr int WM = BM / WARPS_M;
    static constexpr int WN = BN / WARPS_N;
    static constexpr int FM = WM / FRAG;
    static constexpr int FN = WN / FRAG;
    static constexpr int KSTEPS = BK / FRAG;
    static constexpr int A_LD = BK + SMEM_PAD;
    static constexpr int B_LD = BN + SMEM_PAD;
    static constexpr int A_TILE = BM * A_LD;              // elements per stage
    static constexpr int B_TILE = BK * B_LD;
    static constexpr int A_COPIES = BM * BK / VEC / THREADS;
    static constexpr int B_COPIES = BK * BN / VEC / THREADS;
    static constexpr int EPI_LD = sizeof(AccT) == 4 ? FRAG + 4 : FRAG + 8;

    static_assert(BM % (WARPS_M * FRAG) == 0 && BN % (WARPS_N * FRAG) == 0, "warp tiles");
    static_assert(BK % FRAG == 0, "BK must be a multiple of 16");
    static_assert((BM * BK / VEC) % THREADS == 0 && (BK * BN / VEC) % THREADS == 0,
                  "tiles must split evenly into 16-byte copies");
    static_assert(STAGES >= 2, "at least two shared-memory stages");

    using FragA = wmma::fragment<wmma::matrix_a, FRAG, FRAG, FRAG, T, wmma::row_major>;
    using FragB = wmma::fragment<wmma::matrix_b, FRAG, FRAG, FRAG, T, wmma::row_major>;
    using FragC = wmma::fragment<wmma::accumulator, FRAG, FRAG, FRAG, AccT>;

    const T* __restrict__ A;
    const T* __restrict__ B;
    int M, N, K, lda, ldb;
    int row0, col0;           // the block's tile of C
    T* As;                    // STAGES shared tiles of A (BM x BK, padded rows)
    T* Bs;                    // STAGES shared tiles of B (BK x BN, padded rows)

    // Start the copies of the K tile that begins at k0 into shared stage `stage`.
    __device__ void load_tile(int stage, int k0) const {
        T* as = As + stage * A_TILE;
        T* bs = Bs + stage * B_TILE;
#pragma unroll
        for (int i = 0; i < A_COPIES; ++i) {
            int c = threadIdx.x + i * THREADS;
            int r = c / (BK / VEC), kc = (c % (BK / VEC)) * VEC;
            int gr = row0 + r, gk = k0 + kc;
            bool valid = gr < M && gk < K;
            copy16_async(as + r * A_LD + kc, valid ? A + (size_t)gr * lda + gk : A, valid);
        }
#pragma unroll
        for (int i = 0; i < B_COPIES; ++i) {
            int c = threadIdx.x + i * THREADS;
            int r = c / (BN / VEC), nc = (c % (BN / VEC)) * VEC;
            int gk = k0 + r, gc = col0 + nc;
            bool valid = gk < K && gc < N;
            copy16_async(bs + r * B_LD + nc, valid ? B + (size_t)gk * ldb + gc : B, valid);
        }
    }

    // The warp's A and B fragments for MMA step `ks` of shared stage `stage`.
    __device__ void load_fragments(FragA (&a)[FM], FragB (&b)[FN], int stage, int ks,
                                   int warp_m, int warp_n) const {
        const T* as = As + stage * A_TILE + (warp_m * WM) * A_LD + ks * FRAG;
        const T* bs = Bs + stage * B_TILE + (ks * FRAG) * B_LD + warp_n * WN;
#pragma unroll
        for (int i = 0; i < FM; ++i) wmma::load_matrix_sync(a[i], as + i * FRAG * A_LD, A_LD);
#pragma unroll
        for (int j = 0; j < FN; ++j) wmma::load_matrix_sync(b[j], bs + j * FRAG, B_LD);
    }

    // All MMAs of one shared K tile: D = A B + C on every fragment the warp owns.
    __device__ void compute_tile(FragC (&acc)[FM][FN], int stage, int warp_m, int warp_n) const {
        constexpr int BUFS = FRAG_DB ? 2 : 1;
        FragA a[BUFS][FM];
        FragB b[BUFS][FN];
        load_fragments(a[0], b[0], stage, 0, warp_m, warp_n);
#pragma unroll
        for (int ks = 0; ks < KSTEPS; ++ks) {
            const int cur = FRAG_DB ? (ks & 1) : 0;
            if (FRAG_DB && ks + 1 < KSTEPS)        // prefetch the next step's fragments
                load_fragments(a[(ks + 1) & 1], b[(ks + 1) & 1], stage, ks + 1, warp_m, warp_n);
            if (!FRAG_DB && ks > 0)
                load_fragments(a[0], b[0], stage, ks, warp_m, warp_n);
#pragma unroll
            for (int i = 0; i < FM; ++i)
#pragma unroll
                for (int j = 0; j < FN; ++j)
                    wmma::mma_sync(acc[i][j], a[cur][i], b[cur][j], acc[i][j]);
        }
    }
};

template <typename T, typename AccT, int BM, int BN, int BK, int WARPS_M, int WARPS_N,
          int STAGES, bool FRAG_DB>
__device__ __forceinline__ void gemm(const T* A, const T* B, const float* C_in, float* C_out,
                                     int M, int N, int K, int lda, int ldb, int ldc,
                                     float alpha, float beta, int group_m) {
    using G = Gemm<T, AccT, BM, BN, BK, WARPS_M, WARPS_N, STAGES, FRAG_DB>;
    extern __shared__ __align__(128) unsigned char smem[];

    // Tile order: blocks run in groups of `group_m` tile rows, column by column, so the tiles
    // resident at the same time share rows of A and columns of B in L2.
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int per_group = group_m * tiles_n;
    const int first_m = (blockIdx.x / per_group) * group_m;
    const int rows_here = min(tiles_m - first_m, group_m);
    const int in_group = blockIdx.x % per_group;
    const int tile_m = first_m + in_group % rows_here;
    const int tile_n = in_group / rows_here;

    G g;
    g.A = A; g.B = B; g.M = M; g.N = N; g.K = K; g.lda = lda; g.ldb = ldb;
    g.row0 = tile_m * BM; g.col0 = tile_n * BN;
    g.As = reinterpret_cast<T*>(smem);
    g.Bs = g.As + STAGES * G::A_TILE;

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;

    typename G::FragC acc[G::FM][G::FN];
#pragma unroll
    for (int i = 0; i < G::FM; ++i)
#pragma unroll
        for (int j = 0; j < G::FN; ++j) wmma::fill_fragment(acc[i][j], AccT(0));

    const int k_tiles = (K + BK - 1) / BK;
    // Prologue: start the first STAGES - 1 tiles.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < k_tiles) g.load_tile(s, s * BK);
        commit_copies();
    }
    for (int kt = 0; kt < k_tiles; ++kt) {
        wait_copies<STAGES - 2>();   // tile kt has landed (for this thread) ...
        __syncthreads();             // ... for every thread; and stage (kt-1) % STAGES is free
        const int next = kt + STAGES - 1;
        if (next < k_tiles) g.load_tile(next % STAGES, next * BK);
        commit_copies();             // (an empty group near the end keeps the counting uniform)
        g.compute_tile(acc, kt % STAGES, warp_m, warp_n);
    }
    wait_copies<0>();
    __syncthreads();                 // the pipeline buffers are now reused as epilogue scratch

    // Epilogue: each fragment goes through a per-warp scratch tile, then every lane writes its
    // 8 elements with the bounds checks and alpha/beta (C_in is not read when beta == 0).
    AccT* scratch = reinterpret_cast<AccT*>(smem) + warp * FRAG * G::EPI_LD;
    const int r = lane / 2, c0 = (lane % 2) * 8;
#pragma unroll
    for (int i = 0; i < G::FM; ++i) {
#pragma unroll
        for (int j = 0; j < G::FN; ++j) {
            wmma::store_matrix_sync(scratch, acc[i][j], G::EPI_LD, wmma::mem_row_major);
            __syncwarp();
            const int gr = g.row0 + warp_m * G::WM + i * FRAG + r;
            const int gc0 = g.col0 + warp_n * G::WN + j * FRAG + c0;
            if (gr < M) {
#pragma unroll
                for (int t = 0; t < 8; ++t) {
                    const int gc = gc0 + t;
                    if (gc < N) {
                        const float v = static_cast<float>(scratch[r * G::EPI_LD + c0 + t]);
                        const size_t idx = (size_t)gr * ldc + gc;
                        C_out[idx] = beta == 0.0f ? alpha * v
                                                  : __fmaf_rn(alpha, v, __fmul_rn(beta, C_in[idx]));
                    }
                }
            }
            __syncwarp();
        }
    }
}

}  // namespace gemmlab_wmma
