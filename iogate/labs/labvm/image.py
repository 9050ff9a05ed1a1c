"""Build and cache the lab VM image (debootstrap, no loop mount: mkfs.ext4 -d).

The cache lives outside the git clone (/var/cache/iogate/labvm, or env
IOGATE_LABVM_CACHE) and holds root.img, the kernel and initrd extracted for a
direct -kernel boot, the root SSH key, and a stamp with the recipe's hash: a
missing file or a changed recipe means a rebuild. Building needs root and the
Debian mirror this machine's apt is configured with.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from iogate.errors import IOGateError
from iogate.labs.labvm import recipe

DEFAULT_CACHE = Path("/var/cache/iogate/labvm")
IMAGE_SIZE = "6G"
BUILD_TIMEOUT_S = 1800


class LabVMError(IOGateError):
    """The lab VM could not be built, booted or reached."""


@dataclass(frozen=True)
class Image:
    """A built image in the cache."""

    directory: Path

    @property
    def root(self) -> Path:
        return self.directory / "root.img"

    @property
    def kernel(self) -> Path:
        return self.directory / "vmlinuz"

    @property
    def initrd(self) -> Path:
        return self.directory / "initrd.img"

    @property
    def ssh_key(self) -> Path:
        return self.directory / "id_ed25519"

    @property
    def stamp(self) -> Path:
        return self.directory / "stamp"

    def files(self) -> list[Path]:
        return [self.root, self.kernel, self.initrd, self.ssh_key, self.stamp]

    def facts(self) -> dict[str, str]:
        """kernel_release, kernel_origin (backports|stock), vdo_tools (yes|no)."""
        facts = {"kernel_release": (self.directory / "kernel-release").read_text().strip()}
        for line in (self.directory / "build-facts").read_text().splitlines():
            key, _, value = line.partition("=")
            facts[key] = value
        return facts


def cache_dir() -> Path:
    return Path(os.environ.get("IOGATE_LABVM_CACHE") or DEFAULT_CACHE)


def wanted_stamp() -> str:
    return recipe.recipe_hash(IMAGE_SIZE)


def is_current(image: Image) -> bool:
    """True when every file is there and the stamp names the current recipe."""
    if not all(path.is_file() for path in image.files()):
        return False
    return image.stamp.read_text().strip() == wanted_stamp()


def configured_mirror(sources: tuple[Path, ...] = (Path("/etc/apt/sources.list.d/debian.sources"), Path("/etc/apt/sources.list"))) -> str:
    """The Debian mirror this machine's apt uses (env IOGATE_LABVM_MIRROR overrides)."""
    if os.environ.get("IOGATE_LABVM_MIRROR"):
        return os.environ["IOGATE_LABVM_MIRROR"]
    for path in sources:
        if not path.is_file():
            continue
        text = path.read_text()
        # deb822 stanzas: the first one whose suites hold the plain release.
        for stanza in re.split(r"\n\s*\n", text):
            uris = re.search(r"^URIs:\s*(\S+)", stanza, re.MULTILINE)
            suites = re.search(r"^Suites:\s*(.+)$", stanza, re.MULTILINE)
            if uris and suites and recipe.SUITE in suites.group(1).split():
                return uris.group(1)
        # one-line format: deb [opts] URI SUITE COMPONENTS
        for match in re.finditer(r"^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)", text, re.MULTILINE):
            if match.group(2) == recipe.SUITE:
                return match.group(1)
    raise LabVMError(f"no apt source for Debian {recipe.SUITE} in {', '.join(map(str, sources))}; set IOGATE_LABVM_MIRROR")


def ensure_image(directory: Path | None = None, *, log: Path | None = None, force: bool = False) -> Image:
    """The cached image, built first when missing or stale. Safe against a concurrent build."""
    directory = directory or cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    image = Image(directory)
    with (directory / "build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if force or not is_current(image):
            _build(image, log or directory / "build.log")
    return image


def _require_tools() -> None:
    missing = [tool for tool in ("debootstrap", "mkfs.ext4", "ssh-keygen", "chroot") if shutil.which(tool) is None]
    if missing:
        raise LabVMError(f"lab VM build needs {', '.join(missing)} (apt-get install debootstrap e2fsprogs openssh-client)")
    if os.geteuid() != 0:
        raise LabVMError("lab VM build needs root (debootstrap, chroot)")


def _build(image: Image, log: Path) -> None:
    _require_tools()
    image.stamp.unlink(missing_ok=True)
    work = image.directory / f"build.{os.getpid()}"
    rootdir = work / "rootfs"
    shutil.rmtree(work, ignore_errors=True)
    rootdir.mkdir(parents=True)
    key = work / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "iogate-labvm", "-f", str(key)], check=True)
    argv = [
        "bash",
        "-c",
        recipe.BUILD_SCRIPT,
        "labvm-build",
        str(rootdir),
        configured_mirror(),
        f"{key}.pub",
        str(work),
        IMAGE_SIZE,
        " ".join(recipe.GUEST_PACKAGES),
        recipe.SUITE,
        " ".join(recipe.INITRD_MODULES),
    ]
    started = time.monotonic()
    try:
        with log.open("w") as handle:
            done = subprocess.run(argv, stdout=handle, stderr=subprocess.STDOUT, timeout=BUILD_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as exc:
        raise LabVMError(f"lab VM build: no end after {BUILD_TIMEOUT_S} s (log {log})") from exc
    finally:
        _remove_rootfs(rootdir)
    if done.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        raise LabVMError(f"lab VM build failed (exit {done.returncode}, log {log}):\n{tail}")
    for name in ("root.img", "vmlinuz", "initrd.img", "kernel-release", "build-facts", "id_ed25519", "id_ed25519.pub"):
        os.replace(work / name, image.directory / name)
    shutil.rmtree(work)
    (image.directory / "build-seconds").write_text(f"{time.monotonic() - started:.0f}\n")
    image.stamp.write_text(wanted_stamp() + "\n")


def _remove_rootfs(rootdir: Path) -> None:
    """Delete the chroot without ever following a bind mount out of it."""
    if not rootdir.exists():
        return
    still_mounted = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines() if line.split()[1].startswith(str(rootdir))]
    for target in sorted(still_mounted, reverse=True):
        subprocess.run(["umount", "-l", target], check=False)
    subprocess.run(["rm", "-rf", "--one-file-system", str(rootdir)], check=False)
