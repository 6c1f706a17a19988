import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Simple model that performs a Softsign activation.
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies Softsign activation to the input tensor.

        Args:
            x (torch.Tensor): Input tensor of any shape.

        Returns:
            torch.Tensor: Output tensor with Softsign applied, same shape as input.
        """
        return x / (1 + torch.abs(x))


# Softsign at a deliberately awkward size: 8 x 393253 = 3146024 elements, n % 1024 == 296 and each
# row starts misaligned (393253 is odd), so kernels that drop or mishandle a partial tile fail.
batch_size = 8
dim = 393216 + 37  # not a multiple of 4 or of any tile size: exercises tail handling


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return []  # No special initialization inputs needed
