"""Builds the client-request library (dgad/_client.c, plain C loaded with
ctypes: no Python headers needed) and records where the dgad repository is,
so that dgad.grad finds target/release/libdgad.so and dg-eval after
`pip install <dgad>/python`."""

import os

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(HERE)


class BuildPyWithInstallInfo(build_py):
    def run(self):
        super().run()
        # Only a build from a dgad checkout knows the repository.
        if os.path.isfile(os.path.join(REPOSITORY, "Cargo.toml")):
            target = os.path.join(self.build_lib, "dgad", "_install_info.py")
            with open(target, "w") as f:
                f.write('"""Written by setup.py at installation."""\n')
                f.write("REPOSITORY = %r\n" % REPOSITORY)


setup(
    ext_modules=[
        Extension(
            "dgad._client",
            sources=["dgad/_client.c"],
            extra_compile_args=["-O2"],
        )
    ],
    cmdclass={"build_py": BuildPyWithInstallInfo},
)
