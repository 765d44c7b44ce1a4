"""make test-image: the container image built on this machine from a Debian base, offline, and run as users run it.

    .venv/bin/python scripts/test_image.py

1. Docker: Debian's docker.io (installed with apt-get when missing, as root); a dockerd started here when none
   answers (``--bridge=none --iptables=false``: containers share the host's network, no bridge address is made),
   stopped at the end.
2. The base: Debian bookworm made by ``debootstrap`` (python3 and its venv module) and ``docker import``ed as
   ``gatekit-base:bookworm``.  debootstrap takes minutes: its root file system is kept as a tarball in
   ``~/.cache/gatekit/image`` (``GATEKIT_IMAGE_CACHE``), imported again in seconds when Docker has lost the image.
3. The wheelhouse, on the host: gatekit's wheel (``make wheel``) and its dependencies (``pip wheel -c
   constraints.txt``), in a build context holding the Dockerfile, .dockerignore and wheelhouse/ only.
4. The image: ``docker build --network none --build-arg BASE=gatekit-base:bookworm``: nothing is downloaded.
5. A throwaway PostgreSQL on loopback (tests/postgres.py), then ``docker run --network host`` of the image with
   ``--workers 2 --db postgresql://...`` on a free port: ``/_sim/health`` answers within 3 s of ``docker run``, the
   image's HEALTHCHECK says healthy, the simulator runs as a user that is not root.
6. ``gatekit certify --profile team`` against it (a profile based on the simulator, the control token from
   ``GATEKIT_CONTROL_TOKEN``): every scenario passes.
7. ``docker stop``: the simulator stops on SIGTERM with exit status 0.

Every address used is this machine's loopback.  Exit status 0 when every step passed, 1 otherwise.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # (tests.postgres: the throwaway cluster of the tests)

from tests.postgres import cluster, skip_reason  # noqa: E402

SUITE = "bookworm"  # Debian 12: Python 3.11, as the wheels of the host's venv
MIRROR = os.environ.get("GATEKIT_IMAGE_MIRROR", "http://deb.debian.org/debian")
BASE = f"gatekit-base:{SUITE}"
IMAGE = "gatekit:test"
CACHE = Path(os.environ.get("GATEKIT_IMAGE_CACHE") or Path.home() / ".cache" / "gatekit" / "image")
HEALTH_LIMIT = 3.0  # seconds from docker run to /_sim/health answering
DAEMON_WAIT = 60.0
HEALTHY_WAIT = 40.0  # the HEALTHCHECK runs every 5 s


def say(text: str) -> None:
    print(f"make test-image: {text}", flush=True)


def run(*command: str, timeout: float = 600, **options: object) -> subprocess.CompletedProcess[str]:
    """COMMAND, its output kept; a failure stops the script with it."""
    done: subprocess.CompletedProcess[str] = subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, check=False, **options
    )  # type: ignore[call-overload]
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return done


def apt_install(*packages: str) -> None:
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise SystemExit(f"needs {', '.join(packages)}: apt-get install {' '.join(packages)} (as root)")
    say(f"installing {', '.join(packages)} from Debian (apt-get)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    run("apt-get", "update", "-qq", env=env)
    run("apt-get", "install", "-y", "-qq", *packages, env=env)


def docker_binary() -> str:
    """Debian's client (the daemon's own version) before any other on PATH."""
    if shutil.which("dockerd") is None:
        apt_install("docker.io")
    return "/usr/bin/docker" if Path("/usr/bin/docker").exists() else str(shutil.which("docker"))


@contextmanager
def daemon(docker: str) -> Iterator[None]:
    """The Docker daemon: the one that answers, or one started here (and stopped at the end)."""
    if subprocess.run([docker, "info"], capture_output=True, timeout=30, check=False).returncode == 0:
        say("docker: a daemon answers already (left running)")
        yield
        return
    log = Path(tempfile.mkstemp(prefix="gatekit-dockerd-", suffix=".log")[1])
    command = ["dockerd", "--bridge=none", "--iptables=false", "--ip6tables=false"]
    with log.open("w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + DAEMON_WAIT
    while subprocess.run([docker, "info"], capture_output=True, timeout=30, check=False).returncode != 0:
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise SystemExit(f"{' '.join(command)} did not answer within {DAEMON_WAIT:g} s:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)
    say(f"docker: started {' '.join(command)} (pid {process.pid}, log {log})")
    try:
        yield
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        say(f"docker: the daemon started here stopped (exit status {process.returncode})")
        log.unlink(missing_ok=True)


def base_image(docker: str) -> None:
    """``gatekit-base:bookworm`` in Docker: kept there, else imported from the cached tarball, else debootstrapped."""
    if subprocess.run([docker, "image", "inspect", BASE], capture_output=True, check=False).returncode == 0:
        say(f"base: {BASE} (in Docker already)")
        return
    tarball = CACHE / f"debian-{SUITE}.tar"
    if not tarball.exists():
        debootstrap(tarball)
    started = time.monotonic()
    run(docker, "import", str(tarball), BASE)
    say(f"base: {BASE} imported from {tarball} in {time.monotonic() - started:.1f} s")


def debootstrap(tarball: Path) -> None:
    if shutil.which("debootstrap") is None:
        apt_install("debootstrap")
    CACHE.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="rootfs-", dir=CACHE))
    command = ["debootstrap", "--variant=minbase", "--include=python3,python3-venv", SUITE, str(root), MIRROR]
    say(f"base: {' '.join(command)} (minutes; kept in {tarball})")
    started = time.monotonic()
    try:
        run(*command, timeout=1800)
        for leftovers in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for path in (root / leftovers).glob("*"):
                if path.is_file():
                    path.unlink()
        partial = tarball.with_suffix(".partial")
        run("tar", "-C", str(root), "--numeric-owner", "-cf", str(partial), ".")
        partial.rename(tarball)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    say(f"base: debootstrap and tar took {time.monotonic() - started:.0f} s ({tarball.stat().st_size >> 20} MiB)")


def build_context(folder: Path) -> None:
    """Dockerfile, .dockerignore and wheelhouse/ (gatekit's wheel and its dependencies' at constraints.txt)."""
    wheels = folder / "wheelhouse"
    started = time.monotonic()
    run("make", "--no-print-directory", "wheel", f"DIST={wheels}", cwd=ROOT)
    run(sys.executable, "-m", "pip", "wheel", "--disable-pip-version-check", "-q", "-w", str(wheels), "-c",
        str(ROOT / "constraints.txt"), "--find-links", str(wheels), "gatekit[postgres]")  # fmt: skip
    for name in ("Dockerfile", ".dockerignore"):
        shutil.copy(ROOT / name, folder / name)
    count = len(list(wheels.glob("*.whl")))
    say(f"wheelhouse: {count} wheels (make wheel; pip wheel -c constraints.txt 'gatekit[postgres]') in "
        f"{time.monotonic() - started:.1f} s")  # fmt: skip


def image_id(docker: str) -> str:
    done = subprocess.run([docker, "image", "inspect", "-f", "{{.Id}}", IMAGE], capture_output=True, text=True,
                          check=False)  # fmt: skip
    return done.stdout.strip() if done.returncode == 0 else ""


def build_image(docker: str, folder: Path) -> None:
    """The image, built offline (the previous build of this script removed once it is replaced)."""
    previous = image_id(docker)
    command = [docker, "build", "--network", "none", "--build-arg", f"BASE={BASE}", "-t", IMAGE, str(folder)]
    started = time.monotonic()
    run(*command, env={**os.environ, "DOCKER_BUILDKIT": "0"})
    took = time.monotonic() - started
    size = int(run(docker, "image", "inspect", "-f", "{{.Size}}", IMAGE).stdout.strip()) >> 20
    say(f"image: docker {' '.join(command[1:])}: built in {took:.1f} s (offline: --network none), {size} MiB")
    if previous and previous != image_id(docker):
        subprocess.run([docker, "rmi", previous], capture_output=True, check=False)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_health(url: str, token: str, started: float) -> float:
    """Seconds from ``started`` until /_sim/health answers 200 (polled; up to 30 s, to say how long it took)."""
    while time.monotonic() - started < 30:
        try:
            if requests.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=1).status_code == 200:
                return time.monotonic() - started
        except requests.ConnectionError:
            pass
        time.sleep(0.02)
    raise SystemExit(f"{url} did not answer within 30 s")


def wait_until_healthy(docker: str, name: str) -> float:
    started = time.monotonic()
    while time.monotonic() - started < HEALTHY_WAIT:
        status = run(docker, "inspect", "-f", "{{.State.Health.Status}}", name).stdout.strip()
        if status == "healthy":
            return time.monotonic() - started
        if status == "unhealthy":
            break
        time.sleep(0.5)
    raise SystemExit(f"docker's HEALTHCHECK of {name} did not say healthy within {HEALTHY_WAIT:g} s")


def certify(root_url: str, token: str) -> str:
    """``gatekit certify --profile team`` against the container, in a folder of its own; what it ran."""
    folder = Path(tempfile.mkdtemp(prefix="gatekit-image-certify-"))
    (folder / "gatekit.toml").write_text(f'[profiles.team]\nbase = "simulator"\nbase_url = "{root_url}/paynet"\n')
    env = {name: value for name, value in os.environ.items() if not name.startswith(("GATEWAY_", "GATEKIT_"))}
    command = ["gatekit", "certify", "--profile", "team", "--no-html"]
    say(f"certify: {' '.join(command)} (in {folder}: gatekit.toml [profiles.team] base_url = {root_url}/paynet)")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "toolkit.cli", *command[1:]], cwd=folder, timeout=1800, check=False,
                          env={**env, "GATEKIT_CONTROL_TOKEN": token}, capture_output=True, text=True)  # fmt: skip
    took = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"certify failed ({done.returncode}):\n{done.stdout[-6000:]}{done.stderr[-3000:]}")
    suite = ET.parse(folder / "reports" / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    figures = {key: suite.get(key, "0") for key in ("tests", "failures", "errors", "skipped")}
    shutil.rmtree(folder, ignore_errors=True)
    return (f"passed: {figures['tests']} scenarios, {figures['failures']} failed, {figures['errors']} errors, "
            f"{figures['skipped']} skipped, in {took:.0f} s")  # fmt: skip


def run_and_certify(docker: str, stack: ExitStack) -> None:
    if reason := skip_reason():
        raise SystemExit(f"PostgreSQL: {reason}")
    database = stack.enter_context(cluster()).new_database()
    token, port, name = secrets.token_hex(16), free_port(), f"gatekit-test-{os.getpid()}"
    arguments = ["--workers", "2", "--latency", "0.1", "--db", database]
    command = [docker, "run", "-d", "--network", "host", "--name", name, "-e", "GATEKIT_CONTROL_TOKEN", "-e",
               f"GATEKIT_PORT={port}", IMAGE, *arguments]  # fmt: skip
    stack.callback(lambda: subprocess.run([docker, "rm", "-f", name], capture_output=True, check=False))
    started = time.monotonic()
    run(*command, env={**os.environ, "GATEKIT_CONTROL_TOKEN": token})
    root_url = f"http://127.0.0.1:{port}"
    answered = wait_for_health(f"{root_url}/_sim/health", token, started)
    say(f"run: docker {' '.join(command[1:])}")
    say(f"health: /_sim/health answered {answered:.2f} s after docker run (limit {HEALTH_LIMIT:g} s)")
    if answered > HEALTH_LIMIT:
        raise SystemExit(f"/_sim/health answered {answered:.2f} s after docker run: more than {HEALTH_LIMIT:g} s")
    user = run(docker, "exec", name, "id", "-un").stdout.strip()
    say(f"health: docker's HEALTHCHECK healthy {wait_until_healthy(docker, name):.1f} s later; the simulator runs "
        f"as {user!r}")  # fmt: skip
    if user == "root":
        raise SystemExit("the image's simulator runs as root")
    say(f"certify: {certify(root_url, token)}")
    stopping = time.monotonic()
    run(docker, "stop", "-t", "20", name)
    code = run(docker, "inspect", "-f", "{{.State.ExitCode}}", name).stdout.strip()
    say(f"stop: docker stop took {time.monotonic() - stopping:.1f} s, exit status {code}")
    if code != "0":
        raise SystemExit(f"the simulator exited {code} on SIGTERM:\n{run(docker, 'logs', name).stderr[-3000:]}")


def main() -> int:
    started = time.monotonic()
    docker = docker_binary()
    with ExitStack() as stack:
        stack.enter_context(daemon(docker))
        base_image(docker)
        context = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="gatekit-image-")))
        build_context(context)
        build_image(docker, context)
        run_and_certify(docker, stack)
    say(f"passed in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
