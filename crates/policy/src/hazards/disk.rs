//! Disks, file systems, partitions, LVM, RAID, btrfs, ZFS, encryption and raw
//! devices. Listing and inspecting (`fdisk -l`, `parted print`, `lvs`,
//! `mdadm --detail`, `btrfs subvolume list`) is safe; formatting, wiping,
//! partitioning and removing volumes asks.

use super::Opt::{Flag, Prefix, Val, Word};
use super::Test;
use super::{PROGRAM, Pack, Program, RULE, Rule, hz};

const DISK: &str = "disk-tool";

pub const PACK: Pack = Pack {
    name: "disk",
    programs: &[
        // mke2fs: `-n` only shows what it would do, `-V` prints the version.
        Program {
            names: &["mkfs.ext2", "mkfs.ext3", "mkfs.ext4", "mke2fs"],
            rules: &[
                Rule {
                    all: &[&[Flag("-n"), Flag("-V")]],
                    ..RULE
                },
                Rule {
                    hit: hz(DISK, "creates a file system (`mkfs`)"),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        Program {
            names: &[
                "mkfs",
                "mkfs.*",
                "mkswap",
                "mkdosfs",
                "mkntfs",
                "mkexfatfs",
                "newfs*",
            ],
            rules: &[Rule {
                hit: hz(DISK, "creates a file system (`mkfs`)"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["wipefs"],
            rules: &[Rule {
                all: &[&[Flag("-a"), Flag("--all"), Flag("-o"), Flag("--offset")]],
                none: &[Flag("-n"), Flag("--no-act")],
                hit: hz(DISK, "`wipefs` erases file-system signatures"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["sgdisk"],
            rules: &[
                Rule {
                    all: &[&[
                        Flag("-p"),
                        Flag("--print"),
                        Flag("-v"),
                        Flag("--verify"),
                        Flag("-i"),
                        Flag("--info"),
                    ]],
                    none: &[
                        Flag("-Z"),
                        Flag("--zap-all"),
                        Flag("-z"),
                        Flag("--zap"),
                        Flag("-o"),
                        Flag("--clear"),
                        Flag("-d"),
                        Flag("--delete"),
                        Flag("-n"),
                        Flag("--new"),
                    ],
                    ..RULE
                },
                Rule {
                    hit: hz(DISK, "`sgdisk` changes or erases a partition table"),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        Program {
            names: &["fdisk", "gdisk", "sfdisk"],
            rules: &[
                Rule {
                    all: &[&[
                        Flag("-l"),
                        Flag("--list"),
                        Flag("-d"),
                        Flag("--dump"),
                        Flag("-s"),
                        Flag("--show-size"),
                        Flag("-J"),
                        Flag("--json"),
                        Flag("-V"),
                        Flag("--verify"),
                    ]],
                    none: &[Flag("--delete")],
                    ..RULE
                },
                Rule {
                    hit: hz(
                        DISK,
                        "a partition editor (formats, partitions or wipes disks)",
                    ),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        Program {
            names: &["parted"],
            rules: &[
                Rule {
                    sub: &[
                        "mklabel|mktable|mkpart|mkpartfs|rm|resizepart|resize|rescue|set|toggle|name|move|cp|mkfs|disk_set|disk_toggle",
                    ],
                    anywhere: true,
                    hit: hz(DISK, "`parted` changes a partition table"),
                    ..RULE
                },
                Rule {
                    all: &[&[Flag("-l"), Flag("--list"), Word("print"), Word("p")]],
                    ..RULE
                },
                Rule {
                    hit: hz(DISK, "`parted` edits partitions"),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        Program {
            names: &["cfdisk", "blkdiscard", "shred"],
            rules: &[Rule {
                hit: hz(
                    DISK,
                    "a tool that partitions, discards or overwrites disks or files",
                ),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["dd"],
            rules: &[Rule {
                test: Test::DdDevice,
                hit: hz("copy-device", "`dd` writing to a device"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["mdadm"],
            rules: &[Rule {
                all: &[&[
                    Flag("--stop"),
                    Flag("-S"),
                    Flag("--zero-superblock"),
                    Flag("--remove"),
                    Flag("-r"),
                    Flag("--fail"),
                    Flag("-f"),
                    Flag("--create"),
                    Flag("-C"),
                    Flag("--grow"),
                    Flag("-G"),
                    Flag("--build"),
                    Flag("-B"),
                ]],
                hit: hz(
                    DISK,
                    "`mdadm` stops, fails, removes or re-creates a RAID array",
                ),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["lvremove", "vgremove", "pvremove", "lvreduce", "vgreduce"],
            rules: &[Rule {
                hit: hz(DISK, "removes or shrinks an LVM volume"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["lvresize", "lvextend"],
            rules: &[Rule {
                all: &[&[
                    Val("-L", &["-*"]),
                    Val("--size", &["-*"]),
                    Val("-l", &["-*"]),
                    Val("--extents", &["-*"]),
                ]],
                hit: hz(DISK, "shrinks an LVM volume"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["lvconvert"],
            rules: &[Rule {
                all: &[&[Flag("--merge")]],
                hit: hz(
                    DISK,
                    "`lvconvert --merge` rolls a volume back to its snapshot",
                ),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["vgcreate", "pvcreate"],
            rules: &[Rule {
                all: &[&[Flag("-f"), Flag("--force")]],
                hit: hz(DISK, "forced LVM creation overwrites what is on the device"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["dmsetup"],
            rules: &[Rule {
                sub: &["remove_all|remove|wipe_table|clear|reload|mangle"],
                hit: hz(DISK, "`dmsetup` removes or wipes device-mapper devices"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["btrfs"],
            valued: &["--format"],
            rules: &[
                Rule {
                    sub: &["su*", "d*"],
                    hit: hz(DISK, "`btrfs subvolume delete` deletes a subvolume"),
                    ..RULE
                },
                Rule {
                    sub: &["dev*", "de*|rem*"],
                    hit: hz(
                        DISK,
                        "`btrfs device remove` takes a device out of the file system",
                    ),
                    ..RULE
                },
                Rule {
                    sub: &["ch*"],
                    all: &[&[Flag("--repair"), Prefix("--init-")]],
                    hit: hz(DISK, "`btrfs check --repair` rewrites the file system"),
                    ..RULE
                },
                Rule {
                    sub: &["fi*", "res*"],
                    hit: hz(DISK, "`btrfs filesystem resize` can shrink the file system"),
                    ..RULE
                },
                Rule {
                    sub: &["resc*"],
                    hit: hz(DISK, "`btrfs rescue` rewrites file-system structures"),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        Program {
            names: &["zfs"],
            rules: &[Rule {
                sub: &["destroy|rollback"],
                hit: hz(DISK, "`zfs destroy/rollback` deletes datasets or snapshots"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["zpool"],
            rules: &[Rule {
                sub: &["destroy|labelclear|remove|detach|split"],
                hit: hz(
                    DISK,
                    "`zpool destroy/labelclear/remove` deletes a pool or its devices",
                ),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["cryptsetup"],
            valued: &[
                "--type",
                "-c",
                "--cipher",
                "-d",
                "--key-file",
                "-s",
                "--key-size",
                "-S",
                "--key-slot",
            ],
            rules: &[Rule {
                sub: &["luksFormat|erase|luksErase|luksKillSlot|luksRemoveKey|reencrypt"],
                hit: hz(
                    DISK,
                    "`cryptsetup` formats or erases an encrypted volume's keys",
                ),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["hdparm"],
            rules: &[Rule {
                all: &[&[
                    Prefix("--security-erase"),
                    Prefix("--trim-sector-ranges"),
                    Flag("--please-destroy-my-drive"),
                    Flag("--write-sector"),
                    Flag("--make-bad-sector"),
                    Prefix("--fwdownload"),
                ]],
                hit: hz(DISK, "`hdparm` erases or overwrites a drive"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["badblocks"],
            rules: &[Rule {
                all: &[&[Flag("-w")]],
                hit: hz(DISK, "`badblocks -w` overwrites the whole device"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["xfs_repair"],
            rules: &[Rule {
                all: &[&[Flag("-L")]],
                hit: hz(DISK, "`xfs_repair -L` zeroes the log, losing its changes"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["nvme"],
            rules: &[Rule {
                sub: &["format|sanitize|delete-ns|detach-ns"],
                hit: hz(DISK, "`nvme format/sanitize` erases a drive"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["flashrom"],
            rules: &[Rule {
                all: &[&[Flag("-w"), Flag("--write"), Flag("-E"), Flag("--erase")]],
                hit: hz(DISK, "`flashrom` overwrites firmware"),
                ..RULE
            }],
            ..PROGRAM
        },
    ],
};

#[cfg(test)]
mod tests {
    use super::super::testing::check;

    #[test]
    fn hazard_pack_disk() {
        check(
            "disk",
            &[
                "mkfs.ext4 /dev/sdb",
                "mkfs -t ext4 /dev/sdb1",
                "mkfs.xfs -f /dev/sdc",
                "mkswap /dev/sdb2",
                "wipefs -a /dev/sdb",
                "sgdisk -Z /dev/sdb",
                "sgdisk --zap-all /dev/sdb",
                "sgdisk -p -n 1:0:+1G /dev/sdb",
                "fdisk /dev/sdb",
                "sfdisk --delete /dev/sdb 2",
                "parted -s /dev/sdb rm 1",
                "parted /dev/sdb mklabel gpt",
                "parted /dev/sdb",
                "dd if=a of=/dev/sda",
                "dd if=/dev/zero of=/dev/nvme0n1 bs=1M",
                "shred -u secrets.txt",
                "blkdiscard /dev/sdb",
                "mdadm --stop /dev/md0",
                "mdadm --zero-superblock /dev/sdb1",
                "mdadm /dev/md0 --fail /dev/sdb1",
                "lvremove -f vg0/lv1",
                "vgremove vg0",
                "pvremove /dev/sdb1",
                "lvresize -L -5G /dev/vg0/data",
                "dmsetup remove_all",
                "btrfs subvolume delete /mnt/@snap",
                "btrfs subvol delete /mnt/@",
                "btrfs device remove /dev/sdb /mnt",
                "btrfs check --repair /dev/sdb",
                "zfs destroy -r tank/home",
                "zpool destroy tank",
                "cryptsetup luksFormat /dev/sdb1",
                "hdparm --security-erase NULL /dev/sdb",
                "badblocks -wsv /dev/sdc",
                "nvme format /dev/nvme0n1",
            ],
            &[
                "lsblk",
                "blkid",
                "fdisk -l",
                "fdisk --list",
                "sfdisk -l",
                "sfdisk --dump /dev/sda",
                "parted -l",
                "parted /dev/sda print",
                "sgdisk -p /dev/sda",
                "gdisk -l /dev/sda",
                "wipefs /dev/sdb",
                "wipefs -n -a /dev/sdb",
                "mdadm --detail /dev/md0",
                "mdadm -D /dev/md0",
                "mdadm --examine /dev/sdb1",
                "lvs",
                "lvextend -L +5G /dev/vg0/data",
                "lvcreate -L 10G -n data vg0",
                "dmsetup ls",
                "dmsetup status",
                "btrfs subvolume list /mnt",
                "btrfs subvolume snapshot -r / /snapshots/root",
                "btrfs filesystem df /mnt",
                "btrfs device stats /mnt",
                "zfs list",
                "zfs snapshot tank/data@today",
                "zpool status",
                "cryptsetup status cryptroot",
                "hdparm -I /dev/sda",
                "badblocks -sv /dev/sdb",
                "mkfs.ext4 -n /dev/sdb1",
                "mkfs.ext4 -V",
                "mkfs --help",
                "dd if=/dev/zero of=/dev/null bs=1M count=10",
                "dd if=README.md of=/dev/null",
                "dd if=/dev/urandom bs=16 count=1 of=/dev/stdout",
                "dd if=input.bin of=copy.bin bs=4k",
                "shred --version",
                "nvme list",
            ],
        );
    }
}
