// Fused attention forward on Tensor Cores: O = softmax(Q K^T * scale) V, one kernel, S never in
// memory. Lesson 16's tiled algorithm with lesson 12's MMA instructions:
//   * Q, K, V and O are [heads][N][D] row-major FP16 or BF16 (heads = batch x heads); O too;
//   * a block of WARPS warps owns BR = 16 x WARPS query rows of one head; each warp owns 16 rows,
//     whose Q fragments it keeps in registers for the whole kernel;
//   * the block walks the K/V tiles of BC = 64 rows: cp.async copies tile j + 1 into the second
//     shared buffer while the warps compute tile j (ping-pong, lesson 08);
//   * S = Q K^T for the warp's 16 x 64 piece with mma.sync m16n8k16 (FP32 accumulators), the
//     online softmax on those registers (running max and sum per row, FP32; the four lanes that
//     share a row exchange their maxima with shuffles), then the probabilities are packed to
//     FP16/BF16 A fragments straight from the accumulators and O += P V with mma.sync again;
//     O stays in registers, rescaled by exp(m - m') when a tile raises a row's max;
//   * causal: the tiles after the block's last row are never loaded, the diagonal ones masked;
//   * the end: O / l written once.
// Rows past N are zero-filled on load and never stored; keys past N are masked. D is 64 or 128.
// Every Tensor Core and copy instruction is written as the PTX it is (no header: NVRTC alone
// builds it, gemmlab/cudacompile.py), for sm_80 and newer (m16n8k16 BF16 MMA and cp.async).
// The Python side appends one extern "C" wrapper per configuration (gemmlab/tensorcore/flash.py).

typedef unsigned int u32;
typedef unsigned short u16;

struct fp16_t { u16 bits; };
struct bf16_t { u16 bits; };

namespace flash {

constexpr int BC = 64;                 // keys per K/V tile
#define FLASH_NEG_INF (__int_as_float(0xff800000u))   // -inf: 2^(-inf) = 0, no header needed
constexpr int PAD = 8;                 // halves of padding per shared row: ldmatrix's 8 rows of a
                                       // matrix then fall in distinct banks

__device__ __forceinline__ u32 smem_addr(const void* p) {
    return static_cast<u32>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool valid) {
    // 16 bytes from global to shared; zero-filled when !valid (rows past N)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(smem_addr(dst)), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n"); }
template <int N> __device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N));
}

__device__ __forceinline__ void ldmatrix_x4(u32 (&r)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(u32 (&r)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_addr(p)));
}

template <typename T> struct mma_op;
template <> struct mma_op<fp16_t> {
    static __device__ __forceinline__ void run(float (&d)[4], const u32 (&a)[4], u32 b0, u32 b1) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
    static __device__ __forceinline__ u32 pack(float lo, float hi) {
        u32 r;
        asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
        return r;
    }
};
template <> struct mma_op<bf16_t> {
    static __device__ __forceinline__ void run(float (&d)[4], const u32 (&a)[4], u32 b0, u32 b1) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
    static __device__ __forceinline__ u32 pack(float lo, float hi) {
        u32 r;
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
        return r;
    }
};

__device__ __forceinline__ float exp2_approx(float x) {      // 2^x; 2^-inf = +0
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

__device__ __forceinline__ float maxf(float a, float b) { return a > b ? a : b; }

// Copy `rows` rows of D halves, starting at row `first` of a head (N rows), into shared memory
// (row stride D + PAD); rows past N are zero-filled.
template <int D, int THREADS>
__device__ __forceinline__ void load_rows(u16* dst, const u16* head, int first, int rows, int N) {
    constexpr int CHUNKS = D / 8;                     // 16-byte pieces per row
    for (int c = threadIdx.x; c < rows * CHUNKS; c += THREADS) {
        int r = c / CHUNKS, k = (c % CHUNKS) * 8;
        int row = first + r;
        bool valid = row < N;
        const u16* src = head + (size_t)(valid ? row : 0) * D + k;
        cp_async16(dst + r * (D + PAD) + k, src, valid);
    }
}

template <typename T, int D, int WARPS, bool CAUSAL>
__device__ void forward(const u16* __restrict__ Q, const u16* __restrict__ K,
                        const u16* __restrict__ V, u16* __restrict__ O, int N, float scale_log2) {
    constexpr int BR = 16 * WARPS, THREADS = 32 * WARPS, LD = D + PAD;
    extern __shared__ __align__(16) u16 smem[];
    u16* Qs = smem;                                   // BR x LD
    u16* Ks = Qs + BR * LD;                           // 2 x BC x LD
    u16* Vs = Ks + 2 * BC * LD;                       // 2 x BC x LD

    const int tile = CAUSAL ? gridDim.x - 1 - blockIdx.x : blockIdx.x;   // heavy tiles first
    const int q0 = tile * BR;
    const size_t head = (size_t)blockIdx.y * N * D;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;             // fragment row group and column pair

    int kv_end = N;
    if (CAUSAL) kv_end = min(N, q0 + BR);             // tiles after the block's last row: skipped
    const int tiles = (kv_end + BC - 1) / BC;

    load_rows<D, THREADS>(Qs, Q + head, q0, BR, N);
    cp_async_commit();
    load_rows<D, THREADS>(Ks, K + head, 0, BC, N);
    load_rows<D, THREADS>(Vs, V + head, 0, BC, N);
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();

    // The warp's Q fragments, kept for the whole kernel: D/16 steps of 4 registers.
    u32 qf[D / 16][4];
    {
        const int m = lane / 8, r = lane % 8;
        const u16* base = Qs + (warp * 16 + (m % 2) * 8 + r) * LD + (m / 2) * 8;
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) ldmatrix_x4(qf[kk], base + kk * 16);
    }

    float acc[D / 8][4];                              // O: 16 rows x D per warp
#pragma unroll
    for (int n = 0; n < D / 8; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
    float row_max[2] = {FLASH_NEG_INF, FLASH_NEG_INF};        // rows g and g + 8 (in log2 units)
    float row_sum[2] = {0.f, 0.f};                    // this lane's part of l

    const int row_a = q0 + warp * 16 + g, row_b = row_a + 8;

    for (int j = 0; j < tiles; ++j) {
        const int stage = j % 2;
        if (j + 1 < tiles) {                          // next tile into the other buffer
            const int other = (j + 1) % 2;
            load_rows<D, THREADS>(Ks + other * BC * LD, K + head, (j + 1) * BC, BC, N);
            load_rows<D, THREADS>(Vs + other * BC * LD, V + head, (j + 1) * BC, BC, N);
        }
        cp_async_commit();
        cp_async_wait<1>();                           // tile j has landed
        __syncthreads();
        const u16* Kt = Ks + stage * BC * LD;
        const u16* Vt = Vs + stage * BC * LD;

        // S = Q K^T for 16 rows x 64 keys: 8 accumulators of m16n8.
        float s[BC / 8][4];
#pragma unroll
        for (int n = 0; n < BC / 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
        {
            const int m = lane / 8, r = lane % 8;
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
                for (int n = 0; n < BC / 8; n += 2) {
                    u32 b[4];                         // keys n*8.. (n+1)*8+7, k = kk*16 ..+15
                    ldmatrix_x4(b, Kt + (n * 8 + (m / 2) * 8 + r) * LD + kk * 16 + (m % 2) * 8);
                    mma_op<T>::run(s[n], qf[kk], b[0], b[1]);
                    mma_op<T>::run(s[n + 1], qf[kk], b[2], b[3]);
                }
            }
        }

        // Scale into log2 units, mask keys past N (and, causal, after the row), new row max.
        const int k0 = j * BC;
        const bool edge = CAUSAL ? (k0 + BC > q0 + warp * 16) : (k0 + BC > N);
        float tile_max[2] = {FLASH_NEG_INF, FLASH_NEG_INF};
#pragma unroll
        for (int n = 0; n < BC / 8; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                float v = s[n][e] * scale_log2;
                if (edge) {
                    const int key = k0 + n * 8 + 2 * t + (e % 2);
                    const int row = e < 2 ? row_a : row_b;
                    if (key >= N || (CAUSAL && key > row)) v = FLASH_NEG_INF;
                }
                s[n][e] = v;
                tile_max[e / 2] = maxf(tile_max[e / 2], v);
            }
        }
        float rescale[2], base[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            tile_max[h] = maxf(tile_max[h], __shfl_xor_sync(0xffffffffu, tile_max[h], 1));
            tile_max[h] = maxf(tile_max[h], __shfl_xor_sync(0xffffffffu, tile_max[h], 2));
            const float m_new = maxf(row_max[h], tile_max[h]);
            base[h] = m_new == FLASH_NEG_INF ? 0.f : m_new;         // a row with no key yet: no NaN
            rescale[h] = exp2_approx(row_max[h] - base[h]);
            row_max[h] = m_new;
            row_sum[h] *= rescale[h];
        }
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
            acc[n][0] *= rescale[0]; acc[n][1] *= rescale[0];
            acc[n][2] *= rescale[1]; acc[n][3] *= rescale[1];
        }

        // P = 2^(s - m), summed, packed into A fragments (two m16n8 accumulators make the
        // 16 x 16 A operand of one k step), then O += P V.
        u32 pf[BC / 16][4];
#pragma unroll
        for (int n = 0; n < BC / 8; ++n) {
            float p0 = exp2_approx(s[n][0] - base[0]), p1 = exp2_approx(s[n][1] - base[0]);
            float p2 = exp2_approx(s[n][2] - base[1]), p3 = exp2_approx(s[n][3] - base[1]);
            row_sum[0] += p0 + p1;
            row_sum[1] += p2 + p3;
            pf[n / 2][(n % 2) * 2 + 0] = mma_op<T>::pack(p0, p1);
            pf[n / 2][(n % 2) * 2 + 1] = mma_op<T>::pack(p2, p3);
        }
        {
            const int m = lane / 8, r = lane % 8;
#pragma unroll
            for (int kk = 0; kk < BC / 16; ++kk) {
#pragma unroll
                for (int n = 0; n < D / 8; n += 2) {
                    u32 b[4];                         // V rows kk*16.., columns n*8 .. n*8+15
                    ldmatrix_x4_trans(b, Vt + (kk * 16 + (m % 2) * 8 + r) * LD + n * 8 + (m / 2) * 8);
                    mma_op<T>::run(acc[n], pf[kk], b[0], b[1]);
                    mma_op<T>::run(acc[n + 1], pf[kk], b[2], b[3]);
                }
            }
        }
        __syncthreads();                              // all warps done with this buffer
    }

    // l: the four lanes of a row hold parts of it.
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        row_sum[h] += __shfl_xor_sync(0xffffffffu, row_sum[h], 1);
        row_sum[h] += __shfl_xor_sync(0xffffffffu, row_sum[h], 2);
    }
    const float inv_a = 1.f / row_sum[0], inv_b = 1.f / row_sum[1];
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
        const int col = n * 8 + 2 * t;
        if (row_a < N)
            *reinterpret_cast<u32*>(O + head + (size_t)row_a * D + col) =
                mma_op<T>::pack(acc[n][0] * inv_a, acc[n][1] * inv_a);
        if (row_b < N)
            *reinterpret_cast<u32*>(O + head + (size_t)row_b * D + col) =
                mma_op<T>::pack(acc[n][2] * inv_b, acc[n][3] * inv_b);
    }
}

}  // namespace flash
