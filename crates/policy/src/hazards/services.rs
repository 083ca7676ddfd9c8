//! Services and the machine: stopping, disabling or masking services,
//! shutting down or rebooting, run levels, process managers, firewalls
//! flushed or disabled, users deleted or locked, interfaces taken down,
//! kernel modules removed, journals vacuumed. `status`, `list-units`,
//! `is-active`, `journalctl -u` and listing rules do not ask.

use super::Opt::{Flag, Prefix, Word};
use super::{PROGRAM, Pack, Program, RULE, Rule, hz};

const LIFECYCLE: &str = "system-lifecycle";
const STOP: &str = "service-stop";

pub const PACK: Pack = Pack {
    name: "services",
    programs: &[
        Program {
            names: &["systemctl"],
            valued: &[
                "-H",
                "--host",
                "-M",
                "--machine",
                "-t",
                "--type",
                "-s",
                "--signal",
                "-p",
                "--property",
                "-n",
                "--lines",
                "-o",
                "--output",
                "--root",
                "--state",
                "--what",
            ],
            rules: &[
                Rule {
                    sub: &[
                        "reboot|poweroff|halt|kexec|suspend|hibernate|hybrid-sleep|emergency|rescue|soft-reboot|default|isolate",
                    ],
                    hit: hz(
                        LIFECYCLE,
                        "shuts down, restarts or changes the state of the machine",
                    ),
                    ..RULE
                },
                Rule {
                    sub: &["stop|disable|mask|kill"],
                    hit: hz(STOP, "stops, disables or masks a service"),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        Program {
            names: &["service", "rc-service"],
            rules: &[Rule {
                sub: &["*", "stop|zap"],
                hit: hz(STOP, "stops a service"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["shutdown"],
            rules: &[
                // `shutdown -c` cancels a pending shutdown.
                Rule {
                    all: &[&[Flag("-c")]],
                    ..RULE
                },
                Rule {
                    hit: hz(LIFECYCLE, "shuts down or restarts the machine"),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        Program {
            names: &[
                "reboot",
                "poweroff",
                "halt",
                "stop-computer",
                "restart-computer",
            ],
            rules: &[Rule {
                hit: hz(LIFECYCLE, "shuts down or restarts the machine"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["init", "telinit"],
            rules: &[Rule {
                sub: &["0|6|1|s"],
                hit: hz(LIFECYCLE, "changes the run level"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["launchctl"],
            rules: &[Rule {
                sub: &["unload|bootout|remove|disable|kill|reboot"],
                hit: hz(STOP, "unloads, removes or stops a launchd service"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["sv"],
            rules: &[Rule {
                sub: &["stop|down|kill|exit|force-stop|force-shutdown"],
                hit: hz(STOP, "stops a runit service"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["supervisorctl"],
            rules: &[Rule {
                sub: &["stop|remove|shutdown"],
                hit: hz(STOP, "stops or removes supervised programs"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["pm2"],
            rules: &[Rule {
                sub: &["delete|del|kill|stop"],
                hit: hz(STOP, "stops or deletes pm2 processes"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["iptables", "ip6tables", "iptables-nft", "iptables-legacy"],
            valued: &["-t", "--table"],
            rules: &[Rule {
                all: &[&[
                    Flag("-F"),
                    Flag("--flush"),
                    Flag("-X"),
                    Flag("--delete-chain"),
                    Flag("-P"),
                    Flag("--policy"),
                    Flag("-D"),
                    Flag("--delete"),
                ]],
                hit: hz(
                    "firewall-change",
                    "flushes, deletes or changes firewall rules and policies",
                ),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["nft"],
            rules: &[Rule {
                sub: &["flush|delete|destroy"],
                hit: hz("firewall-change", "flushes or deletes firewall rules"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["ufw"],
            rules: &[Rule {
                sub: &["disable|reset|delete"],
                hit: hz("firewall-change", "disables or resets the firewall"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["firewall-cmd"],
            rules: &[Rule {
                all: &[&[
                    Flag("--panic-on"),
                    Prefix("--remove-"),
                    Flag("--complete-reload"),
                ]],
                hit: hz(
                    "firewall-change",
                    "drops all traffic or removes firewall rules",
                ),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["userdel", "deluser", "groupdel", "delgroup"],
            rules: &[Rule {
                hit: hz("account-change", "deletes a user or group"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["passwd"],
            rules: &[Rule {
                all: &[&[
                    Flag("-d"),
                    Flag("--delete"),
                    Flag("-l"),
                    Flag("--lock"),
                    Flag("-e"),
                    Flag("--expire"),
                ]],
                hit: hz("account-change", "removes, locks or expires a password"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["usermod"],
            rules: &[Rule {
                all: &[&[Flag("-L"), Flag("--lock"), Flag("-e"), Flag("--expiredate")]],
                hit: hz("account-change", "locks or expires an account"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["ip"],
            rules: &[
                Rule {
                    sub: &["link|l|li|lin", "set|s|se"],
                    all: &[&[Word("down")]],
                    hit: hz("network-down", "takes a network interface down"),
                    ..RULE
                },
                Rule {
                    sub: &["addr|address|a|route|r", "flush|f|del|delete|d"],
                    hit: hz("network-down", "removes addresses or routes"),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        Program {
            names: &["ifconfig", "ifdown"],
            rules: &[Rule {
                sub: &["down"],
                anywhere: true,
                hit: hz("network-down", "takes a network interface down"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["nmcli"],
            rules: &[Rule {
                sub: &["networking|radio|n|r", "off"],
                hit: hz("network-down", "turns networking off"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["modprobe"],
            rules: &[Rule {
                all: &[&[Flag("-r"), Flag("--remove")]],
                hit: hz("kernel-module", "removes a kernel module"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["rmmod"],
            rules: &[Rule {
                hit: hz("kernel-module", "removes a kernel module"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["journalctl"],
            rules: &[Rule {
                all: &[&[Prefix("--vacuum")]],
                hit: hz(
                    "log-delete",
                    "`journalctl --vacuum-*` deletes journal files",
                ),
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
    fn hazard_pack_services() {
        check(
            "services",
            &[
                "systemctl stop nginx",
                "sudo systemctl stop docker",
                "systemctl disable --now nginx",
                "systemctl mask sshd",
                "systemctl kill nginx",
                "systemctl isolate rescue.target",
                "systemctl reboot",
                "systemctl --user stop pipewire",
                "systemctl -H prod stop app",
                "service nginx stop",
                "shutdown -h now",
                "shutdown -r +5",
                "sudo reboot",
                "poweroff",
                "init 0",
                "telinit 1",
                "launchctl bootout system/com.example.app",
                "supervisorctl stop all",
                "pm2 delete all",
                "iptables -F",
                "iptables -P INPUT DROP",
                "nft flush ruleset",
                "ufw disable",
                "ufw --force reset",
                "userdel -r alice",
                "passwd -d root",
                "usermod -L admin",
                "ip link set eth0 down",
                "ifconfig eth0 down",
                "nmcli networking off",
                "modprobe -r e1000e",
                "rmmod nvme",
                "journalctl --vacuum-time=1s",
                "shutdown.exe /s /t 0",
            ],
            &[
                "systemctl status nginx",
                "systemctl list-units --type=service",
                "systemctl is-active nginx",
                "systemctl cat nginx",
                "systemctl show nginx -p MainPID",
                "systemctl --user status pipewire",
                "systemctl restart nginx",
                "systemctl stop --help",
                "service --status-all",
                "service nginx status",
                "shutdown -c",
                "shutdown --help",
                "runlevel",
                "launchctl list",
                "pm2 list",
                "iptables -L -n -v",
                "iptables -S",
                "nft list ruleset",
                "ufw status verbose",
                "passwd",
                "ip addr",
                "ip link show",
                "ifconfig -a",
                "nmcli device status",
                "modprobe e1000e",
                "journalctl -u nginx",
                "journalctl -f",
                "qemu-system-x86_64 -no-reboot -no-shutdown",
            ],
        );
    }
}
