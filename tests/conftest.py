"""Test set-up: run on Numba's CUDA simulator unless GEMMLAB_BACKEND=gpu is set explicitly
(``make gpu-test``). Set before gemmlab or numba.cuda is imported anywhere in the session; notebook
kernels started by nbval inherit it through the environment."""
import os

os.environ.setdefault("GEMMLAB_BACKEND", "sim")
os.environ.setdefault("MPLBACKEND", "Agg")
