"""The words for a snapshot's sections and its easily confused facts.

Shared by the text renderer and by triage, which reads te-doctor's own text reports back.
"""

from __future__ import annotations

#: Section titles, in print order.
TITLES = {
    "host": "Host",
    "driver": "NVIDIA driver",
    "gpus": "GPUs",
    "cuda": "CUDA",
    "cudnn": "cuDNN",
    "torch": "PyTorch (read from its files, not imported)",
    "transformer_engine": "Transformer Engine",
    "packages": "Python packages",
    "environment": "Environment",
    "build": "Build prerequisites (the PyTorch/JAX extension is compiled at install)",
}
#: Labels that keep the different CUDA versions from ever being confused.
LABELS = {
    "driver.cuda_version": "CUDA supported by the driver",
    "torch.cuda_version": "CUDA torch was built for",
    "transformer_engine.core_cuda_major": "CUDA major TE's core was built for",
    "transformer_engine.core_cuda_archs": "GPU architectures in TE's core",
    "transformer_engine.needed_libraries": "libraries TE's core links against",
    "transformer_engine.loaded_at_import": "libraries TE loads itself at import",
    "torch.cuda_arch_list": "GPU architectures in libtorch_cuda",
    "cuda.runtime_version": "CUDA runtime TE uses",
    "cuda.toolkit_version": "CUDA toolkit (for source builds)",
    "cuda.toolkit_path": "toolkit path (for source builds)",
    "cuda.cublas_version": "cuBLASLt TE uses",
    "cuda.nvrtc_version": "NVRTC TE uses",
    "cudnn.version": "cuDNN TE calls",
    "torch.linked_libraries": "libraries libtorch_cuda binds",
    "torch.cudnn_version": "cuDNN torch links",
    "driver.libcuda_path": "libcuda.so.1 the loader picks",
    "cudnn.header_version": "cuDNN headers (for source builds)",
}
