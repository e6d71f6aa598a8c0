"""Commands that change the machine ask as system changes; their reading forms do not (the
labelled corpus holds more of each)."""

from __future__ import annotations

import pytest

from workbench.core.safety import analyze_command
from workbench.core.safety.system import SYSTEM_CHANGE

CHANGES = [
    ("sysctl -w kernel.core_uses_pid=0", "sysctl changes kernel settings of this machine"),
    ("sysctl net.ipv4.ip_forward=1", "sysctl changes kernel settings"),
    ("ip l s lo down", "ip changes the network set-up"),  # ip takes any prefix: link set
    ("ip r d default", "ip changes the network set-up"),
    ("ifconfig lo down", "ifconfig changes network interfaces"),
    ("date -s @0", "date changes the system clock"),
    ("date 010100002020", "date changes the system clock"),  # POSIX's setting form
    ("hwclock --hctosys", "hwclock changes the hardware clock or the system clock"),
    ("timedatectl set-ntp false", "timedatectl changes the clock"),
    ("modprobe -r dummy", "modprobe changes kernel modules"),
    ("mknod /dev/x c 1 3", "mknod changes device nodes"),
    ("losetup -f disk.img", "losetup changes loop devices"),
    ("swapon -L swap", "swapon changes swap"),
    ("iptables -I INPUT -j ACCEPT", "iptables changes firewall rules"),
    ("nft 'add table inet x'", "nft changes firewall rules"),
    ("setcap -r ./ping", "setcap changes file capabilities"),
    ("chattr -i notes.txt", "chattr changes file attributes"),
    ("sysctl $KEY", "sysctl changes kernel settings"),  # known only at run time: a change
]
READS = [
    "sysctl -a",
    "sysctl -n kernel.ostype",
    "ip a s",  # address show: ip's addr has no verb "s..." that changes
    "ip -br -c link",
    "ip route get 1.1.1.1",
    "ip monitor all",
    "ifconfig lo",
    "date",
    "date -d @0 +%F",
    "hwclock -r",
    "timedatectl show",
    "modprobe --show-depends dummy",
    "mknod fifo p",
    "losetup -f",
    "swapon --show",
    "iptables -L -n",
    "nft -c -f rules.nft",
    "setcap -v cap_net_raw+ep ./ping",
    "mount",
    "mount -t ext4",
]


@pytest.mark.parametrize(("command", "reason"), CHANGES, ids=[c for c, _ in CHANGES])
def test_a_change_of_the_machine_asks_as_a_system_change(command: str, reason: str) -> None:
    verdict = analyze_command(command, cwd="/work/project")
    found = [f for f in verdict.findings if f.rule == SYSTEM_CHANGE]
    assert found and reason in found[0].reason, verdict.reasons
    assert not verdict.opaque and not verdict.hardline  # understood: a person may approve it


@pytest.mark.parametrize("command", READS)
def test_reading_forms_do_not_ask(command: str) -> None:
    assert analyze_command(command, cwd="/work/project").findings == ()


@pytest.mark.parametrize("command", ["mount /dev/sdb1 /mnt", "mount -a", "umount -l /mnt"])
def test_mounting_and_unmounting_ask(command: str) -> None:
    assert "mounts" in analyze_command(command, cwd="/work/project").rules
