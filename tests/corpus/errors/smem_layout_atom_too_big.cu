// cutegen-corpus: 128B-swizzle GMMA smem atom (8x64 halves) tiled onto a (128,32) smem tile whose K extent (32) is smaller than the atom's 64 (needs the SW64 atom)
// expect-root: tile_to_shape: block shape does not divide the target shape.
#include <cute/tensor.hpp>
using namespace cute;

template <int kBlockM, int kBlockK>
struct SmemConfig {
  using SmemLayoutAtom = GMMA::Layout_K_SW128_Atom<half_t>;  // BUG
  using SmemLayoutA = decltype(tile_to_shape(SmemLayoutAtom{}, make_shape(Int<kBlockM>{}, Int<kBlockK>{})));  // BUG-ALT
};

__global__ void load_a_tile_kernel(half_t const* A, half_t* out, int K)
{
  using Cfg = SmemConfig<128, 32>;
  __shared__ alignas(1024) half_t smem[cosize_v<typename Cfg::SmemLayoutA>];
  Tensor sA = make_tensor(make_smem_ptr(smem), typename Cfg::SmemLayoutA{});  // (BM,BK)

  Tensor mA = make_tensor(make_gmem_ptr(A), make_shape(128, K), make_stride(K, _1{}));
  Tensor gA = local_tile(mA, Shape<_128, _32>{}, make_coord(0, blockIdx.x));
  for (int i = threadIdx.x; i < size(sA); i += blockDim.x) {
    sA(i) = gA(i);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < size(sA); i += blockDim.x) {
    out[blockIdx.x * size(sA) + i] = sA(i);
  }
}
