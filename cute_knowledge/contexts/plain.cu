// CuTeGen knowledge-base snippet frame without `using namespace cute;` (for snippets about what that
// using-directive does, and plain CUDA code).
#include <cute/tensor.hpp>
#include <cutegen/abi.h>

// {{SNIPPET}}
