// Our ring all-reduce with the peer's memory read over NVLink (gemmlab/collectives/nvlink_ring.py).
//
// One launch runs a rank's whole ring: 2(N-1) steps, each reading the chunk that arrives from the
// predecessor's buffer (its input at the first reduce-scatter step, its output after) and, in the
// reduce-scatter, adding this rank's input to it as it is read: the addition rides inside the
// transfer instead of being a second pass over memory. The step table (chunk, from the input?,
// add?) comes from the host's RingPlan, so the kernel holds no ring arithmetic of its own.
//
// Block b of every rank moves the same slice of every chunk, so block b only waits for block b of
// its neighbours: ready[b] (written by the predecessor: "I arrived" or "I finished step t") and
// done[b] (written by the successor: "I have finished reading your buffers"). calls[b] counts the
// calls this block has made, so the flag values of one call follow on from the last one's without
// any reset. A block publishes its writes with a system-scope fence before it raises a flag; the
// waiting block reads the flag with an acquire load and reads the peer's data without the L1
// cache (ld.global.cg), so a replay never sees a stale copy.

typedef unsigned long long u64;

struct half_bits { unsigned short bits; };   // float16 storage; arithmetic through float

__device__ __forceinline__ float half_to_float(unsigned short h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

__device__ __forceinline__ unsigned short float_to_half(float f) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}

template <typename T> __device__ __forceinline__ T add(T a, T b) { return a + b; }
template <> __device__ __forceinline__ half_bits add(half_bits a, half_bits b) {
    half_bits r;
    r.bits = float_to_half(half_to_float(a.bits) + half_to_float(b.bits));
    return r;
}

template <typename T> __device__ __forceinline__ T load_peer(const T* p) { return __ldcg(p); }
template <> __device__ __forceinline__ half_bits load_peer(const half_bits* p) {
    half_bits r;
    r.bits = __ldcg(reinterpret_cast<const unsigned short*>(p));
    return r;
}

template <typename T> __device__ __forceinline__ uint4 add_vector(uint4 a, uint4 b) {
    union Items { uint4 v; T x[16 / sizeof(T)]; } ua, ub;
    ua.v = a;
    ub.v = b;
#pragma unroll
    for (int i = 0; i < int(16 / sizeof(T)); ++i) ua.x[i] = add(ua.x[i], ub.x[i]);
    return ua.v;
}

__device__ __forceinline__ u64 load_acquire(const u64* flag) {
    u64 value;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(value) : "l"(flag) : "memory");
    return value;
}

__device__ __forceinline__ void store_release(u64* flag, u64 value) {
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(flag), "l"(value) : "memory");
}

// The whole block waits until *flag (in this GPU's memory) reaches target.
__device__ __forceinline__ void wait_for(const u64* flag, u64 target) {
    if (threadIdx.x == 0)
        while (load_acquire(flag) < target) {
        }
    __syncthreads();
}

// After every thread of the block has written its part, raise *flag (possibly a peer's) to value.
__device__ __forceinline__ void raise_flag(u64* flag, u64 value) {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence_system();
        store_release(flag, value);
    }
}

template <typename T>
__device__ __forceinline__ void move_item(T* out, const T* peer, const T* local, long long i) {
    const T x = load_peer(peer + i);
    out[i] = local ? add(x, local[i]) : x;
}

constexpr int UNROLL = 4;   // 16-byte loads in flight per thread: NVLink reads are long

// out[lo:hi] = peer[lo:hi] (+ local[lo:hi] when local is not null), this block's slice of it.
// The 16-byte-aligned middle is cut into gridDim.x slices of whole vectors; the few items before
// and after it go to block 0. Every rank cuts a chunk the same way.
template <typename T>
__device__ void move_chunk(T* out, const T* peer, const T* local, long long lo, long long hi) {
    constexpr int V = 16 / sizeof(T);
    const long long misaligned = (reinterpret_cast<u64>(out + lo) % 16) / sizeof(T);
    const long long a0 = min(hi, lo + (misaligned ? V - misaligned : 0));
    const long long vectors = (hi - a0) / V;
    const long long a1 = a0 + vectors * V;
    if (blockIdx.x == 0) {
        for (long long i = lo + threadIdx.x; i < a0; i += blockDim.x) move_item(out, peer, local, i);
        for (long long i = a1 + threadIdx.x; i < hi; i += blockDim.x) move_item(out, peer, local, i);
    }
    const long long v0 = vectors * blockIdx.x / gridDim.x;
    const long long v1 = vectors * (blockIdx.x + 1) / gridDim.x;
    const uint4* p = reinterpret_cast<const uint4*>(peer + a0);
    const uint4* l = local ? reinterpret_cast<const uint4*>(local + a0) : nullptr;
    uint4* o = reinterpret_cast<uint4*>(out + a0);
    for (long long v = v0 + threadIdx.x; v < v1; v += UNROLL * blockDim.x) {
        uint4 x[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
            if (v + u * blockDim.x < v1) x[u] = __ldcg(p + v + u * blockDim.x);
        if (local) {
#pragma unroll
            for (int u = 0; u < UNROLL; ++u)
                if (v + u * blockDim.x < v1) x[u] = add_vector<T>(x[u], l[v + u * blockDim.x]);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
            if (v + u * blockDim.x < v1) o[v + u * blockDim.x] = x[u];
    }
}

// flags: this rank's ready[B], done[B], calls[B]; succ_flags and pred_flags: the same arrays of
// the successor and the predecessor (mapped into this process). table: 3 numbers per step.
template <typename T>
__global__ void __launch_bounds__(1024)
ring_allreduce(const T* in, T* out, u64 pred_in, u64 pred_out, const long long* offsets,
               const long long* table, int steps, u64* flags, u64 succ_flags, u64 pred_flags) {
    const int b = blockIdx.x, B = gridDim.x;
    u64* ready = flags + b;
    u64* done = flags + B + b;
    u64* calls = flags + 2 * B + b;
    u64* succ_ready = reinterpret_cast<u64*>(succ_flags) + b;
    u64* pred_done = reinterpret_cast<u64*>(pred_flags) + B + b;
    const u64 call = *calls;
    const u64 base = call * (steps + 1);
    raise_flag(succ_ready, base + 1);                  // my input is ready to be read
    for (int t = 0; t < steps; ++t) {
        wait_for(ready, base + 1 + t);                 // the predecessor arrived / did step t-1
        const long long chunk = table[3 * t];
        const T* peer = reinterpret_cast<const T*>(table[3 * t + 1] ? pred_in : pred_out);
        move_chunk<T>(out, peer, table[3 * t + 2] ? in : nullptr, offsets[chunk],
                      offsets[chunk + 1]);
        raise_flag(succ_ready, base + 2 + t);
    }
    raise_flag(pred_done, call + 1);                   // I read nothing more of yours
    wait_for(done, call + 1);                          // nobody reads mine any more
    if (threadIdx.x == 0) *calls = call + 1;
}
