//! Windows programs called from WSL (`cmd.exe /c rd /s /q`, `powershell.exe
//! Remove-Item -Recurse`, `diskpart`, `vssadmin delete shadows` …). The
//! Windows spellings of the other packs' programs (`git.exe`, `rm.exe`,
//! `docker.exe`, `az.cmd`) need nothing here: names are looked up without
//! their `.exe`/`.cmd`/`.bat`/`.com` suffix.
//! `cmd` and PowerShell re-read their arguments as one command line, so
//! their words are split at blanks (`cmd.exe /C "rd /s /q x"`).

use super::Opt::Word;
use super::{PROGRAM, Pack, Program, RULE, Rule, hz};

const CODE: &str = "windows-destructive";

pub const PACK: Pack = Pack {
    name: "windows",
    programs: &[
        Program {
            names: &["cmd"],
            split: true,
            rules: &[
                Rule {
                    sub: &["rd|rmdir|del|erase"],
                    anywhere: true,
                    all: &[&[Word("/s")]],
                    hit: hz(CODE, "`rd /s`/`del /s` deletes a directory tree"),
                    ..RULE
                },
                Rule {
                    sub: &["format|diskpart|vssadmin|cipher"],
                    anywhere: true,
                    hit: hz(CODE, "formats or wipes a disk"),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        Program {
            names: &["powershell", "pwsh"],
            split: true,
            rules: &[
                Rule {
                    sub: &["remove-item|rm|ri|del|erase|rd|rmdir"],
                    anywhere: true,
                    all: &[&[Word("-recurse"), Word("-r")]],
                    hit: hz(CODE, "`Remove-Item -Recurse` deletes a directory tree"),
                    ..RULE
                },
                Rule {
                    sub: &[
                        "clear-disk|format-volume|initialize-disk|remove-partition|stop-computer|restart-computer|clear-recyclebin|remove-vm",
                    ],
                    anywhere: true,
                    hit: hz(CODE, "wipes disks or stops the machine"),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        Program {
            names: &["wsl"],
            rules: &[Rule {
                all: &[&[
                    super::Opt::Flag("--unregister"),
                    super::Opt::Flag("--shutdown"),
                    super::Opt::Flag("--terminate"),
                    super::Opt::Flag("-t"),
                ]],
                hit: hz(CODE, "unregisters (deletes) or stops WSL distributions"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["format", "diskpart"],
            rules: &[Rule {
                hit: hz("disk-tool", "formats or partitions a disk"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["vssadmin", "wmic"],
            rules: &[Rule {
                sub: &["delete|resize"],
                anywhere: true,
                hit: hz(CODE, "deletes shadow copies (the machine's restore points)"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["bcdedit"],
            rules: &[Rule {
                sub: &["/delete|/deletevalue|/set"],
                anywhere: true,
                hit: hz(CODE, "changes the boot configuration"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["reg"],
            rules: &[Rule {
                sub: &["delete|import|restore"],
                hit: hz(CODE, "deletes or overwrites registry keys"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["sc"],
            rules: &[Rule {
                sub: &["delete|stop"],
                anywhere: true,
                hit: hz(STOP_OR_DELETE, "stops or deletes a Windows service"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["net"],
            rules: &[
                Rule {
                    sub: &["stop"],
                    hit: hz(STOP_OR_DELETE, "stops a Windows service"),
                    ..RULE
                },
                Rule {
                    sub: &["/delete|/del"],
                    anywhere: true,
                    hit: hz(CODE, "deletes a user, share or mapping"),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        Program {
            names: &["taskkill"],
            rules: &[Rule {
                all: &[&[Word("/f")]],
                hit: hz("kill-all", "forcibly kills processes"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["cipher"],
            rules: &[Rule {
                sub: &["/w*"],
                anywhere: true,
                hit: hz(CODE, "`cipher /w` overwrites free space"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["robocopy"],
            rules: &[Rule {
                sub: &["/mir|/purge"],
                anywhere: true,
                none: &[Word("/l")],
                hit: hz(CODE, "`robocopy /MIR`/`/PURGE` deletes destination files"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["icacls"],
            rules: &[Rule {
                sub: &["/grant*|/reset|/setowner|/remove*|/deny"],
                anywhere: true,
                all: &[&[Word("/t")]],
                hit: hz("recursive-permission-change", "recursive permission change"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["takeown"],
            rules: &[Rule {
                all: &[&[Word("/r")]],
                hit: hz("recursive-permission-change", "recursive ownership change"),
                ..RULE
            }],
            ..PROGRAM
        },
    ],
};

const STOP_OR_DELETE: &str = "service-stop";

#[cfg(test)]
mod tests {
    use super::super::testing::check;

    #[test]
    fn hazard_pack_windows() {
        check(
            "windows",
            &[
                "cmd.exe /c rd /s /q C:\\\\build",
                "cmd.exe /c rmdir /s /q build",
                "cmd.exe /c del /s /q *.*",
                "cmd.exe /C \"rd /s /q node_modules\"",
                "cmd.exe /c format D: /q",
                "cmd /c erase /s /q build",
                "powershell.exe -Command \"Remove-Item -Recurse -Force build\"",
                "powershell.exe -c 'Remove-Item C:\\\\data -Recurse -Force'",
                "pwsh.exe -Command \"Remove-Item -Path dist -Recurse -Force\"",
                "powershell.exe -Command Clear-Disk -Number 1 -RemoveData",
                "powershell.exe Stop-Computer -Force",
                "wsl.exe --unregister Ubuntu",
                "wsl --unregister Debian",
                "diskpart.exe /s wipe.txt",
                "vssadmin.exe delete shadows /all /quiet",
                "wmic.exe shadowcopy delete",
                "bcdedit.exe /delete {current}",
                "reg.exe delete HKCU\\\\Software\\\\App /f",
                "sc.exe delete MyService",
                "net.exe stop Spooler",
                "net.exe user bob /delete",
                "taskkill.exe /F /IM node.exe",
                "cipher.exe /w:C:\\\\",
                "format.com D: /q",
                "robocopy.exe C:\\\\src D:\\\\dst /MIR",
                "robocopy.exe src dst /PURGE",
                "icacls.exe C:\\\\ /grant Everyone:F /T",
                "takeown.exe /f C:\\\\Windows /r",
            ],
            &[
                "cmd.exe /c dir",
                "cmd.exe /c echo hello",
                "cmd.exe /c del notes.txt",
                "cmd.exe /c rd /?",
                "powershell.exe -Command Get-ChildItem",
                "powershell.exe -Command Get-Disk",
                "powershell.exe -Command \"Remove-Item notes.txt\"",
                "wsl.exe --list --verbose",
                "wsl --status",
                "vssadmin.exe list shadows",
                "bcdedit.exe /enum",
                "reg.exe query HKCU\\\\Software\\\\App",
                "sc.exe query MyService",
                "net.exe view",
                "net.exe user",
                "tasklist.exe",
                "taskkill.exe /PID 4242",
                "cipher.exe /?",
                "robocopy.exe src dst /E",
                "robocopy.exe src dst /L /MIR",
                "icacls.exe README.md",
            ],
        );
    }
}
