// CuTeGen knowledge-base snippet frame: CuTe, the kernel ABI header, `using namespace cute;`.
// The test suite puts each entry's fix_before / fix_after in place of the SNIPPET line and runs the
// check tier (nvcc -ptx + ptxas -v) on the result.
#include <cute/tensor.hpp>
#include <cutegen/abi.h>
using namespace cute;

// {{SNIPPET}}
