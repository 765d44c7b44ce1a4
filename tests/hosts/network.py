"""Hosts made on this one machine: Linux network namespaces, each joined by a veth pair to a bridge that lives in a
namespace of its own.

    network = Network.create({"db": 10, "sim1": 11})    # namespaces gatekit-<pid>-<n>-<role>, 10.213.40.0/24
    network["sim1"].address                              # "10.213.40.11"
    network["sim1"].wrap                                 # ip netns exec gatekit-...-sim1 unshare --uts ...: a command
    with network["db"].entered(): socket.create_connection(...)   # this thread's sockets are the db host's
    network.remove()                                     # the processes left in them killed, every namespace deleted

Nothing leaves the hosts: the bridge joins them and nothing else, no namespace has a default route, and this
machine's own namespace is not joined (its addresses are not reachable from a host, nor a host's from it).  A
command run on a host also gets a host name of its own (a UTS namespace): a simulator there does not take another
host's processes for its machine's (it would see their pids: the hosts share this machine's processes).  The
names carry this process's id: parallel runs do not clash, and a run that died without cleaning up (SIGKILL) has its
namespaces removed by the next one.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import os
import re
import select
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

PREFIX = "gatekit-"
SUBNET = "10.213.40"  # /24, inside the namespaces only
CLONE_NEWNET = 0x40000000
KILL_WAIT = 5.0  # seconds a process killed with its namespace may take to end
_runs = itertools.count(1)


def skip_reason() -> str | None:
    """Why hosts cannot be made here (None: they can): root and iproute2's ``ip netns``."""
    if os.geteuid() != 0:
        return "needs root: network namespaces (ip netns add) and veth pairs are made by root"
    if shutil.which("ip") is None:
        return "needs iproute2's ip (apt-get install iproute2)"
    probe = f"{PREFIX}{os.getpid()}-probe"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True, check=False)
    if made.returncode != 0:
        return f"ip netns add fails here ({made.stderr.strip()[:200]}): a container without CAP_SYS_ADMIN?"
    subprocess.run(["ip", "netns", "delete", probe], capture_output=True, check=False)
    return None


def ip(*args: str) -> str:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False, timeout=30)
    if done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


@dataclass(frozen=True)
class Host:
    """One namespace: its role (``sim1``), its namespace's name and its address on the bridge."""

    role: str
    namespace: str
    address: str

    @property
    def wrap(self) -> tuple[str, ...]:
        """The prefix that runs a command on this host: in its network namespace, and in a UTS namespace of its own
        named after its role (``socket.gethostname()``: a process on another host is not one of this machine's)."""
        return ("ip", "netns", "exec", self.namespace, "unshare", "--uts", "--", "sh", "-c",
                'hostname "$0" && exec "$@"', self.role)  # fmt: skip

    @contextlib.contextmanager
    def entered(self) -> Iterator[None]:
        """This thread in the host's network namespace (``setns``): the sockets it opens meanwhile, and those of the
        threads it starts, are the host's; back in its own namespace at the end."""
        libc = ctypes.CDLL(None, use_errno=True)
        own = os.open(f"/proc/self/task/{threading.get_native_id()}/ns/net", os.O_RDONLY)
        target = os.open(f"/run/netns/{self.namespace}", os.O_RDONLY)
        try:
            if libc.setns(target, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), f"setns into {self.namespace}")
            try:
                yield
            finally:
                if libc.setns(own, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), "setns back into this thread's own namespace")
        finally:
            os.close(target)
            os.close(own)


@dataclass
class Network:
    """The hosts of one run and the bridge's namespace."""

    run: str
    hosts: dict[str, Host] = field(default_factory=dict)

    @property
    def bridge(self) -> str:
        return f"{PREFIX}{self.run}-bridge"

    @property
    def cidr(self) -> str:
        return f"{SUBNET}.0/24"

    def __getitem__(self, role: str) -> Host:
        return self.hosts[role]

    @classmethod
    def create(cls, roles: dict[str, int]) -> Network:
        """A namespace per role, at ``SUBNET.<number>``, each joined to the bridge; removed again if any step fails."""
        remove_stale()
        network = cls(f"{os.getpid()}-{next(_runs)}")
        try:
            ip("netns", "add", network.bridge)
            ip("-n", network.bridge, "link", "add", "br0", "type", "bridge")
            ip("-n", network.bridge, "link", "set", "br0", "up")
            for role, number in roles.items():
                network.join(role, f"{SUBNET}.{number}")
        except BaseException:
            network.remove()
            raise
        return network

    def join(self, role: str, address: str) -> Host:
        host = Host(role, f"{PREFIX}{self.run}-{role}", address)
        self.hosts[role] = host
        ip("netns", "add", host.namespace)
        # the pair is made in the host's namespace (eth0) with its peer in the bridge's (named after the role):
        # no interface is ever seen in this machine's own namespace
        ip("-n", host.namespace, "link", "add", "eth0", "type", "veth", "peer", "name", role, "netns", self.bridge)
        ip("-n", self.bridge, "link", "set", "dev", role, "master", "br0", "up")
        ip("-n", host.namespace, "address", "add", f"{address}/24", "dev", "eth0")
        ip("-n", host.namespace, "link", "set", "eth0", "up")
        ip("-n", host.namespace, "link", "set", "lo", "up")
        return host

    def remove(self) -> None:
        """Every process still in a namespace of this run killed, every namespace deleted (errors aside: this runs
        after a failure too)."""
        for namespace in [*(host.namespace for host in self.hosts.values()), self.bridge]:
            remove_namespace(namespace)


def remove_namespace(namespace: str) -> None:
    """Every process in ``namespace``, or about to enter it, killed, and the namespace deleted.

    ``ip netns pids`` lists the processes inside only.  A command started just before (``ip netns exec`` has opened
    the namespace but not yet entered it) entered after the listing and outlived the deletion: a ``sleep 600`` was
    left running once, in a full ``make test``.  So the processes are found by the namespace's inode, whether they
    are in it or hold it open, and again after the deletion (then nothing new can open it) until none is left."""
    try:
        inode: int | None = os.stat(f"/run/netns/{namespace}").st_ino
    except OSError:
        inode = None
    if inode is not None:
        _kill_holders(inode)
    subprocess.run(["ip", "netns", "delete", namespace], capture_output=True, check=False)
    deadline = time.monotonic() + KILL_WAIT
    while inode is not None and _kill_holders(inode) and time.monotonic() < deadline:
        pass


def _kill_holders(inode: int) -> bool:
    """SIGKILL to every process (but this one) in the network namespace ``inode`` or holding it open, and wait
    (``KILL_WAIT`` at most) until each is gone; whether any was found."""
    found = False
    for pid in (int(name) for name in os.listdir("/proc") if name.isdigit() and int(name) != os.getpid()):
        if not _holds(pid, inode):
            continue
        found = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            process = os.pidfd_open(pid)
            try:
                signal.pidfd_send_signal(process, signal.SIGKILL)
                select.select([process], [], [], KILL_WAIT)  # (readable once the process has ended)
            finally:
                os.close(process)
    return found


def _holds(pid: int, inode: int) -> bool:
    """Whether process ``pid`` is in the network namespace ``inode`` or has it open (an ``ip netns exec`` about to
    enter it)."""
    try:
        if os.stat(f"/proc/{pid}/ns/net").st_ino == inode:
            return True
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:  # (gone)
        return False
    held = f"net:[{inode}]"
    for descriptor in descriptors:
        with contextlib.suppress(OSError):  # (closed meanwhile)
            if os.readlink(f"/proc/{pid}/fd/{descriptor}") == held:
                return True
    return False


def remove_stale() -> None:
    """The namespaces of runs whose process is gone (a run killed before its clean-up)."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
    for name in re.findall(rf"^({re.escape(PREFIX)}(\d+)-\S+)", listed, re.MULTILINE):
        namespace, pid = name
        if not os.path.exists(f"/proc/{pid}"):
            remove_namespace(namespace)
