# SPDX-License-Identifier: Apache-2.0
"""Builds libllmk.so with CMake and puts it inside the llmk package (pyproject.toml holds
the metadata). Environment: LLMK_CMAKE_ARGS (extra -D options, split on spaces),
LLMK_BUILD_JOBS (parallel jobs; default: the CPUs this process may use)."""

import os
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = os.path.dirname(os.path.abspath(__file__))


def _version():
    with open(os.path.join(ROOT, "VERSION")) as f:
        return f.readline().strip()


class BuildWithLibrary(build_py):
    """build_py, then CMake's libllmk.so into <build_lib>/llmk/libllmk.so."""

    def run(self):
        super().run()
        if shutil.which("cmake") is None:
            raise RuntimeError("llmk: building the package needs cmake and a C compiler "
                               "(Debian: apt-get install cmake gcc)")
        build_temp = os.path.join(ROOT, "build", "python-cmake")
        jobs = os.environ.get("LLMK_BUILD_JOBS") or str(len(os.sched_getaffinity(0)))
        args = ["-DCMAKE_BUILD_TYPE=Release", "-DLLMK_TESTS=OFF", "-DLLMK_EXAMPLES=OFF",
                "-DLLMK_TOOLS=OFF", "-DLLMK_ACLNN=OFF"]
        args += os.environ.get("LLMK_CMAKE_ARGS", "").split()
        subprocess.check_call(["cmake", "-S", ROOT, "-B", build_temp] + args)
        subprocess.check_call(["cmake", "--build", build_temp, "--target", "llmk_shared",
                               "-j", jobs])
        # the real file (libllmk.so.X.Y.Z) under the name _core.py looks for first
        src = os.path.realpath(os.path.join(build_temp, "libllmk.so"))
        dst_dir = os.path.join(self.build_lib, "llmk")
        os.makedirs(dst_dir, exist_ok=True)
        shutil.copyfile(src, os.path.join(dst_dir, "libllmk.so"))


class BinaryDistribution(Distribution):
    """The wheel carries a native library: platform-specific, not pure Python."""

    def has_ext_modules(self):
        return True


cmdclass = {"build_py": BuildWithLibrary}
try:
    from wheel.bdist_wheel import bdist_wheel

    class PlatformWheel(bdist_wheel):
        """libllmk.so is loaded through ctypes: any Python 3, one platform (py3-none-<plat>)."""

        def get_tag(self):
            return ("py3", "none") + tuple(super().get_tag()[2:])

    cmdclass["bdist_wheel"] = PlatformWheel
except ImportError:
    pass

# llmk._fast: the per-step calls (scatter_pa_kv_cache, ...) on CPU torch tensors without
# ctypes' per-call cost. Optional: where the compiler or Python.h (python3-dev) is missing
# the build goes on without it and every call takes the ctypes path. It only imports into
# the Python it was built for (its file name carries the ABI tag); elsewhere, ctypes.
fast = Extension("llmk._fast", ["python/llmk/_fast.c"], optional=True)

setup(version=_version(), cmdclass=cmdclass, distclass=BinaryDistribution, ext_modules=[fast])
