"""The sandbox the learner's kernel runs in while a notebook is graded.

A learner can read the installed grader, so the kernel that runs their code is treated as hostile. With
bubblewrap (``bwrap``, Debian's ``bubblewrap``, the sandbox Flatpak uses) the kernel gets:

- its own mount namespace holding only the system (``/usr``, ``/etc``, ...), the Python installation and its
  site-packages, all read-only (each at its real path, and at the linked path the grader reached it by when that
  differs: a ``.venv`` that is a symbolic link works); a private ``/tmp`` and home, each a tmpfs capped at
  ``SCRATCH_BYTES`` that lives in memory and vanishes with the sandbox; the repository, the course folder, the
  gradebook, the learner's data (``RLPREP_HOME``) and the checkpoint cache are not there at all;
- a copy of the few ``rlprep`` modules a kernel needs (the value format, the assert helpers, lab08's scenes),
  not the package, so neither the reference solutions nor the lab builders can be read or imported;
- its own PID, IPC, UTS and network namespaces: it cannot see or signal the grader, every process it starts
  dies with it (``--die-with-parent``), and it has no network (the kernel talks to the grader over Unix sockets
  in a folder both can reach);
- an environment built from a short allow-list (no database URL, no tokens, no ``RLPREP_*`` paths);
- resource limits (processes, address space, CPU seconds, file size); when the grader runs as root the kernel
  runs as an unprivileged uid with no capabilities.

The folders the kernel shares with the grader (``RunDirs``: the call outbox and the sockets) are on the grader's
disk; ``rlprep.grading.kernel`` stops a kernel that puts more than ``EXCHANGE_BYTES`` there.

Where bubblewrap is missing or cannot create namespaces, the kernel still gets the allow-listed environment,
a scratch working folder and the limits, and the grade says ``sandbox: none: <why>``. A grader running as root
then refuses to start the kernel (``refusal``) unless ``RLPREP_SANDBOX=none`` says it was switched off on
purpose; even then the kernel runs as the unprivileged uid, never as root.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from rlprep.errors import RlprepError

SANDBOX_UID = 61_234  # an otherwise unused uid: its process count belongs to sandboxed kernels alone
MAX_PROCESSES = 128
MEMORY_BYTES = int(os.environ.get("RLPREP_SANDBOX_MEMORY_MB", "6144")) * 2**20
CPU_SECONDS = 900
FILE_BYTES = 256 * 2**20
SCRATCH_BYTES = int(os.environ.get("RLPREP_SANDBOX_SCRATCH_MB", "256")) * 2**20  # home and /tmp, each
SHM_BYTES = 64 * 2**20  # /dev/shm (POSIX shared memory, multiprocessing's semaphores)
EXCHANGE_BYTES = 256 * 2**20  # what the kernel may keep in the folders it shares with the grader
EXCHANGE_ENTRIES = 10_000  # files and folders there
HOME = "/home/learner"

# The only rlprep modules the learner's kernel may import (setup cells and the call server use them).
KERNEL_MODULES = ("__init__.py", "grading/__init__.py", "grading/wire.py", "grading/asserts.py",
                  "demos/__init__.py", "demos/image_diff_scenes.py")

_ENV_KEEP = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


@dataclass
class RunDirs:
    """The folders of one kernel: ``inbox`` (grader writes, kernel reads), ``outbox`` and ``ipc`` (kernel
    writes), ``home`` (the kernel's working folder without bubblewrap; in the sandbox its home is a tmpfs) and
    ``pkg`` (the kernel's copy of rlprep)."""

    root: Path
    inbox: Path = field(init=False)
    outbox: Path = field(init=False)
    ipc: Path = field(init=False)
    home: Path = field(init=False)
    pkg: Path = field(init=False)

    def __post_init__(self):
        self.root = Path(self.root)
        for name in ("inbox", "outbox", "home", "pkg"):
            setattr(self, name, self.root / name)
        self.ipc = self.root / "s"  # short: a socket's path must fit AF_UNIX's 107 bytes (``kernel.socket_base``)

    def create(self, kernel_uid: int | None) -> None:
        os.chmod(self.root, 0o711)  # the dropped uid must traverse it to reach its own folders
        for d in (self.inbox, self.outbox, self.ipc, self.home, self.pkg):
            d.mkdir(mode=0o755)
        for d in (self.outbox, self.ipc, self.home):
            if kernel_uid is not None:
                os.chown(d, kernel_uid, kernel_uid)
            else:
                os.chmod(d, 0o700)
        copy_kernel_package(self.pkg)


def exchange_overflow(dirs: RunDirs, *more: RunDirs) -> str:
    """``""``, or what the kernel did past the limits in the folders of ``dirs`` it writes on the grader's disk
    (the outbox, the sockets' folder and, without bubblewrap, its home): more than ``EXCHANGE_BYTES`` of disk
    blocks or more than ``EXCHANGE_ENTRIES`` files and folders. Links are not followed. ``more``: the folders of
    the other kernels grading the same notebook, which share the limits."""
    used, entries = 0, 0
    stack = [folder for d in (dirs, *more) for folder in (d.outbox, d.ipc, d.home)]
    while stack:
        try:
            with os.scandir(stack.pop()) as found:
                for entry in found:
                    entries += 1
                    if entries > EXCHANGE_ENTRIES:
                        return (f"it made over {EXCHANGE_ENTRIES} files in the folders it shares with the grader "
                                "(save scratch files in its home or /tmp instead)")
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    else:
                        used += entry.stat(follow_symlinks=False).st_blocks * 512
        except OSError:  # removed while it was read
            continue
        if used > EXCHANGE_BYTES:
            return (f"it wrote over {EXCHANGE_BYTES // 2**20} MiB into the folders it shares with the grader "
                    "(save scratch files in its home or /tmp instead)")
    return ""


def empty_exchange(dirs: RunDirs) -> None:
    """Delete what the kernel left in the folders it writes on the grader's disk (the folders themselves stay)."""
    for folder in (dirs.outbox, dirs.ipc, dirs.home):
        for entry in list(folder.iterdir()) if folder.is_dir() else []:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)


def copy_kernel_package(dest: Path) -> None:
    """Copy the allow-listed rlprep modules to ``dest/rlprep``."""
    import rlprep

    src = Path(rlprep.__file__).resolve().parent
    for rel in KERNEL_MODULES:
        target = dest / "rlprep" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if (src / rel).is_file():
            shutil.copyfile(src / rel, target)
            target.chmod(0o644)
        else:
            target.write_text("")
    for d in [dest, *dest.rglob("*")]:
        if d.is_dir():
            d.chmod(0o755)


def kernel_env(dirs: RunDirs, inside_home: str) -> dict[str, str]:
    """The kernel's whole environment: an allow-list, never the grader's own environment."""
    env = {k: os.environ[k] for k in _ENV_KEEP if k in os.environ}
    env.setdefault("LANG", "C.UTF-8")
    env.update({
        "PATH": os.pathsep.join(dict.fromkeys([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin",
                                               "/bin"])),
        "HOME": inside_home,
        "PYTHONPATH": str(dirs.pkg),
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": f"{inside_home}/.matplotlib",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "RLPREP_PROFILE": "smoke",
        "NBGRADER_EXECUTION": "autograde",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    })
    return env


def _limits_argv() -> list[str]:
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        return []
    return [prlimit, f"--nproc={MAX_PROCESSES}", f"--as={MEMORY_BYTES}", f"--cpu={CPU_SECONDS}",
            f"--fsize={FILE_BYTES}", "--core=0", "--"]


def _drop_argv() -> list[str]:
    """Run as an unprivileged uid without capabilities (only when the grader is root)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return []
    return [setpriv, f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}", "--clear-groups", "--no-new-privs",
            "--inh-caps=-all", "--bounding-set=-all", "--"]


def _system_mounts() -> list[str]:
    args = []
    for top in ("/usr", "/etc", "/lib", "/lib64", "/lib32", "/bin", "/sbin"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return args


def _link_hops(path: Path) -> list[Path]:
    """The folders an interpreter path passes through: its own folder and that of every link it points through
    (``.venv/bin/python`` -> ``/opt/py/bin/python3`` -> ``python3.11``), as written, not resolved."""
    hops, seen = [Path(path).parent], set()
    while Path(path).is_symlink() and path not in seen and len(seen) < 40:
        seen.add(path)
        path = Path(path).parent / os.readlink(path)
        hops.append(Path(os.path.normpath(path)).parent)
    return hops


def _never_mounted() -> list[Path]:
    """Folders the kernel must never see, even inside a folder it gets: the course checkout (``solutions/``, the
    labs' fixtures), the grader's working folder (a course folder and its gradebook), the rlprep package and the
    ``src/`` of an editable install (the reference solutions), the checkpoint and gradebook cache, the learner's data."""
    import rlprep
    from rlprep.paths import _user_dir, repo_root

    package = Path(rlprep.__file__).resolve().parent
    found = [package, Path.cwd().resolve()]
    if package.parent.name != "site-packages" and package.parent.name != "dist-packages":
        found.append(package.parent)  # src/ of an editable install
    for folder in (repo_root(), os.environ.get("RLPREP_CACHE") or _user_dir("cache"),
                   os.environ.get("RLPREP_HOME") or _user_dir("data")):
        if folder:
            found.append(Path(folder).expanduser().resolve())
    return [p for p in dict.fromkeys(found) if p != Path("/")]


def _pth_targets(site_dirs: list[Path]) -> list[Path]:
    """The folders the ``.pth`` files of ``site_dirs`` add to ``sys.path`` (lines that are paths, not ``import``)."""
    found = []
    for site_dir in site_dirs:
        for pth in sorted(site_dir.glob("*.pth")) if site_dir.is_dir() else []:
            try:
                lines = pth.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
            for line in lines:
                line = line.strip()
                if line and not line.startswith(("#", "import ", "import\t")):
                    found.append((site_dir / line).absolute())
    return found


def _interpreter_paths() -> tuple[list[Path], list[Path]]:
    """``(own, added)``: the folders the interpreter itself needs (its prefixes, the links its executable passes
    through, the standard library and site-packages), and those its site-packages' ``.pth`` files add. Nothing else
    from the grader's ``sys.path``: ``PYTHONPATH`` (a repository root, pytest's ``tests/``) never reaches the kernel,
    whose ``sys.path`` is its own interpreter's."""
    import site
    import sysconfig

    prefixes = {sys.base_prefix, sys.prefix, sys.exec_prefix, sys.base_exec_prefix}
    own = [Path(p) for p in prefixes] + _link_hops(Path(sys.executable))
    site_dirs = [Path(p) for p in site.getsitepackages(list(prefixes))]
    own += site_dirs + [Path(sysconfig.get_paths()[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    return own, _pth_targets(site_dirs)


def _python_mounts() -> list[str]:
    """The Python installation, read-only, with what the kernel must not see (``_never_mounted``) left out.

    Each folder is mounted at its real path; a path the grader reaches through a link (a ``.venv`` that is a
    symbolic link, a site-packages under a linked folder) gets the same link inside the sandbox, so the
    interpreter starts there under the very name the grader started it by. A ``.pth`` target inside or above a
    folder never mounted is left out; a never-mounted folder inside a mounted one (the rlprep package in
    site-packages, a repository inside a conda prefix) is hidden behind an empty tmpfs.
    """
    never = _never_mounted()

    def touches(path: Path) -> bool:  # inside a never-mounted folder, or holding one
        return any(path == n or n in path.parents or path in n.parents for n in never)

    own, added = _interpreter_paths()
    named = [p.absolute() for p in own] + [p for p in added if not touches(p.resolve())]
    named = [p for p in named if p.is_dir() and p.resolve() != Path("/")]
    roots = [Path(sys.executable).resolve().parent.parent, *(p.resolve() for p in named)]
    mounts, seen = [], []
    for root in sorted({r for r in roots if r.is_dir()}, key=lambda r: len(r.parts)):
        if any(root == s or s in root.parents for s in seen) or root == Path("/"):
            continue
        if str(root).startswith(("/usr/", "/etc/")):
            continue  # the system's, mounted apart
        seen.append(root)
        mounts += ["--ro-bind", str(root), str(root)]
    needed = {p.resolve() for p in own}
    for hidden in never:  # inside a mounted folder (or /usr), and not the interpreter's: an empty folder in its place
        inside = str(hidden).startswith("/usr/") or any(s in hidden.parents for s in seen)
        if inside and hidden.is_dir() and not any(hidden == p or hidden in p.parents for p in needed):
            mounts += ["--tmpfs", str(hidden)]
    return mounts + _links(named, seen)


def _links(named: list[Path], mounted: list[Path]) -> list[str]:
    """``--symlink REAL NAMED`` for every named folder whose name differs from its real path and is not already
    inside a mounted folder (where the host's own links come along) or behind a link made here."""
    args, made = [], []
    for path in sorted(set(named), key=lambda p: len(p.parts)):
        real = path.resolve()
        inside = [*mounted, *made]
        if path == real or any(path == m or m in path.parents for m in inside) or str(path).startswith(
                ("/usr/", "/etc/", "/proc", "/dev")):
            continue
        if any(path in m.parents for m in mounted):  # a mount point lies below it: it must stay a folder
            continue
        args += ["--symlink", str(real), str(path)]
        made.append(path)
    return args


def _parent_dirs(mounts: list[str]) -> list[str]:
    """``--perms 0755 --dir`` for every folder above a mount point, so that the unprivileged kernel can walk
    down to it (bubblewrap would otherwise create them 0700 when it runs as root)."""
    dests = [mounts[i + 2] for i, a in enumerate(mounts) if a in ("--ro-bind", "--bind", "--symlink")]
    dests += [mounts[i + 1] for i, a in enumerate(mounts) if a == "--tmpfs"]
    parents = {str(a) for d in dests for a in Path(d).parents if str(a) != "/"}
    args = []
    for d in sorted(parents, key=lambda x: len(Path(x).parts)):
        if not d.startswith(("/usr", "/etc", "/proc", "/dev")) and d not in ("/tmp", "/run", "/home", HOME):
            args += ["--perms", "0755", "--dir", d]  # (never the tmpfs mounts: --dir would reset their mode)
    return args


def bwrap_argv(dirs: RunDirs, command: list[str], as_root: bool | None = None) -> list[str]:
    """The full argv that runs ``command`` in the sandbox with ``dirs`` mounted."""
    bwrap = shutil.which("bwrap")
    as_root = os.geteuid() == 0 if as_root is None else as_root
    ns = (["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
          if as_root else ["--unshare-all"])  # as root the uid drop below replaces the user namespace
    mounts = [*_python_mounts(),
              "--ro-bind", str(dirs.pkg), str(dirs.pkg),
              "--ro-bind", str(dirs.inbox), str(dirs.inbox),
              "--bind", str(dirs.outbox), str(dirs.outbox),
              "--bind", str(dirs.ipc), str(dirs.ipc)]
    scratch = ["--size", str(SCRATCH_BYTES), "--perms", "1777", "--tmpfs"]  # in memory, capped, gone with the run
    small = ["--size", str(2**20), "--tmpfs"]  # folders that only hold mount points
    argv = [bwrap, *ns, "--die-with-parent", "--new-session", "--clearenv", *_system_mounts(),
            "--proc", "/proc", "--dev", "/dev", "--size", str(SHM_BYTES), "--perms", "1777", "--tmpfs", "/dev/shm",
            "--remount-ro", "/dev", *scratch, "/tmp", *small, "/run", *small, "/home", *scratch, HOME,
            *_parent_dirs(mounts), *mounts,
            "--remount-ro", "/",  # the sandbox's own root (and the folders made in it) cannot be written either
            "--chdir", HOME]
    for key, value in kernel_env(dirs, HOME).items():
        argv += ["--setenv", key, value]
    return [*argv, "--", *_limits_argv(), *(_drop_argv() if as_root else []), *command]


def plain_argv(command: list[str]) -> list[str]:
    """No sandbox: the limits, and the uid drop when the grader is root (``refusal`` first checks that the
    dropped uid can start the interpreter, and that the instructor switched the sandbox off on purpose)."""
    return [*_limits_argv(), *_drop_argv(), *command]


@functools.lru_cache(maxsize=1)
def probe() -> str:
    """``"bubblewrap"`` when a sandboxed Python starts here, else ``"none: <why>"`` (cached per process)."""
    if os.environ.get("RLPREP_SANDBOX", "").lower() == "none":
        return "none: switched off by RLPREP_SANDBOX=none"
    if not sys.platform.startswith("linux"):
        return f"none: bubblewrap needs Linux (this is {sys.platform})"
    if shutil.which("bwrap") is None:
        return "none: bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        return "none: setpriv (util-linux) is not installed, so the kernel could not drop root"
    import tempfile

    with tempfile.TemporaryDirectory(prefix="rlprep-probe-") as tmp:
        dirs = RunDirs(Path(tmp))
        dirs.create(SANDBOX_UID if os.geteuid() == 0 else None)
        code = "import rlprep.grading.wire, numpy; open('/proc/self/status').read()"
        try:
            run = subprocess.run(bwrap_argv(dirs, [sys.executable, "-c", code]), capture_output=True, text=True,
                                 timeout=60)
        except (OSError, subprocess.TimeoutExpired) as err:
            return f"none: bubblewrap could not start ({err})"
    if run.returncode != 0:
        why = (run.stderr.strip().splitlines() or [f"exit {run.returncode}"])[-1]
        return f"none: bubblewrap could not create the sandbox ({why[:200]})"
    return "bubblewrap"


@functools.lru_cache(maxsize=1)
def _dropped_start() -> str:
    """``""`` when the unprivileged uid starts this interpreter outside a sandbox, else why not (cached)."""
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed, so the uid cannot be dropped"
    import tempfile

    with tempfile.TemporaryDirectory(prefix="rlprep-probe-") as tmp:
        dirs = RunDirs(Path(tmp))
        dirs.create(SANDBOX_UID)
        try:
            run = subprocess.run(plain_argv([sys.executable, "-c", "import rlprep.grading.wire, numpy"]),
                                 capture_output=True, text=True, timeout=60, cwd=dirs.home,
                                 env=kernel_env(dirs, str(dirs.home)))
        except (OSError, subprocess.TimeoutExpired) as err:
            return str(err)
    if run.returncode != 0:
        return (run.stderr.strip().splitlines() or [f"exit {run.returncode}"])[-1][:200]
    return ""


def refusal() -> RlprepError | None:
    """Why the learner's kernel must not start here, or None.

    A grader running as root never runs the learner's code as root: without bubblewrap it refuses unless
    ``RLPREP_SANDBOX=none`` switched the sandbox off on purpose, and then it runs the code as ``SANDBOX_UID``
    (which must be able to start the interpreter).
    """
    kind = probe()
    if kind == "bubblewrap" or os.geteuid() != 0:
        return None
    if os.environ.get("RLPREP_SANDBOX", "").lower() != "none":
        return RlprepError(
            f"the grader runs as root and the sandbox is unavailable ({kind.removeprefix('none: ')}), so the "
            "learner's code would run without one",
            "install bubblewrap (apt-get install bubblewrap); or, to grade without a sandbox on purpose, set "
            f"RLPREP_SANDBOX=none: the code then runs as uid {SANDBOX_UID} without capabilities, but can read "
            "whatever that uid can read")
    why = _dropped_start()
    if why:
        return RlprepError(
            f"RLPREP_SANDBOX=none as root runs the learner's code as uid {SANDBOX_UID}, which cannot start "
            f"{sys.executable} ({why})",
            "install bubblewrap and unset RLPREP_SANDBOX (the sandbox mounts the interpreter for that uid), or "
            "install Python and the course's packages where other users can read and run them")
    return None


def launch_argv(dirs: RunDirs, command: list[str]) -> tuple[list[str], str]:
    """(argv, sandbox description) for starting the learner's kernel; raises ``refusal()``'s error."""
    kind = probe()
    if kind == "bubblewrap":
        return bwrap_argv(dirs, command), kind
    refused = refusal()
    if refused is not None:
        raise refused
    return plain_argv(command), kind
