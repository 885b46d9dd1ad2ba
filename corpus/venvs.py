"""The virtual environments the targets run in, one per group (main, tf, paddle), each from its own pinned
requirements file; (re)installed when that file, the python or $GL_CORPUS_PIP_ARGS changed."""
from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import HERE

REQUIREMENTS = {"main": "requirements.txt", "tf": "requirements-tf.txt", "paddle": "requirements-paddle.txt"}
INSTALL_TIMEOUT = {"main": 2400, "tf": 1800, "paddle": 1800}


def venv_dir(group: str) -> str:
    base = os.environ.get("GL_CORPUS_VENV") or os.path.join(tempfile.gettempdir(), "gl-corpus", "venv")
    return base if group == "main" else f"{base}-{group}"


def venv_python(group: str) -> str:
    return os.path.join(venv_dir(group), "bin", "python")


def ensure_venv(group: str, skip_install: bool) -> str | None:
    """None if the group's venv is ready, else the reason it is not."""
    req = os.path.join(HERE, REQUIREMENTS[group])
    vd, py = venv_dir(group), venv_python(group)
    with open(req, "rb") as f:
        stamp = hashlib.sha256(f.read() + sys.version.encode() + os.environ.get("GL_CORPUS_PIP_ARGS", "").encode())
    stamp_file = os.path.join(vd, ".gl-corpus-stamp")
    if os.path.exists(py) and os.path.exists(stamp_file) and Path(stamp_file).read_text() == stamp.hexdigest():
        return None
    if skip_install:
        return None if os.path.exists(py) else f"no venv at {vd} (--skip-install)"
    os.makedirs(os.path.dirname(vd), exist_ok=True)
    log = vd + ".install.log"
    print(f"[venv] {group}: installing {REQUIREMENTS[group]} into {vd} (log: {log})", flush=True)
    t0 = time.time()
    try:
        with open(log, "w") as lf:
            if not os.path.exists(py):
                subprocess.run([sys.executable, "-m", "venv", vd], check=True, stdout=lf, stderr=subprocess.STDOUT)
            cmd = [py, "-m", "pip", "install", "--disable-pip-version-check", "-r", req]
            cmd += shlex.split(os.environ.get("GL_CORPUS_PIP_ARGS", ""))
            subprocess.run(cmd, check=True, stdout=lf, stderr=subprocess.STDOUT, timeout=INSTALL_TIMEOUT[group])
    except subprocess.TimeoutExpired:
        return f"pip install timed out after {INSTALL_TIMEOUT[group]} s (log: {log})"
    except subprocess.CalledProcessError:
        tail = [ln for ln in Path(log).read_text(errors="replace").splitlines() if ln.strip()][-3:]
        return "pip install failed: " + " | ".join(tail)
    with open(stamp_file, "w") as f:
        f.write(stamp.hexdigest())
    print(f"[venv] {group}: ready in {time.time() - t0:.0f} s", flush=True)
    return None


def child_env() -> dict:
    env = dict(os.environ)
    env.update(PYTHONHASHSEED="0", CUDA_VISIBLE_DEVICES="", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false", TF_CPP_MIN_LOG_LEVEL="2",
               TF_ENABLE_ONEDNN_OPTS="0", PYTHONWARNINGS="ignore", TRANSFORMERS_VERBOSITY="error")
    return env
