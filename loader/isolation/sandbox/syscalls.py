"""The system-call layer, applied by a worker to itself with seccomp (through libseccomp).

Through ``pyseccomp``, a ctypes binding of libseccomp (the library Docker,
systemd and Firefox build their filters with), so system calls are named,
not numbered per architecture. Denied calls fail with ``EPERM`` (a clean
``PermissionError`` in the tool), never kill the worker; ``clone3``, whose
flags seccomp cannot read, answers ``ENOSYS`` so the C library falls back to
``clone``, whose namespace flags it can.
"""

from __future__ import annotations

import contextlib
import errno
from typing import Any, Final

from ...distribution import install_command

__all__ = ["DENIED", "available", "install"]

DENIED: Final[tuple[str, ...]] = (
    # reading or steering other processes
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "kcmp",
    # namespaces and mounts: the ways out of a confinement
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "open_by_handle_at",
    "name_to_handle_at",
    # the kernel itself
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "syslog",
    "iopl",
    "ioperm",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "sethostname",
    "setdomainname",
    "vhangup",
    "fanotify_init",
    "lookup_dcookie",
    "uselib",
    # other processes' memory
    "process_madvise",
    "process_mrelease",
    # SysV IPC: keyed by number, not by path, so Landlock cannot scope it; a tool would reach the
    # segments and queues of every process of its user (and of everyone as root)
    "shmget",
    "shmat",
    "shmdt",
    "shmctl",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "semget",
    "semop",
    "semtimedop",
    "semctl",
    "ipc",
)
"""Refused with ``EPERM``: what a tool never needs and an escape often does."""

_NAMESPACE_FLAGS: Final = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
"""``CLONE_NEWNS``, ``NEWCGROUP``, ``NEWUTS``, ``NEWIPC``, ``NEWUSER``, ``NEWPID``, ``NEWNET``."""
_SELF_ONLY: Final = (
    "prlimit64",
    "sched_setaffinity",
    "sched_setscheduler",
    "sched_setparam",
    "sched_setattr",
    "migrate_pages",
    "move_pages",
    "get_robust_list",
)
"""Calls whose first argument names a process: refused unless it is 0, the caller itself."""
_PRIORITY: Final = {"setpriority": 0, "ioprio_set": 1}
"""Calls taking (which, who): refused unless ``which`` is one process (``PRIO_PROCESS``,
``IOPRIO_WHO_PROCESS``) and ``who`` is 0, the caller (``who`` 0 with a user or group means all of them)."""
_TERMINAL_IOCTLS: Final = (0x5412, 0x541C, 0x541D, 0x5423, 0x540E, 0x5437)
"""``TIOCSTI`` (type into a terminal), ``TIOCLINUX`` (paste on a console), ``TIOCCONS`` (take the
console's output), ``TIOCSETD`` (load a line discipline), ``TIOCSCTTY`` (take the terminal from the
user's session), ``TIOCVHANGUP`` (hang it up): the worker's stderr may be the user's terminal."""
_PR_SET_CHILD_SUBREAPER: Final = 36
_INT: Final = 0xFFFFFFFF
"""The kernel reads these arguments as 32-bit ints: a match on them ignores the upper half."""
_AF_UNIX: Final = 1
_AF_INET: Final = 2
_AF_INET6: Final = 10
_SOCK_STREAM: Final = 1
_SOCK_TYPE_MASK: Final = 0xF


def available() -> tuple[bool, str]:
    """Whether this process can install a seccomp filter, and why not."""
    try:
        import pyseccomp  # type: ignore[import-untyped]  # noqa: F401
    except ImportError as exc:
        return False, f"the pyseccomp package is not installed ({exc}): {install_command('sandbox')}"
    except (RuntimeError, OSError) as exc:  # pyseccomp found no libseccomp
        return False, f"libseccomp is missing ({exc}): apt-get install libseccomp2"
    try:
        with open("/proc/sys/kernel/seccomp/actions_avail", encoding="ascii") as handle:
            actions = handle.read().split()
    except OSError:
        return False, "the kernel has no seccomp filters (/proc/sys/kernel/seccomp is missing)"
    if "errno" not in actions:
        return False, "the kernel's seccomp cannot return an error (no errno action)"
    return True, ""


def install(network: bool, datagrams: bool) -> None:
    """Load the filter into this process (inherited by everything it starts).

    Without ``network``, sockets other than TCP over IPv4 or IPv6 are refused
    too: UDP and raw sockets (Landlock's TCP rules do not cover them) and
    named unix sockets (Landlock cannot refuse a connect to one before ABI 9;
    a Docker socket would be a way out). ``datagrams`` lets UDP through (name
    lookups, for tools given ``allow_connect`` endpoints by host name).
    """
    import pyseccomp as seccomp

    denied = seccomp.ERRNO(errno.EPERM)
    syscall_filter = seccomp.SyscallFilter(seccomp.ALLOW)
    syscall_filter.set_attr(seccomp.Attr.CTL_TSYNC, 1)  # every thread, even one a .pth file started
    for name in DENIED:
        with contextlib.suppress(ValueError, OSError):  # not a system call on this architecture
            syscall_filter.add_rule(denied, name)
    syscall_filter.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    for flag in _NAMESPACE_FLAGS:
        syscall_filter.add_rule(denied, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    _refuse_other_processes(seccomp, syscall_filter)
    if not network:
        _refuse_sockets(seccomp, syscall_filter, datagrams)
    syscall_filter.load()


def _refuse_other_processes(seccomp: Any, syscall_filter: Any) -> None:
    """What would act on a process other than the caller: the loader, another worker, the terminal.

    A pid is compared whole (not masked): a value with its upper half set is refused even
    where the kernel would read it as 0, which only ever refuses more.
    """
    denied = seccomp.ERRNO(errno.EPERM)
    for name in _SELF_ONLY:
        with contextlib.suppress(ValueError, OSError):
            syscall_filter.add_rule(denied, name, seccomp.Arg(0, seccomp.NE, 0))
    for name, one_process in _PRIORITY.items():
        syscall_filter.add_rule(denied, name, seccomp.Arg(0, seccomp.NE, one_process))
        syscall_filter.add_rule(denied, name, seccomp.Arg(1, seccomp.NE, 0))
    for request in _TERMINAL_IOCTLS:
        syscall_filter.add_rule(denied, "ioctl", seccomp.Arg(1, seccomp.MASKED_EQ, _INT, request))
    for bit in range(32):  # only the query, 0xffffffff, is let through: every bit of its low half set
        syscall_filter.add_rule(denied, "personality", seccomp.Arg(0, seccomp.MASKED_EQ, 1 << bit, 0))
    # the worker made itself a subreaper before this filter: a tool cannot let its processes escape the tree
    syscall_filter.add_rule(denied, "prctl", seccomp.Arg(0, seccomp.MASKED_EQ, _INT, _PR_SET_CHILD_SUBREAPER))


def _refuse_sockets(seccomp: Any, syscall_filter: Any, datagrams: bool) -> None:
    refused = seccomp.ERRNO(errno.EACCES)
    syscall_filter.add_rule(refused, "socket", seccomp.Arg(0, seccomp.EQ, _AF_UNIX))
    for family in range(3, 64):  # every family but unix and the two internet ones
        if family != _AF_INET6:
            syscall_filter.add_rule(refused, "socket", seccomp.Arg(0, seccomp.EQ, family))
    for family in (_AF_INET, _AF_INET6):
        for kind in range(3 if datagrams else 2, 11):  # raw, seqpacket, packet...: all but a stream
            syscall_filter.add_rule(
                refused,
                "socket",
                seccomp.Arg(0, seccomp.EQ, family),
                seccomp.Arg(1, seccomp.MASKED_EQ, _SOCK_TYPE_MASK, kind),
            )
