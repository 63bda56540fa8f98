// The Hopper GEMM ladder of lesson 12, part 2: C = alpha A B + beta C_in on the H100/H200's
// warpgroup Tensor Cores (wgmma), one kernel per step of the ladder, each named in hopper/stages.py.
//
//   A: M x K, B: K x N, both row-major 16-bit (FP16 or BF16, passed as raw bit patterns; the
//   format is fixed at compile time: -DHOPPER_BF16=1 builds the BF16 kernels); C_in: M x N
//   float32; C_out: float32, or the inputs' 16-bit format (the "_o16" kernels). FP32 accumulation.
//   K and N are multiples of 8 (16-byte rows, which the TMA needs); hopper/run.py pads other shapes.
//   The FP8 rung (-DHOPPER_FP8=1: the persistent kernels only, names ending
//   "_e4m3"): A M x K and B given transposed, N x K, both row-major E4M3 bytes (FP8 wgmma reads
//   both operands K-major); K a multiple of 16; a K slice is 128 values, still 128-byte rows; the
//   "_o16" kernels write BF16, the "_ofp16" ones FP16. Per-tensor scales come in through alpha
//   (alpha = s_a s_b).
//
// The steps (128-row output tiles, 64-deep K slices):
//   "wgmma"       2 warpgroups copy A and B tiles into shared memory with ordinary loads and
//                 stores, wait at a barrier, and issue wgmma; one buffer, no overlap.
//   "tma"         + the Tensor Memory Accelerator copies tiles (one thread issues them) into a
//                 ring of buffers, each guarded by an mbarrier that counts bytes.
//   "ws"          + warp specialisation: a producer warpgroup only issues copies, two consumer
//                 warpgroups only compute; "empty" mbarriers hand slots back.
//   "persistent"  + one block per SM walks many output tiles in a grouped order, so the producer
//                 loads the next tile while the consumers store the last one. Options: 128 x 128
//                 or 128 x 64 tiles instead of 128 x 256 (more tiles for small problems), 64-row
//                 tiles (64 x 256, 64 x 128, 64 x 64: one consumer warpgroup computes each, for
//                 decode's few rows of A), split-K (several blocks share one tile's K range; the
//                 last to finish adds the sums), a staged epilogue (128 x 256 tiles, 16-bit C: the
//                 consumers write each finished tile into a shared-memory staging buffer and go on
//                 to the next tile's MMAs while the producer warpgroup's three idle warps copy it
//                 out to C, so the tensor cores do not wait for the stores).
//   "pingpong"    + each consumer warpgroup owns whole 128 x 128 tiles, alternating with the other,
//                 so one's epilogue (the stores of C) overlaps the other's MMAs.
//
// Shared-memory layout: the 128-byte swizzle that the TMA writes and wgmma reads. A row of 64
// 16-bit values is 128 bytes; inside each 1024-byte group of 8 rows, the 16-byte chunk c of row r
// sits at chunk position c ^ (r % 8), so the 8 rows of a column of chunks hit 8 different banks.
// A tile (K-major): BM (128 or 64) rows of 64 values. B tile (N-major): boxes of 64 rows (k) x 64
// columns.
// No headers: hopper/build.py puts hopper_common.cuh (barriers, copies, wgmma's descriptor and
// fences) before this text, and NVRTC alone builds it (gemmlab/cudacompile.py), for sm_90a only.

#ifndef HOPPER_BF16
#define HOPPER_BF16 0
#endif
#ifndef HOPPER_FP8
#define HOPPER_FP8 0
#endif

namespace hopper {

constexpr int ELEM = HOPPER_FP8 ? 1 : 2;      // bytes per input value
constexpr int BK = 128 / ELEM;                 // K slice per stage: one 128-byte swizzled row
constexpr int KSTEP = 32 / ELEM;               // K of one wgmma: 32 bytes of each row
constexpr int B_BOX = 64;                      // columns of B per TMA box (128-byte swizzle)
constexpr int B_BOX_BYTES = BK * B_BOX * ELEM; //  8 KiB (16-bit B, N-major)

// The shape of one kernel's work: BM x BN output tiles; PINGPONG: each consumer warpgroup owns
// whole tiles (else the BM / 64 consumers split a tile's rows, 64 each); STAGES buffers in the
// ring; PROMOTE (FP8): each K slice's wgmmas sum into fresh accumulators, which FP32 adds then
// add to the tile's own. BM = 64 (decode: few rows of A) leaves one warpgroup computing, the
// other idle, and each stage's A tile half the bytes, which buys the ring more slices of B.
// STAGED (16-bit output only): the finished tile goes through a staging buffer in shared memory,
// its rows padded by 16 bytes so that a warp's packed pairs fall on 32 different banks.
// CLUSTER (2): the blocks of a cluster compute the tiles of CLUSTER consecutive tile rows in one
// tile column, which share their slices of B: each block copies 1 / CLUSTER of B's boxes and the
// TMA writes them into every block of the cluster (multicast), so each slice of B leaves L2 once.
template <int BN_, bool PINGPONG_, int STAGES_, bool PROMOTE_ = false, int BM_ = 128,
          bool STAGED_ = false, int CLUSTER_ = 1>
struct Tiles {
    static constexpr int BM = BM_;
    static constexpr int BN = BN_;
    static constexpr bool PINGPONG = PINGPONG_;
    static constexpr int STAGES = STAGES_;
    static constexpr bool PROMOTE = PROMOTE_;
    static constexpr int A_TILE_BYTES = BM * BK * ELEM;    // 16 KiB (BM = 128) or 8 KiB
    static constexpr int B_TILE_BYTES = BK * BN * ELEM;
    static constexpr int STAGE_BYTES = A_TILE_BYTES + B_TILE_BYTES;
    static constexpr int MMA_M = PINGPONG ? BM / 64 : 1;   // m64 wgmmas per k16 step per warpgroup
    static constexpr int NACC = BN / 2;                    // FP32 accumulators of one m64nBN wgmma
    static constexpr int PARTS = PINGPONG ? 1 : BM / 64;   // consumer warpgroups sharing one tile
    static constexpr int CONSUMERS = PINGPONG ? 2 : PARTS; // consumer warpgroups with work
    static constexpr bool STAGED = STAGED_;
    static constexpr int STAGING_PITCH = BN * 2 + 16;      // bytes per staged row of 16-bit C
    static constexpr int STAGING_BYTES = STAGED ? BM * STAGING_PITCH : 0;
    static constexpr int CLUSTER = CLUSTER_;
    static_assert(BM == 64 || BM == 128, "one or two m64 rows of wgmmas per tile");
    static_assert(MMA_M * NACC * (PROMOTE ? 2 : 1) <= 128, "at most 128 accumulators per thread");
    static_assert(!STAGED || (BM == 128 && BN == 256 && !PINGPONG && !PROMOTE),
                  "the staged epilogue is built for 128 x 256 tiles that two warpgroups share");
    static_assert(CLUSTER == 1 || (CLUSTER == 2 && BN == 256 && !PINGPONG && !PROMOTE),
                  "clusters are built for the 128 x 256 tiles: two blocks, each copying half of B");
};

using Wide = Tiles<256, false, 4>;             // 128 x 256 tiles, 48 KiB per stage
using Narrow = Tiles<128, false, 6>;           // 128 x 128 tiles, 32 KiB per stage
using Slim = Tiles<64, false, 8>;              // 128 x 64 tiles, 24 KiB per stage
using PingPong = Tiles<128, true, 6>;
// The staged epilogue's 66 KiB (128 rows of 528 bytes) leave room for 3 slices in the ring.
using WideStaged = Tiles<256, false, 3, false, 128, true>;
// The same two in clusters of two blocks sharing B.
using WideC2 = Tiles<256, false, 4, false, 128, false, 2>;
using WideStagedC2 = Tiles<256, false, 3, false, 128, true, 2>;
// FP8 wgmma adds its products, and the accumulators it is given, with fewer bits than FP32 (the
// error grows with K: tests/test_tensorcore_hopper.py measures it). Promotion keeps the sums of
// one 128-deep slice in the Tensor Core and the running total in FP32 registers (cuBLASLt's FP8
// GEMM without CUBLASLT_MATMUL_DESC_FAST_ACCUM does the same). Twice the accumulators: 128 x 128
// and 128 x 64 tiles only.
using NarrowPromoted = Tiles<128, false, 6, true>;
using SlimPromoted = Tiles<64, false, 8, true>;
// Decode: 64-row tiles for a few rows of A (an LLM's tokens), where a 128-row tile's A would be
// at least half zero rows and the speed is set by how many bytes of B are in flight: as many
// buffers as fit in 227 KiB (tests/test_tensorcore_hopper.py checks with hopper/stages.py).
using DecodeWide = Tiles<256, false, 5, false, 64>;     // 64 x 256 tiles, 40 KiB per stage
using DecodeNarrow = Tiles<128, false, 9, false, 64>;   // 64 x 128 tiles, 24 KiB per stage
using DecodeSlim = Tiles<64, false, 14, false, 64>;     // 64 x 64 tiles, 16 KiB per stage

// ---- wgmma ---------------------------------------------------------------------------------

// A, K-major: 8-row groups 1024 bytes apart (the leading offset is unused when swizzled).
__device__ __forceinline__ u64 desc_a(u32 addr) { return descriptor(addr, 16, 1024); }
// B, N-major: 64-column boxes B_BOX_BYTES apart, 8-row (k) groups 1024 bytes apart.
__device__ __forceinline__ u64 desc_b(u32 addr) { return descriptor(addr, B_BOX_BYTES, 1024); }

// d += A (64 x KSTEP, K-major, from descriptor da) B (KSTEP x N, from db) for one warpgroup:
// wgmma.mma_async m64nNk16 (16-bit inputs) or m64nNk32 (FP8) with FP32 accumulators, N / 2 of
// them per thread, each an operand of the instruction. Operands: the N/2 accumulators, da, db,
// then the scale-d flag (`add`: 1 adds to d, 0 overwrites it); then the immediates scale-a = 1,
// scale-b = 1 and, for 16-bit inputs only, transpose-a = 0 (K-major) and transpose-b = 1
// (N-major: row-major K x N).
// FP8 wgmma reads both operands K-major and has no transpose immediates: B is given as N x K.
#if HOPPER_FP8
#define WGMMA_OP(N) "wgmma.mma_async.sync.aligned.m64n" N "k32.f32.e4m3.e4m3 "
#define WGMMA_IMMEDIATES "1, 1"
#elif HOPPER_BF16
#define WGMMA_OP(N) "wgmma.mma_async.sync.aligned.m64n" N "k16.f32.bf16.bf16 "
#define WGMMA_IMMEDIATES "1, 1, 0, 1"
#else
#define WGMMA_OP(N) "wgmma.mma_async.sync.aligned.m64n" N "k16.f32.f16.f16 "
#define WGMMA_IMMEDIATES "1, 1, 0, 1"
#endif

template <int N> struct Wgmma;

template <> struct Wgmma<256> {
    static __device__ __forceinline__ void mma(float (&d)[128], u64 da, u64 db, int add) {
        asm volatile(
            "{\n.reg .pred acc;\n"
            "setp.ne.b32 acc, %130, 0;\n"
            WGMMA_OP("256")
            "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
            "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
            "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
            "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
            "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
            "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
            "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
            "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
            "%128, %129, acc, " WGMMA_IMMEDIATES ";\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
              "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
              "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
              "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
              "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
              "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
              "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
              "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
              "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
              "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
              "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
              "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
              "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
              "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
              "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
            : "l"(da), "l"(db), "r"(add));
    }
};

template <> struct Wgmma<128> {
    static __device__ __forceinline__ void mma(float (&d)[64], u64 da, u64 db, int add) {
        asm volatile(
            "{\n.reg .pred acc;\n"
            "setp.ne.b32 acc, %66, 0;\n"
            WGMMA_OP("128")
            "{" WGMMA_R64 "}, "
            "%64, %65, acc, " WGMMA_IMMEDIATES ";\n}\n"
            : WGMMA_D64(d)
            : "l"(da), "l"(db), "r"(add));
    }
};

template <> struct Wgmma<64> {
    static __device__ __forceinline__ void mma(float (&d)[32], u64 da, u64 db, int add) {
        asm volatile(
            "{\n.reg .pred acc;\n"
            "setp.ne.b32 acc, %34, 0;\n"
            WGMMA_OP("64")
            "{" WGMMA_R32 "}, "
            "%32, %33, acc, " WGMMA_IMMEDIATES ";\n}\n"
            : WGMMA_D32(d)
            : "l"(da), "l"(db), "r"(add));
    }
};

template <int M, int N>
__device__ __forceinline__ void add_into(float (&d)[M][N], const float (&part)[M][N]) {
#pragma unroll
    for (int m = 0; m < M; ++m)
#pragma unroll
        for (int i = 0; i < N; ++i) d[m][i] += part[m][i];
}

template <int M, int N>
__device__ __forceinline__ void zero(float (&d)[M][N]) {
#pragma unroll
    for (int m = 0; m < M; ++m)
#pragma unroll
        for (int i = 0; i < N; ++i) d[m][i] = 0.f;
}

// One K slice (128 bytes of each row) for a consumer warpgroup: four K steps, each of MMA_M
// wgmmas (64 rows each). In the A tile a step moves 32 bytes along the swizzled row and 64 rows
// are 8 KiB. A 16-bit B box is N-major: a k16 step moves 16 rows of 128 bytes. An FP8 B tile is
// K-major like A (BN rows of 128 bytes): a k32 step moves 32 bytes along its rows too.
// `add` 0: the slice's first step overwrites d (a promoted kernel's fresh slice sums).
template <class T>
__device__ __forceinline__ void mma_slice(float (&d)[T::MMA_M][T::NACC], u32 a_rows, u32 b_tile,
                                          int add = 1) {
    const u64 db = HOPPER_FP8 ? desc_a(b_tile) : desc_b(b_tile);
#pragma unroll
    for (int k = 0; k < BK / KSTEP; ++k)
#pragma unroll
        for (int m = 0; m < T::MMA_M; ++m)
            Wgmma<T::BN>::mma(d[m], desc_a(a_rows + m * 64 * 128) + ((k * 32) >> 4),
                              db + ((HOPPER_FP8 ? k * 32 : k * 16 * 128) >> 4), k > 0 || add);
}

// ---- tiles, work units and the epilogue ------------------------------------------------------

__device__ __forceinline__ unsigned char* align_1024(unsigned char* p) {
    return reinterpret_cast<unsigned char*>((reinterpret_cast<u64>(p) + 1023) & ~u64(1023));
}

// Output tile `t` in a grouped order: group_m tile rows advance together along N, so the blocks
// running at one time share the same few strips of A and B in L2.
__device__ __forceinline__ void tile_coords(int t, int tiles_m, int tiles_n, int group_m,
                                            int& tm, int& tn) {
    const int per_group = group_m * tiles_n;
    const int first_m = (t / per_group) * group_m;
    const int rows = min(tiles_m - first_m, group_m);
    tm = first_m + (t % per_group) % rows;
    tn = (t % per_group) / rows;
}

// A unit of work: K slices [k0, k1) of output tile `tile`, the `split`-th of `splits` parts of its
// K range (splits = 1: the whole tile). The splits of one tile are consecutive units.
struct Unit { int tile, split, tm, tn, k0, k1; };

__device__ __forceinline__ Unit unit_at(int u, int tiles_m, int tiles_n, int group_m, int splits,
                                        int k_tiles) {
    Unit w;
    w.tile = u / splits;
    w.split = u % splits;
    tile_coords(w.tile, tiles_m, tiles_n, group_m, w.tm, w.tn);
    w.k0 = (int)((long long)w.split * k_tiles / splits);
    w.k1 = (int)((long long)(w.split + 1) * k_tiles / splits);
    return w;
}

// The output element types: FP32, FP16 or BF16 (round to nearest even); the 16-bit ones are
// tags for the same 16-bit patterns, which pick the conversion.
struct Half { u16 bits; };
struct BFloat { u16 bits; };
__device__ __forceinline__ void put1(float* p, float v) { *p = v; }
__device__ __forceinline__ void put2(float* p, float v0, float v1) {
    float2 pair;
    pair.x = v0;
    pair.y = v1;
    *reinterpret_cast<float2*>(p) = pair;
}
template <typename H> __device__ __forceinline__ u32 pack2(float v0, float v1);  // v0: low half
template <> __device__ __forceinline__ u32 pack2<Half>(float v0, float v1) {
    u32 packed;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(v1), "f"(v0));
    return packed;
}
template <> __device__ __forceinline__ u32 pack2<BFloat>(float v0, float v1) {
    u32 packed;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(v1), "f"(v0));
    return packed;
}

// Write the 64 x (2 NACC) accumulators of one m64 wgmma as 16-bit values. Lane l holds 2 values
// of each 8-column chunk (see the FP32 version below), which as stores would write 16 of a 32-byte
// sector per row. So the 4 lanes of a quad swap their packed pairs (shuffles): for each 16
// columns, lane q ends up with columns 4q..4q+3 and stores them as one 8-byte value, and a quad
// writes whole 32-byte sectors.
template <int NACC, typename H>
__device__ __forceinline__ void store_rows(const float (&d)[NACC], const float* C_in, H* C_out16,
                                           int M, int N, float alpha, float beta, int row0,
                                           int col0, int thread_in_wg) {
    u16* C_out = reinterpret_cast<u16*>(C_out16);
    const int warp = thread_in_wg / 32, lane = thread_in_wg % 32, q = lane % 4;
    const int r_base = row0 + 16 * warp + lane / 4;
    const int src0 = (lane & ~3) | ((2 * q) & 3), src1 = (lane & ~3) | ((2 * q + 1) & 3);
    const bool whole = (N & 3) == 0;                  // rows start on 8-byte boundaries
#pragma unroll
    for (int t = 0; t < NACC / 8; ++t) {              // pairs of 8-column chunks: 16 columns
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int r = r_base + 8 * half;
            const long long row = (long long)min(r, M - 1) * N;
            u32 pk[2];
#pragma unroll
            for (int j = 0; j < 2; ++j) {             // chunk 2t + j: columns c, c + 1
                const int c = col0 + 16 * t + 8 * j + 2 * q, at = 4 * (2 * t + j) + 2 * half;
                float v0 = alpha * d[at], v1 = alpha * d[at + 1];
                if (beta != 0.f && r < M) {
                    if (c < N) v0 += beta * C_in[row + c];
                    if (c + 1 < N) v1 += beta * C_in[row + c + 1];
                }
                pk[j] = pack2<H>(v0, v1);
            }
            const u32 a0 = __shfl_sync(0xffffffffu, pk[0], src0);
            const u32 a1 = __shfl_sync(0xffffffffu, pk[1], src0);
            const u32 b0 = __shfl_sync(0xffffffffu, pk[0], src1);
            const u32 b1 = __shfl_sync(0xffffffffu, pk[1], src1);
            const u32 w0 = q < 2 ? a0 : a1, w1 = q < 2 ? b0 : b1;   // columns c4 .. c4 + 3
            const int c4 = col0 + 16 * t + 4 * q;
            if (r >= M) continue;
            if (whole && c4 + 3 < N) {
                uint2 four;
                four.x = w0;
                four.y = w1;
                *reinterpret_cast<uint2*>(C_out + row + c4) = four;
            } else {
                const u16 v[4] = {(u16)(w0 & 0xFFFF), (u16)(w0 >> 16), (u16)(w1 & 0xFFFF),
                                  (u16)(w1 >> 16)};
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    if (c4 + e < N) C_out[row + c4 + e] = v[e];
            }
        }
    }
}

// Write the 64 x (2 NACC) accumulators of one m64 wgmma: warp w owns rows 16w..16w+15; lane l
// holds, for each 8-column chunk j, (row l/4, cols 8j + 2(l%4) + {0,1}) and the same 8 rows further
// down. C_out's rows are N elements apart; pairs go out as one store when that keeps them aligned
// (two 8-column chunks of a warp's 8 rows: whole 32-byte sectors).
template <int NACC>
__device__ __forceinline__ void store_rows(const float (&d)[NACC], const float* C_in, float* C_out,
                                           int M, int N, float alpha, float beta, int row0,
                                           int col0, int thread_in_wg) {
    const int warp = thread_in_wg / 32, lane = thread_in_wg % 32;
    const int r_base = row0 + 16 * warp + lane / 4;
    const int c_base = col0 + 2 * (lane % 4);
    const bool even_ldc = (N & 1) == 0;
#pragma unroll
    for (int j = 0; j < NACC / 4; ++j) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int r = r_base + 8 * half, c = c_base + 8 * j;
            if (r >= M) continue;
            float v0 = alpha * d[4 * j + 2 * half], v1 = alpha * d[4 * j + 2 * half + 1];
            const long long at = (long long)r * N + c;
            if (even_ldc && c + 1 < N) {
                if (beta != 0.f) { v0 += beta * C_in[at]; v1 += beta * C_in[at + 1]; }
                put2(C_out + at, v0, v1);
            } else {                                   // odd N: rows start off the pair grid
                if (c < N) put1(C_out + at, beta != 0.f ? v0 + beta * C_in[at] : v0);
                if (c + 1 < N) put1(C_out + at + 1, beta != 0.f ? v1 + beta * C_in[at + 1] : v1);
            }
        }
    }
}

// One box of B: into this block's buffer, or in a cluster into every block's (multicast).
template <class T>
__device__ __forceinline__ void copy_b(u32 dst, const TensorMap* map_b, u32 full, int c0, int c1) {
    if constexpr (T::CLUSTER > 1)
        tma_load_multicast(dst, map_b, full, c0, c1, (1 << T::CLUSTER) - 1);
    else
        tma_load(dst, map_b, full, c0, c1);
}

// Issue the TMA copies of K slice `k_tile` of output tile (tm, tn) into one stage buffer.
template <class T>
__device__ __forceinline__ void load_stage(u32 stage, u32 full, const TensorMap* map_a,
                                           const TensorMap* map_b, int tm, int tn, int k_tile) {
    mbar_arrive_expect_tx(full, T::STAGE_BYTES);
    tma_load(stage, map_a, full, k_tile * BK, tm * T::BM);   // A's box: BM rows (hopper/stages.py)
    const int rank = T::CLUSTER > 1 ? (int)cluster_rank() : 0;   // CLUSTER: this block's share
#if HOPPER_FP8         // B is N x K: BN rows of 128 bytes, one box (CLUSTER: one box per block)
    constexpr int ROWS = T::BN / T::CLUSTER;
    copy_b<T>(stage + T::A_TILE_BYTES + rank * ROWS * 128, map_b, full, k_tile * BK,
              tn * T::BN + rank * ROWS);
#else
    constexpr int BOXES = T::BN / B_BOX / T::CLUSTER;
#pragma unroll
    for (int i = 0; i < BOXES; ++i) {
        const int box = rank * BOXES + i;
        copy_b<T>(stage + T::A_TILE_BYTES + box * B_BOX_BYTES, map_b, full,
                  tn * T::BN + box * B_BOX, k_tile * BK);
    }
#endif
}

// Hand a buffer back (its "empty" mbarrier): to this block's producer, and in a cluster to every
// block's, since each one's copies of B land in this block's buffer too.
template <class T>
__device__ __forceinline__ void release(u32 empty) {
    if constexpr (T::CLUSTER == 1)
        mbar_arrive(empty);
    else
#pragma unroll
        for (int cta = 0; cta < T::CLUSTER; ++cta) mbar_arrive_cluster(empty, cta);
}

// ---- split-K: the last of a tile's splits adds the partial sums -------------------------------

// Each split writes its warpgroup's accumulators to its own slot of `partials` (float4 runs that
// the 128 threads write side by side), fences, and counts itself in; the warpgroup that counts
// last adds every split's slot, its own included, in split order: the same order whichever
// finishes last, so the result does not depend on timing. It issues a batch of loads before
// adding them (one L2 round trip per batch, not per load), then resets the counter for the next
// launch. Returns true in that last warpgroup, which then stores the tile.
template <class T>
__device__ __forceinline__ bool add_splits(float (&d)[T::MMA_M][T::NACC], float* partials,
                                           int* counters, const Unit& w, int splits, int part,
                                           int consumer, int thread_in_wg, volatile int* last) {
    constexpr int RUNS = T::MMA_M * T::NACC / 4;      // float4 runs per thread
    constexpr int BATCH = RUNS > 16 ? 8 : RUNS;       // loads in flight (registers allowing)
    float4* slots = reinterpret_cast<float4*>(partials) + thread_in_wg;
    const long long unit_stride = (long long)T::PARTS * RUNS * 128;
    const long long first = (long long)w.tile * splits * unit_stride + (long long)part * RUNS * 128;
    float4* mine = slots + first + (long long)w.split * unit_stride;
#pragma unroll
    for (int r = 0; r < RUNS; ++r) {
        const int m = (4 * r) / T::NACC, i = (4 * r) % T::NACC;
        mine[r * 128] = make_float4(d[m][i], d[m][i + 1], d[m][i + 2], d[m][i + 3]);
    }
    __threadfence();                                  // my partial sums are visible GPU-wide...
    warpgroup_barrier(1 + consumer);                  // ...for all 128 threads of the warpgroup
    int* counter = counters + w.tile * T::PARTS + part;
    if (thread_in_wg == 0) *last = atomicAdd(counter, 1) == splits - 1;
    warpgroup_barrier(1 + consumer);
    if (!*last) return false;
    __threadfence();
    zero(d);
    for (int s = 0; s < splits; ++s) {
        const float4* slot = slots + first + s * unit_stride;
#pragma unroll
        for (int r0 = 0; r0 < RUNS; r0 += BATCH) {
            float4 p[BATCH];
#pragma unroll
            for (int b = 0; b < BATCH; ++b) p[b] = __ldcg(slot + (r0 + b) * 128);
#pragma unroll
            for (int b = 0; b < BATCH; ++b) {
                const int m = (4 * (r0 + b)) / T::NACC, i = (4 * (r0 + b)) % T::NACC;
                d[m][i] += p[b].x; d[m][i + 1] += p[b].y; d[m][i + 2] += p[b].z; d[m][i + 3] += p[b].w;
            }
        }
    }
    if (thread_in_wg == 0) *counter = 0;
    return true;
}

// ---- stage "wgmma": plain copies, one buffer -----------------------------------------------
// The first two steps of the ladder are built for the 16-bit formats only: the FP8 rung is the
// last kernels' (persistent, pingpong) with FP8 inputs.
#if !HOPPER_FP8

// Copy one K slice with 16-byte loads into the swizzled layout; zeros outside the matrices.
// All of a thread's loads are issued before its first store, so their latencies overlap (a
// load-store, load-store loop would pay one full memory latency per chunk).
constexpr int PLAIN_THREADS = 256;
constexpr int A_CHUNKS = Wide::BM * (BK / 8) / PLAIN_THREADS;        // 4 per thread
constexpr int B_CHUNKS = BK * (Wide::BN / 8) / PLAIN_THREADS;        // 8 per thread

__device__ __forceinline__ void copy_slice(unsigned char* sA, unsigned char* sB, const u16* A,
                                           const u16* B, int M, int Np, int Kp, int m0, int n0,
                                           int k0) {
    constexpr int BN = Wide::BN;
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
    unsigned char* sB = sA + Wide::A_TILE_BYTES;
    const int wg = threadIdx.x / 128;
    const int m0 = blockIdx.y * Wide::BM, n0 = blockIdx.x * Wide::BN;
    float d[1][Wide::NACC];
    zero(d);
    for (int k0 = 0; k0 < Kp; k0 += BK) {
        __syncthreads();                       // every warpgroup finished reading the old slice
        copy_slice(sA, sB, A, B, M, Np, Kp, m0, n0, k0);
        fence_proxy_async();
        __syncthreads();
        wgmma_fence();
        fence_accumulators(d);
        mma_slice<Wide>(d, smem_addr(sA + wg * 64 * 128), smem_addr(sB));
        wgmma_commit();
        wgmma_wait<0>();
        fence_accumulators(d);
    }
    store_rows(d[0], C_in, C_out, M, N, alpha, beta, m0 + wg * 64, n0, threadIdx.x % 128);
}

// ---- stage "tma": TMA copies into a ring of STAGES buffers, mbarrier per buffer -------------

__device__ __forceinline__ void kernel_tma(const TensorMap* map_a, const TensorMap* map_b,
                                           const float* C_in, float* C_out, int M, int N,
                                           int Kp, float alpha, float beta) {
    using T = Wide;
    extern __shared__ unsigned char smem_raw[];
    unsigned char* stages = align_1024(smem_raw);
    u64* full = reinterpret_cast<u64*>(stages + T::STAGES * T::STAGE_BYTES);
    const u32 base = smem_addr(stages);
    const int wg = threadIdx.x / 128;
    const int tm = blockIdx.y, tn = blockIdx.x;
    const int k_tiles = (Kp + BK - 1) / BK;
    if (threadIdx.x == 0) {
        for (int s = 0; s < T::STAGES; ++s) mbar_init(smem_addr(&full[s]), 1);
        fence_barrier_init();
    }
    __syncthreads();
    if (threadIdx.x == 0)                      // prologue: fill the ring
        for (int s = 0; s < T::STAGES && s < k_tiles; ++s)
            load_stage<T>(base + s * T::STAGE_BYTES, smem_addr(&full[s]), map_a, map_b, tm, tn, s);
    float d[1][T::NACC];
    zero(d);
    for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % T::STAGES;
        mbar_wait(smem_addr(&full[s]), (kt / T::STAGES) & 1);
        wgmma_fence();
        fence_accumulators(d);
        mma_slice<T>(d, base + s * T::STAGE_BYTES + wg * 64 * 128,
                     base + s * T::STAGE_BYTES + T::A_TILE_BYTES);
        wgmma_commit();
        wgmma_wait<0>();
        fence_accumulators(d);
        __syncthreads();                       // both warpgroups are done with buffer s
        if (threadIdx.x == 0 && kt + T::STAGES < k_tiles)
            load_stage<T>(base + s * T::STAGE_BYTES, smem_addr(&full[s]), map_a, map_b, tm, tn,
                          kt + T::STAGES);
    }
    store_rows(d[0], C_in, C_out, M, N, alpha, beta, tm * T::BM + wg * 64, tn * T::BN,
               threadIdx.x % 128);
}

#endif  // !HOPPER_FP8

// ---- stages "ws", "persistent", "pingpong": producer and consumer warpgroups ---------------

// Where a block walks its units: `first`, `first + step`, ... below tiles x splits.
// In a cluster the units are the clusters' (tiles_m counts groups of `cluster` tile rows) and
// each block takes tile row `rank` of its cluster's group.
struct Walk {
    int first, step, tiles_m, tiles_n, group_m, splits, k_tiles, cluster, rank;
    __device__ __forceinline__ int units() const { return tiles_m * tiles_n * splits; }
    __device__ __forceinline__ Unit at(int u) const {
        Unit w = unit_at(u, tiles_m, tiles_n, group_m, splits, k_tiles);
        w.tm = w.tm * cluster + rank;
        return w;
    }
};

// The producer's loop: wait until a buffer is empty, then fill it, slice after slice of every
// unit this block walks.
template <class T>
__device__ __forceinline__ void produce(const TensorMap* map_a, const TensorMap* map_b, u32 base,
                                        u64* full, u64* empty, const Walk& walk) {
    int it = 0;                                // slices issued so far (across units)
    for (int u = walk.first; u < walk.units(); u += walk.step) {
        const Unit w = walk.at(u);
        for (int kt = w.k0; kt < w.k1; ++kt, ++it) {
            const int s = it % T::STAGES;
            mbar_wait(smem_addr(&empty[s]), ((it / T::STAGES) & 1) ^ 1);   // first pass: free
            load_stage<T>(base + s * T::STAGE_BYTES, smem_addr(&full[s]), map_a, map_b, w.tm, w.tn,
                          kt);
        }
    }
}

// ---- the staged epilogue: the consumers hand finished tiles to three storer warps ------------
// Two mbarriers hand the staging buffer back and forth once per unit the block walks, stored or
// not (split-K: only the warpgroup that adds the sums stores its rows; a flag per warpgroup says
// so): "staged" (every consumer thread arrives after writing its rows) and "drained" (every
// storer thread arrives after reading them). Arrivals release and waits acquire (CTA scope), which
// orders the shared-memory writes before the reads and the reads before the next tile's writes.
// Each side waits for the other's previous phase before its own arrival, so neither is ever two
// phases ahead and unit n's parity, n & 1, names one phase.
constexpr int STORERS = 96;                    // warps 1-3 of the producer warpgroup

// A consumer warpgroup's side: alpha acc (+ beta C_in, read as store_rows reads it, so the result
// has the same bits) as 16-bit pairs, converted before waiting; then, once the storers have drained
// the last tile, its 64 rows into the staging buffer. A warp's store covers 8 rows 528 bytes apart
// (4 banks further each) and 4 pairs per row: 32 different banks.
template <class T, typename H>
__device__ __forceinline__ void stage_rows(const float (&d)[T::NACC], const float* C_in,
                                           u32 staging, u32 staged, u32 drained,
                                           volatile int* stores, bool store, int local, int M,
                                           int N, float alpha, float beta, int row0, int col0,
                                           int part, int thread_in_wg) {
    const int warp = thread_in_wg / 32, lane = thread_in_wg % 32, q = lane % 4;
    const int r_base = row0 + 16 * warp + lane / 4;
    u32 pk[T::NACC / 2];
    if (store) {
#pragma unroll
        for (int j = 0; j < T::NACC / 4; ++j)          // 8-column chunks: columns c, c + 1
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int r = r_base + 8 * half, c = col0 + 8 * j + 2 * q, at = 4 * j + 2 * half;
                const long long row = (long long)min(r, M - 1) * N;
                float v0 = alpha * d[at], v1 = alpha * d[at + 1];
                if (beta != 0.f && r < M) {
                    if (c < N) v0 += beta * C_in[row + c];
                    if (c + 1 < N) v1 += beta * C_in[row + c + 1];
                }
                pk[2 * j + half] = pack2<H>(v0, v1);
            }
    }
    mbar_wait(drained, (local & 1) ^ 1);               // unit 0: the phase before the first
    if (store) {
        const u32 mine = staging + (64 * part + 16 * warp + lane / 4) * T::STAGING_PITCH + 4 * q;
#pragma unroll
        for (int j = 0; j < T::NACC / 4; ++j)
#pragma unroll
            for (int half = 0; half < 2; ++half)
                st_shared(mine + 8 * half * T::STAGING_PITCH + 16 * j, pk[2 * j + half]);
    }
    if (thread_in_wg == 0) stores[part] = store;
    mbar_arrive(staged);
}

// The storers' side (96 threads): for each unit, once it is staged, copy the rows to be stored
// to C. Warp w takes rows w, w + 3, ...; a row is 512 bytes, one 16-byte chunk per lane, so a
// warp reads and writes it whole. Element by element where C's rows are not 16-byte aligned (N
// not a multiple of 8) or a chunk runs past N; rows past M are not stored.
template <class T, typename H>
__device__ __forceinline__ void drain(u32 staging, u32 staged, u32 drained,
                                      const volatile int* stores, H* C_out16, int M, int N,
                                      const Walk& walk, int storer) {
    static_assert(T::BN * 2 == 32 * 16, "one 16-byte chunk of a staged row per lane");
    u16* C_out = reinterpret_cast<u16*>(C_out16);
    const int warp = storer / 32, lane = storer % 32;
    const bool aligned = (N & 7) == 0;
    int local = 0;
    for (int u = walk.first; u < walk.units(); u += walk.step, ++local) {
        const Unit w = walk.at(u);
        const int c = w.tn * T::BN + 8 * lane;
        mbar_wait(staged, local & 1);
        for (int part = 0; part < T::PARTS; ++part) {
            if (!stores[part]) continue;
            const int end = min(64 * (part + 1), M - w.tm * T::BM);
            for (int r = 64 * part + warp; r < end; r += STORERS / 32) {
                const uint4 v = ld_shared4(staging + r * T::STAGING_PITCH + 16 * lane);
                u16* dst = C_out + (long long)(w.tm * T::BM + r) * N + c;
                if (aligned && c + 8 <= N) {
                    *reinterpret_cast<uint4*>(dst) = v;
                } else {
                    const u32 words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                    for (int e = 0; e < 8; ++e)
                        if (c + e < N) dst[e] = (u16)(words[e / 2] >> (16 * (e % 2)));
                }
            }
        }
        mbar_arrive(drained);
    }
}

// A consumer warpgroup's loop: compute each slice as it lands, keep one wgmma group in flight,
// hand the previous buffer back once its group has finished, then store each finished tile (after
// adding the other splits' sums when K is split; STAGED: hand it to the storer warps instead).
// With PINGPONG, consumer c takes every other unit of the block (c, c + 2, ...) and counts past
// the other's slices in the ring; the two take turns at their K loops (the `turn` mbarriers), so
// each one's stores overlap the other's MMAs. The turns are also what makes the parity waits
// safe: a consumer starts waiting on a buffer only after every earlier use of it has been waited
// on, so it is never two phases behind or ahead.
template <class T, typename Out>
__device__ __forceinline__ void consume(u32 base, u64* full, u64* empty, u64* turn, int consumer,
                                        const float* C_in, Out* C_out, int M, int N, float alpha,
                                        float beta, const Walk& walk, float* partials,
                                        int* counters, volatile int* last, u32 staging,
                                        u64* handoff, volatile int* stores) {
    const int thread_in_wg = threadIdx.x % 128;
    const bool signals = thread_in_wg == 0;
    const int part = T::PINGPONG ? 0 : consumer;       // which rows of the tile are this group's
    const u32 a_rows = T::PINGPONG ? 0 : consumer * 64 * 128;
    int it = 0, local = 0, mine = 0;                   // slices, units walked, own units
    float d[T::MMA_M][T::NACC];
    float slice[T::PROMOTE ? T::MMA_M : 1][T::PROMOTE ? T::NACC : 1];   // PROMOTE only
    zero(slice);
    for (int u = walk.first; u < walk.units(); u += walk.step, ++local) {
        const Unit w = walk.at(u);
        const int slices = w.k1 - w.k0;
        if (T::PINGPONG && (local & 1) != consumer) {  // the other warpgroup's unit
            it += slices;
            continue;
        }
        if (T::PINGPONG && (consumer == 1 || mine > 0))    // my turn: the other's K loop is done
            mbar_wait(smem_addr(&turn[consumer]), (consumer == 0 ? mine - 1 : mine) & 1);
        zero(d);
        for (int kt = 0; kt < slices; ++kt, ++it) {
            const int s = it % T::STAGES;
            mbar_wait(smem_addr(&full[s]), (it / T::STAGES) & 1);
            if constexpr (T::PROMOTE) {        // this slice's sums, then FP32 adds into d
                wgmma_fence();
                fence_accumulators(slice);
                mma_slice<T>(slice, base + s * T::STAGE_BYTES + a_rows,
                             base + s * T::STAGE_BYTES + T::A_TILE_BYTES, 0);
                wgmma_commit();
                wgmma_wait<0>();
                fence_accumulators(slice);
                if (signals) release<T>(smem_addr(&empty[s]));
                add_into(d, slice);
                continue;
            }
            wgmma_fence();
            fence_accumulators(d);
            mma_slice<T>(d, base + s * T::STAGE_BYTES + a_rows,
                         base + s * T::STAGE_BYTES + T::A_TILE_BYTES);
            wgmma_commit();
            wgmma_wait<1>();                   // the previous slice's group is done...
            fence_accumulators(d);
            if (kt > 0 && signals) release<T>(smem_addr(&empty[(it - 1) % T::STAGES]));   // ...free it
        }
        if (T::PINGPONG && signals) mbar_arrive(smem_addr(&turn[1 - consumer]));   // your turn
        ++mine;
        wgmma_wait<0>();
        fence_accumulators(d);
        if (!T::PROMOTE && slices > 0 && signals)
            release<T>(smem_addr(&empty[(it - 1) % T::STAGES]));
        const bool store = walk.splits == 1 ||   // else another split may add and store it
            add_splits<T>(d, partials, counters, w, walk.splits, part, consumer, thread_in_wg,
                          last + consumer);
        if constexpr (T::STAGED)               // every unit, stored or not: the storers count them
            stage_rows<T, Out>(d[0], C_in, staging, smem_addr(&handoff[0]),
                               smem_addr(&handoff[1]), stores, store, local, M, N, alpha, beta,
                               w.tm * T::BM + part * 64, w.tn * T::BN, part, thread_in_wg);
        else if (store)
#pragma unroll
            for (int m = 0; m < T::MMA_M; ++m)
                store_rows(d[m], C_in, C_out, M, N, alpha, beta, w.tm * T::BM + (part + m) * 64,
                           w.tn * T::BN, thread_in_wg);
    }
}

// Shared memory: the ring, the staging buffer (STAGED), then a "full" and an "empty" mbarrier per
// buffer, two "turn" mbarriers (pingpong), two flags (split-K); STAGED: the "staged" and "drained"
// mbarriers and the two consumers' "stores" flags. The storer warps need more than 24 registers,
// and so does a cluster's producer (it spills with 24): those kernels give the producer warpgroup
// 40 and the consumers 232 (128 x 40 + 256 x 232 <= 65536).
template <class T, typename Out, int PRODUCER_REGS = (T::STAGED || T::CLUSTER > 1) ? 40 : 24,
          int CONSUMER_REGS = (T::STAGED || T::CLUSTER > 1) ? 232 : 240>
__device__ __forceinline__ void kernel_specialised(const TensorMap* map_a, const TensorMap* map_b,
                                                   const float* C_in, Out* C_out, int M, int N,
                                                   int Kp, float alpha, float beta,
                                                   const Walk& walk, float* partials,
                                                   int* counters) {
    extern __shared__ unsigned char smem_raw[];
    unsigned char* stages = align_1024(smem_raw);
    unsigned char* staging = stages + T::STAGES * T::STAGE_BYTES;   // STAGED only
    u64* full = reinterpret_cast<u64*>(staging + T::STAGING_BYTES);
    u64* empty = full + T::STAGES;
    u64* turn = empty + T::STAGES;
    volatile int* last = reinterpret_cast<volatile int*>(turn + 2);
    u64* handoff = turn + 3;                           // STAGED: "staged", "drained"
    volatile int* stores = reinterpret_cast<volatile int*>(turn + 5);
    const u32 base = smem_addr(stages);
    if (threadIdx.x == 0) {
        for (int s = 0; s < T::STAGES; ++s) {
            mbar_init(smem_addr(&full[s]), 1);         // the producer's arrival (+ the bytes)
            mbar_init(smem_addr(&empty[s]), T::PARTS * T::CLUSTER);   // one per consumer of
        }                                              // the slice, in every block it lands in
        mbar_init(smem_addr(&turn[0]), 1);             // one arrival: the other's K loop is done
        mbar_init(smem_addr(&turn[1]), 1);
        if constexpr (T::STAGED) {
            mbar_init(smem_addr(&handoff[0]), 128 * T::PARTS);   // every consumer thread
            mbar_init(smem_addr(&handoff[1]), STORERS);          // every storer thread
        }
        fence_barrier_init();
    }
    if constexpr (T::CLUSTER > 1)                      // the other blocks' barriers are ready
        cluster_sync();                                // before any copy or arrival reaches them
    else
        __syncthreads();
    const int wg = threadIdx.x / 128;
    // Producer: one thread issues every copy. A consumer warpgroup without work (the second, when
    // one computes a whole 64-row tile) gives its registers back too and ends: it touches no
    // barrier, and the "empty" ones count T::PARTS arrivals, its partner's only. (The test of wg
    // is compiled out where both consumers work.) STAGED: warps 1-3 store the staged tiles.
    if (wg == 0 || (T::CONSUMERS == 1 && wg == 2)) {
        regs_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) produce<T>(map_a, map_b, base, full, empty, walk);
        if constexpr (T::STAGED)
            if (threadIdx.x >= 32)
                drain<T>(smem_addr(staging), smem_addr(&handoff[0]), smem_addr(&handoff[1]),
                         stores, C_out, M, N, walk, threadIdx.x - 32);
    } else {
        regs_inc<CONSUMER_REGS>();
        consume<T>(base, full, empty, turn, wg - 1, C_in, C_out, M, N, alpha, beta, walk,
                   partials, counters, last, smem_addr(staging), handoff, stores);
    }
    if constexpr (T::CLUSTER > 1)  // no block leaves while another may still arrive on its barriers
        cluster_sync();
}

template <class T>
__device__ __forceinline__ Walk make_walk(int first, int step, int M, int N, int Kp, int group_m,
                                          int splits) {
    Walk w;
    w.cluster = T::CLUSTER;                            // blocks (first, step) -> clusters
    w.rank = T::CLUSTER > 1 ? (int)cluster_rank() : 0;
    w.first = first / T::CLUSTER;
    w.step = step / T::CLUSTER;
    w.tiles_m = ((M + T::BM - 1) / T::BM + T::CLUSTER - 1) / T::CLUSTER;
    w.tiles_n = (N + T::BN - 1) / T::BN;
    w.group_m = group_m;
    w.splits = splits;
    w.k_tiles = (Kp + BK - 1) / BK;
    return w;
}

}  // namespace hopper

// ---- entry points, one per kernel; the names end in the input format of this build ------------

#if HOPPER_FP8
#define HOPPER_NAME(x) x##_e4m3
#elif HOPPER_BF16
#define HOPPER_NAME(x) x##_bf16
#else
#define HOPPER_NAME(x) x##_fp16
#endif

#define HOPPER_MAPS const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b

#if !HOPPER_FP8
extern "C" __global__ void __launch_bounds__(hopper::PLAIN_THREADS, 1)
HOPPER_NAME(hopper_wgmma)(const u16* A, const u16* B, const float* C_in, float* C_out, int M,
                          int N, int Np, int Kp, float alpha, float beta) {
    hopper::kernel_plain(A, B, C_in, C_out, M, N, Np, Kp, alpha, beta);
}

extern "C" __global__ void __launch_bounds__(256, 1)
HOPPER_NAME(hopper_tma)(HOPPER_MAPS, const float* C_in, float* C_out, int M, int N, int Kp,
                        float alpha, float beta) {
    hopper::kernel_tma(&map_a, &map_b, C_in, C_out, M, N, Kp, alpha, beta);
}

// One tile per block, in the launch grid's order (tiles_n x tiles_m blocks).
extern "C" __global__ void __launch_bounds__(384, 1)
HOPPER_NAME(hopper_ws)(HOPPER_MAPS, const float* C_in, float* C_out, int M, int N, int Kp,
                       float alpha, float beta) {
    const int tile = blockIdx.y * gridDim.x + blockIdx.x;
    const hopper::Walk walk = hopper::make_walk<hopper::Wide>(tile, 1 << 30, M, N, Kp, 1, 1);
    hopper::kernel_specialised<hopper::Wide>(&map_a, &map_b, C_in, C_out, M, N, Kp, alpha, beta,
                                             walk, nullptr, nullptr);
}
#endif  // !HOPPER_FP8

// The persistent kernels: one block per SM walks units blockIdx.x, + gridDim.x, ...; `splits`
// parts of K per tile (partials: tiles x splits x BM x BN floats, counters: PARTS ints per tile,
// zero before the first launch; both unused when splits = 1).
#define HOPPER_PERSISTENT(NAME, SHAPE, OUT)                                                       \
extern "C" __global__ void __launch_bounds__(384, 1)                                              \
HOPPER_NAME(NAME)(HOPPER_MAPS, const float* C_in, OUT* C_out, int M, int N, int Kp, float alpha,  \
                  float beta, int group_m, int splits, float* partials, int* counters) {          \
    const hopper::Walk walk = hopper::make_walk<SHAPE>(blockIdx.x, gridDim.x, M, N, Kp, group_m,  \
                                                       splits);                                   \
    hopper::kernel_specialised<SHAPE>(&map_a, &map_b, C_in, C_out, M, N, Kp, alpha, beta, walk,   \
                                      partials, counters);                                        \
}

// The cluster kernels: blocks 2c and 2c + 1 are cluster c (grid a multiple of 2).
#define HOPPER_CLUSTERED(NAME, SHAPE, OUT)                                                        \
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)                    \
HOPPER_NAME(NAME)(HOPPER_MAPS, const float* C_in, OUT* C_out, int M, int N, int Kp, float alpha,  \
                  float beta, int group_m, int splits, float* partials, int* counters) {          \
    const hopper::Walk walk = hopper::make_walk<SHAPE>(blockIdx.x, gridDim.x, M, N, Kp, group_m,  \
                                                       1);                                        \
    hopper::kernel_specialised<SHAPE>(&map_a, &map_b, C_in, C_out, M, N, Kp, alpha, beta, walk,   \
                                      nullptr, nullptr);                                          \
}

// Every tile shape with one output type; the names end in SUFFIX: "" (FP32), "_o16" (the
// 16-bit build's own format; BF16 in the FP8 build), "_ofp16" (FP16, FP8 build only).
#define HOPPER_SHAPES(SUFFIX, OUT)                                                                \
HOPPER_PERSISTENT(hopper_persistent##SUFFIX, hopper::Wide, OUT)                                   \
HOPPER_PERSISTENT(hopper_persistent_n128##SUFFIX, hopper::Narrow, OUT)                            \
HOPPER_PERSISTENT(hopper_persistent_n64##SUFFIX, hopper::Slim, OUT)                               \
HOPPER_PERSISTENT(hopper_pingpong##SUFFIX, hopper::PingPong, OUT)                                \
HOPPER_PERSISTENT(hopper_persistent_m64##SUFFIX, hopper::DecodeWide, OUT)                         \
HOPPER_PERSISTENT(hopper_persistent_m64_n128##SUFFIX, hopper::DecodeNarrow, OUT)                  \
HOPPER_PERSISTENT(hopper_persistent_m64_n64##SUFFIX, hopper::DecodeSlim, OUT)
// The staged epilogue, 16-bit outputs only (an FP32 tile would need 128 KiB of staging).
#define HOPPER_STAGED(SUFFIX, OUT)                                                                \
HOPPER_PERSISTENT(hopper_persistent_staged##SUFFIX, hopper::WideStaged, OUT)
// Clusters of two: the 128 x 256 tiles with one 16-bit output, direct and staged (the FP32 ones
// are the HOPPER_CLUSTERED lines below).
#define HOPPER_CLUSTERS(SUFFIX, OUT)                                                              \
HOPPER_CLUSTERED(hopper_persistent_c2##SUFFIX, hopper::WideC2, OUT)                               \
HOPPER_CLUSTERED(hopper_persistent_staged_c2##SUFFIX, hopper::WideStagedC2, OUT)
#define HOPPER_PROMOTED(SUFFIX, OUT)                                                              \
HOPPER_PERSISTENT(hopper_persistent_n128_promoted##SUFFIX, hopper::NarrowPromoted, OUT)           \
HOPPER_PERSISTENT(hopper_persistent_n64_promoted##SUFFIX, hopper::SlimPromoted, OUT)

HOPPER_SHAPES(, float)
HOPPER_CLUSTERED(hopper_persistent_c2, hopper::WideC2, float)
#if HOPPER_FP8
HOPPER_SHAPES(_o16, hopper::BFloat)
HOPPER_SHAPES(_ofp16, hopper::Half)
HOPPER_STAGED(_o16, hopper::BFloat)
HOPPER_STAGED(_ofp16, hopper::Half)
HOPPER_CLUSTERS(_o16, hopper::BFloat)
HOPPER_CLUSTERS(_ofp16, hopper::Half)
HOPPER_PROMOTED(, float)
HOPPER_PROMOTED(_o16, hopper::BFloat)
HOPPER_PROMOTED(_ofp16, hopper::Half)
#elif HOPPER_BF16
HOPPER_SHAPES(_o16, hopper::BFloat)
HOPPER_STAGED(_o16, hopper::BFloat)
HOPPER_CLUSTERS(_o16, hopper::BFloat)
#else
HOPPER_SHAPES(_o16, hopper::Half)
HOPPER_STAGED(_o16, hopper::Half)
HOPPER_CLUSTERS(_o16, hopper::Half)
#endif
