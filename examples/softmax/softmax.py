import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Simple model that performs a Softmax activation.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies Softmax activation to the input tensor.

        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, num_features).

        Returns:
            torch.Tensor: Output tensor with Softmax applied, same shape as input.
        """
        return torch.softmax(x, dim=1)


# Sizes are KernelBench level 1's (23_Softmax.py): 4096 rows of 393216 fp32 (1.5 MB per row).
batch_size = 4096
dim = 393216

# With x ~ U[0, 1) every output is ~1/(0.63 * 393216) ~ 4e-6, so the default atol of 1e-4 would
# accept an all-zeros output. Compare relatively instead: atol far below the output magnitude,
# rtol 1e-4 (fp32 softmax implementations agree to ~1e-6 relative).
CUTEGEN_ATOL = 1e-8
CUTEGEN_RTOL = 1e-4


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return []  # No special initialization inputs needed
