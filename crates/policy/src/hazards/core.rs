//! Core utilities: recursive forced deletes, bulk deletes, world-writable or
//! recursive ownership changes, signals to every process or to init,
//! `rsync --delete`, removing every cron job.

use super::Opt::{Flag, Prefix, Word};
use super::{PROGRAM, Pack, Program, RULE, Rule, hz};

const RECURSIVE: &[super::Opt] = &[Flag("-r"), Flag("-R"), Flag("--recursive")];
const WIDE: &[super::Opt] = &[
    Word("777"),
    Word("0777"),
    Word("666"),
    Word("0666"),
    Word("a+rwx"),
    Word("ugo+rwx"),
    Word("a=rwx"),
    Word("o+w"),
    Word("o+rwx"),
    Word("a+w"),
];

pub const PACK: Pack = Pack {
    name: "core",
    programs: &[
        Program {
            names: &["rm"],
            rules: &[Rule {
                all: &[RECURSIVE, &[Flag("-f"), Flag("--force")]],
                hit: hz(
                    "recursive-force-remove",
                    "recursive forced delete (`rm -rf`)",
                ),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["srm"],
            rules: &[Rule {
                hit: hz(
                    "recursive-force-remove",
                    "`srm` overwrites and deletes files",
                ),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["find", "gfind"],
            rules: &[Rule {
                all: &[&[Word("-delete")]],
                hit: hz("bulk-delete", "`find -delete` removes every match"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["chmod"],
            rules: &[Rule {
                all: &[RECURSIVE, WIDE],
                hit: hz(
                    "recursive-permission-change",
                    "recursive world-writable permissions",
                ),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["chown", "chgrp"],
            rules: &[Rule {
                all: &[RECURSIVE],
                hit: hz("recursive-permission-change", "recursive ownership change"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["kill"],
            valued: &["-s", "-n"],
            rules: &[
                Rule {
                    all: &[&[Word("-1")]],
                    hit: hz("kill-all", "signals every process the user can reach"),
                    ..RULE
                },
                Rule {
                    sub: &["1"],
                    anywhere: true,
                    hit: hz(
                        "kill-all",
                        "signals init (PID 1): stops the machine or container",
                    ),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        Program {
            names: &["pkill"],
            rules: &[Rule {
                all: &[&[Word("-1")]],
                hit: hz("kill-all", "signals every process the user can reach"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["killall", "killall5"],
            rules: &[Rule {
                hit: hz("kill-all", "kills processes by name"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["rsync"],
            rules: &[Rule {
                all: &[&[
                    Flag("--del"),
                    Prefix("--delete"),
                    Flag("--remove-source-files"),
                    Flag("--remove-sent-files"),
                ]],
                none: &[Flag("-n"), Flag("--dry-run")],
                hit: hz(
                    "sync-delete",
                    "`rsync --delete` removes destination files missing from the source",
                ),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["crontab"],
            valued: &["-u"],
            rules: &[Rule {
                all: &[&[Flag("-r")]],
                hit: hz("remove-crontab", "`crontab -r` removes every cron job"),
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
    fn hazard_pack_core() {
        check(
            "core",
            &[
                "rm -rf ./build",
                "rm -r -f x",
                "rm --recursive --force x",
                "rm ./b -rf",
                "rm -f -R p",
                "/bin/rm -rf x",
                "rm.exe -rf build",
                "sudo rm -rf /opt/app",
                "find . -name '*.tmp' -delete",
                "chmod -R 777 .",
                "chown -R root /srv",
                "kill -9 -1",
                "kill -9 1",
                "kill -s KILL 1",
                "kill 1",
                "killall node",
                "rsync -a --delete src/ dst/",
                "rsync -a --del src/ dst/",
                "rsync -a --delete-after src/ dst/",
                "rsync -a --remove-source-files a/ b/",
                "crontab -r",
                "crontab -ri",
            ],
            &[
                "rm -r ./build",
                "rm -f ./file",
                "rm -rF ./build",
                "rm -- -rf",
                "rm -r -- -f",
                "find . -name '*.rs' -print",
                "chmod -R u+w src",
                "chmod 777 script.sh",
                "chown alice notes.txt",
                "kill 12345",
                "kill -9 12345",
                "kill -l",
                "kill -0 4242",
                "rsync -a src/ dst/",
                "rsync -n -a --delete src/ dst/",
                "rsync -avn --delete src/ dst/",
                "rsync --dry-run --delete -a src/ dst/",
                "rsync -a --delay-updates src/ dst/",
                "crontab -l",
                "echo 'rm -rf /'",
                "rm -rf x --help",
            ],
        );
    }
}
