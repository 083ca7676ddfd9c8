//! Containers: Docker, Podman, nerdctl, containerd, CRI, Buildah, LXD, Vagrant.
//! Forced removal, removal with volumes, every `prune`, `compose down -v`,
//! volume removal and `system reset` ask; listing, building, running,
//! stopping and a plain `rm` of a stopped container do not.

use super::Opt::{Flag, Prefix};
use super::{PROGRAM, Pack, Program, RULE, Rule, hz};

const CODE: &str = "container-delete";

/// Global options of docker and podman (and compose's) that take a value.
const VALUED: &[&str] = &[
    "-H",
    "--host",
    "-c",
    "--context",
    "--config",
    "-l",
    "--log-level",
    "--tlscacert",
    "--tlscert",
    "--tlskey",
    "--connection",
    "--url",
    "--root",
    "--runroot",
    "--storage-driver",
    "-f",
    "--file",
    "-p",
    "--project-name",
    "--project-directory",
    "--env-file",
    "--profile",
    "--ansi",
    "--parallel",
];

const FORCE_OR_VOLUMES: &[super::Opt] =
    &[Flag("-f"), Flag("--force"), Flag("-v"), Flag("--volumes")];

const COMPOSE: &[Rule] = &[
    Rule {
        sub: &["down"],
        all: &[&[Flag("-v"), Flag("--volumes"), Prefix("--rmi")]],
        hit: hz(
            CODE,
            "`compose down -v` deletes the project's volumes (or images)",
        ),
        ..RULE
    },
    Rule {
        sub: &["rm"],
        all: &[FORCE_OR_VOLUMES],
        hit: hz(CODE, "`compose rm -f` deletes the project's containers"),
        ..RULE
    },
];

pub const PACK: Pack = Pack {
    name: "containers",
    programs: &[
        Program {
            names: &["docker", "podman", "nerdctl"],
            valued: VALUED,
            rules: &[
                Rule {
                    sub: &["container", "rm|remove"],
                    all: &[&[
                        Flag("-f"),
                        Flag("--force"),
                        Flag("-v"),
                        Flag("--volumes"),
                        Flag("-a"),
                        Flag("--all"),
                    ]],
                    hit: hz(CODE, "forced removal of containers (or with their volumes)"),
                    ..RULE
                },
                Rule {
                    sub: &["rm"],
                    all: &[&[
                        Flag("-f"),
                        Flag("--force"),
                        Flag("-v"),
                        Flag("--volumes"),
                        Flag("-a"),
                        Flag("--all"),
                    ]],
                    hit: hz(CODE, "forced removal of containers (or with their volumes)"),
                    ..RULE
                },
                Rule {
                    sub: &["rmi"],
                    all: &[&[Flag("-f"), Flag("--force"), Flag("-a"), Flag("--all")]],
                    hit: hz(CODE, "forced removal of images"),
                    ..RULE
                },
                Rule {
                    sub: &["image", "rm|remove"],
                    all: &[&[Flag("-f"), Flag("--force"), Flag("-a"), Flag("--all")]],
                    hit: hz(CODE, "forced removal of images"),
                    ..RULE
                },
                Rule {
                    sub: &[
                        "system|volume|image|container|network|builder|buildx|pod",
                        "prune",
                    ],
                    hit: hz(
                        CODE,
                        "`prune` deletes every unused container, image, volume or network",
                    ),
                    ..RULE
                },
                Rule {
                    sub: &["system", "reset"],
                    hit: hz(
                        CODE,
                        "`system reset` deletes every container, image and volume",
                    ),
                    ..RULE
                },
                Rule {
                    sub: &["volume", "rm|remove"],
                    hit: hz(CODE, "deletes a volume and its data"),
                    ..RULE
                },
                Rule {
                    sub: &["pod", "rm|remove"],
                    all: &[FORCE_OR_VOLUMES],
                    hit: hz(CODE, "forced removal of a pod"),
                    ..RULE
                },
                Rule {
                    sub: &["compose", "down"],
                    all: &[&[Flag("-v"), Flag("--volumes"), Prefix("--rmi")]],
                    hit: hz(
                        CODE,
                        "`compose down -v` deletes the project's volumes (or images)",
                    ),
                    ..RULE
                },
                Rule {
                    sub: &["compose", "rm"],
                    all: &[FORCE_OR_VOLUMES],
                    hit: hz(CODE, "`compose rm -f` deletes the project's containers"),
                    ..RULE
                },
                Rule {
                    sub: &["stack|service|secret|config", "rm|remove"],
                    hit: hz(CODE, "removes a swarm stack, service, secret or config"),
                    ..RULE
                },
                Rule {
                    sub: &["swarm", "leave"],
                    all: &[&[Flag("-f"), Flag("--force")]],
                    hit: hz(CODE, "forces a manager out of the swarm"),
                    ..RULE
                },
                Rule {
                    sub: &["machine", "rm|remove|reset"],
                    hit: hz(CODE, "deletes a container machine"),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        Program {
            names: &["docker-compose", "podman-compose"],
            valued: VALUED,
            rules: COMPOSE,
            ..PROGRAM
        },
        Program {
            names: &["ctr"],
            valued: &["-n", "--namespace", "-a", "--address"],
            rules: &[Rule {
                sub: &[
                    "images|image|i|containers|container|c|snapshots|snapshot|content|namespaces|ns",
                    "rm|remove|delete|del",
                ],
                hit: hz(CODE, "`ctr … rm` deletes containerd images or containers"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["crictl"],
            rules: &[
                Rule {
                    sub: &["rmi"],
                    all: &[&[Flag("--prune"), Flag("-q"), Flag("-a"), Flag("--all")]],
                    hit: hz(CODE, "`crictl rmi --prune` deletes images"),
                    ..RULE
                },
                Rule {
                    sub: &["rm|rmp"],
                    all: &[&[Flag("-f"), Flag("--force"), Flag("-a"), Flag("--all")]],
                    hit: hz(CODE, "forced removal of CRI containers or pods"),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        Program {
            names: &["buildah"],
            rules: &[Rule {
                sub: &["rm|rmi"],
                all: &[&[
                    Flag("-a"),
                    Flag("--all"),
                    Flag("-f"),
                    Flag("--force"),
                    Flag("-p"),
                    Flag("--prune"),
                ]],
                hit: hz(CODE, "deletes every Buildah container or image"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["lxc", "incus"],
            rules: &[Rule {
                sub: &["delete|rm"],
                hit: hz(CODE, "deletes a system container or VM"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["vagrant"],
            rules: &[Rule {
                sub: &["destroy"],
                hit: hz(CODE, "`vagrant destroy` deletes the machine"),
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
    fn hazard_pack_containers() {
        check(
            "containers",
            &[
                "docker rm -f web",
                "docker rm -fv cache",
                "docker container rm -f web",
                "docker rmi -f nginx:latest",
                "docker image rm -f app:1",
                "docker system prune -af --volumes",
                "docker volume prune",
                "docker image prune -a",
                "docker network prune -f",
                "docker builder prune -a",
                "docker volume rm data",
                "docker compose down -v",
                "docker compose -f prod.yml down -v",
                "docker compose down --rmi all",
                "docker compose rm -sfv",
                "docker-compose down --volumes",
                "docker -H ssh://prod rm -f web",
                "docker --context prod system prune -af",
                "docker.exe system prune -af",
                "docker stack rm prod",
                "podman rm --all --force",
                "podman system reset",
                "podman pod rm -f mypod",
                "podman machine rm -f",
                "podman-compose down -v",
                "nerdctl rmi -f nginx",
                "ctr images rm docker.io/library/nginx:latest",
                "crictl rmi --prune",
                "buildah rm --all",
                "lxc delete web --force",
                "vagrant destroy -f",
            ],
            &[
                "docker ps",
                "docker ps -a",
                "docker images",
                "docker logs -f --tail 100 api",
                "docker inspect web",
                "docker rm web",
                "docker rmi nginx:old",
                "docker image rm app:0.9",
                "docker stop web",
                "docker volume ls",
                "docker volume inspect pgdata",
                "docker system df",
                "docker compose down",
                "docker compose ps",
                "docker-compose down",
                "docker system prune --help",
                "docker rm --help",
                "podman ps",
                "podman rm web",
                "nerdctl ps",
                "ctr images ls",
                "crictl ps",
                "lxc list",
                "vagrant status",
            ],
        );
    }
}
